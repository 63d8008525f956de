"""What does updating a project from an archive cost? Times an import into a new project, a
merge and a replace into a project that holds the archive already, and an export, against the
only way to update a project before import modes: delete it and import it again. Prints one
table (also written to benchmarks/results/).

    python benchmarks/archives.py                       # SQLite, 1,000 files of 2 KiB
    python benchmarks/archives.py --files 10000 --database-url postgres://postgres@127.0.0.1:5432/memsite_bench
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.kit.harness import at_least, publish, scratch_database


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=at_least(10), default=1_000, help="files in the archive (default 1,000)")
    parser.add_argument("--file-bytes", type=at_least(1), default=2_048, help="bytes a file (default 2,048)")
    parser.add_argument("--samples", type=at_least(2), default=5, help="samples per operation (default 5)")
    parser.add_argument("--database-url", help="a postgres:// URL whose database name contains 'bench'")
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    with scratch_database(args.database_url, keep=args.keep) as scratch:
        from benchmarks.measures import archives

        report = archives.run(args)
    publish(report, f"archives-{scratch.vendor}")


if __name__ == "__main__":
    main()
