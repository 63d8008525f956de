"""How fast is the memory tree? Builds a realistic tree through memory.services.node_bulk_create,
times the tree's reads and writes through memory.services and memory.selectors, times the same
operations on a plain adjacency-list table holding the same tree, times the children endpoint
over HTTP under gunicorn, and prints one table (also written to benchmarks/results/).

    python benchmarks/tree.py                                   # SQLite, 100,000 nodes
    python benchmarks/tree.py --database-url postgres://postgres@127.0.0.1:5432/memsite_bench

The scratch database is created fresh and dropped at the end (--keep keeps it)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.kit.harness import publish, scratch_database

DEFAULT_NODES = {"postgresql": 1_000_000, "sqlite": 100_000}


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, help="tree size (default 1,000,000 on PostgreSQL, 100,000 on SQLite)")
    parser.add_argument("--database-url", help="a postgres:// URL whose database name contains 'bench'")
    parser.add_argument("--samples", type=int, default=300, help="samples per read and create (default 300)")
    parser.add_argument("--moves", type=int, default=10, help="moves of the 10,001-node branch (default 10)")
    parser.add_argument("--deletes", type=int, default=100, help="301-node branches to delete (default 100)")
    parser.add_argument("--api-seconds", type=float, default=15, help="HTTP load duration (default 15)")
    parser.add_argument("--api-connections", type=int, default=16)
    parser.add_argument("--api-workers", type=int, default=(os.cpu_count() or 1) + 1, help="gunicorn workers")
    parser.add_argument("--api-threads", type=int, default=4, help="threads per gunicorn worker")
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    with scratch_database(args.database_url, keep=args.keep) as scratch:
        from benchmarks.measures import tree

        report = tree.run(args, scratch, default_nodes=DEFAULT_NODES[scratch.vendor])
    publish(report, f"tree-{scratch.vendor}")


if __name__ == "__main__":
    main()
