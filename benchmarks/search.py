"""How well does the LLM-routed search scale? Builds generated trees of each size (20–30
children a folder, readable names and descriptions), asks questions whose answers are known
documents, and measures:

- with a scripted oracle LLM that always routes right (the protocol's own cost): LLM calls and
  prompt tokens per search, and the service's own time per search without the LLM's;
- with the offline provider: the share of questions whose answer node is found;
- baselines in the same run: one prompt holding every description (tokens), and the full-text
  tool alone (time, share found).

It prints two tables and the targets (also written to benchmarks/results/).

    python benchmarks/search.py --sizes 1000,10000                   # SQLite
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres python benchmarks/search.py

DATABASE_URL (or --database-url) selects PostgreSQL, else a throwaway SQLite. The benchmark
drops and recreates its database: a URL whose database name lacks 'bench' is used only for
its server, with a database named `memsite_search_bench` beside it."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.kit.harness import RESULTS_DIR, publish, scratch_database, scratch_url

SCRATCH_DATABASE = "memsite_search_bench"


def sizes(text: str) -> list[int]:
    try:
        values = sorted({int(part.replace("_", "")) for part in text.split(",") if part.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError(f"sizes must be integers separated by commas, got {text!r}") from None
    if not values or values[0] < 2:
        raise argparse.ArgumentTypeError("sizes must be at least 2 nodes")
    return values


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--sizes",
        type=sizes,
        default=sizes("1000,10000,100000,1000000"),
        help="tree sizes in nodes (default 1000,10000,100000,1000000)",
    )
    parser.add_argument("--questions", type=int, default=100, help="questions per size (default 100)")
    parser.add_argument(
        "--database-url",
        default=os.environ.get("DATABASE_URL") or None,
        help="a postgres:// URL (default: DATABASE_URL; neither: SQLite)",
    )
    parser.add_argument("--seed", type=int, default=7, help="seed of the trees and questions (default 7)")
    parser.add_argument(
        "--plain-folders",
        action="store_true",
        help="folder descriptions without examples of their contents (default: with three)",
    )
    parser.add_argument("--skip-offline", action="store_true", help="leave out the offline provider's searches")
    parser.add_argument(
        "--profile",
        action="store_true",
        help="cProfile the oracle searches at the largest size (a separate, untimed pass)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    args = parser.parse_args()
    if args.questions < 1:
        parser.error("--questions must be at least 1")
    return args


def main() -> None:
    args = parse_args()
    url = scratch_url(args.database_url, SCRATCH_DATABASE)
    with scratch_database(url, keep=args.keep) as scratch:
        from benchmarks.measures import search

        RESULTS_DIR.mkdir(parents=True, exist_ok=True)
        report = search.run(args, scratch, results_dir=RESULTS_DIR)
    publish(report, f"search-{scratch.vendor}{'-plain-folders' if args.plain_folders else ''}")


if __name__ == "__main__":
    main()
