"""What do spaces cost? The same API calls on the tree before spaces (the baseline revision,
`c5dcc8a` by default: the parent of the commit that added memsite/spaces/) and on this tree, in
one run: GET a node, GET its children, resolve a path, create a document, change a description
and retrieve passages, p50 and p95 of each; then the requests per second of a mixed read load
over a few keep-alive connections. Target: spaces at most 10 % slower.

    python benchmarks/spaces.py                        # 500 documents, 100 samples per operation
    python benchmarks/spaces.py --baseline <rev> --nodes 100 --samples 20 --load-seconds 1  # smoke test

The baseline is checked out with `git worktree add` into a temporary directory (removed at the
end). Each tree runs with this Python, on a scratch SQLite database of its own (WAL, as the
embedded default) under a temporary MEMSITE_VAR_DIR, served by gunicorn on 127.0.0.1 with the
same workers and threads. Everything after `migrate`, `collectstatic` and `createsuperuser` (and
making that user an owner of the default space, on the spaces tree only) goes over HTTP, as the
two trees' Python APIs differ: a session from the /login/ form, the same tree seeded over
POST /api/nodes/ with the same ids, then the timings, alternating between the two servers in
rounds so that other work on the machine hits both alike. The table is also written to
benchmarks/results/spaces-sqlite.md."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.kit.harness import above, at_least, publish
from benchmarks.measures.spaces import PER_FOLDER, run


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", default="c5dcc8a", help="the revision before spaces (default c5dcc8a)")
    parser.add_argument("--nodes", type=at_least(PER_FOLDER), default=500, help="documents seeded (default 500)")
    parser.add_argument("--samples", type=at_least(2), default=100, help="timed calls per operation (default 100)")
    parser.add_argument("--rounds", type=at_least(1), default=5, help="rounds the samples are split in (default 5)")
    parser.add_argument("--warmup", type=at_least(0), default=10, help="untimed calls per operation (default 10)")
    parser.add_argument(
        "--load-seconds",
        type=above(0, at_most=60, unit="seconds"),
        default=4,
        help="each load slot's seconds (default 4)",
    )
    parser.add_argument("--load-rounds", type=at_least(1), default=3, help="load slots per server (default 3)")
    parser.add_argument("--connections", type=at_least(1), default=4, help="keep-alive load connections (default 4)")
    parser.add_argument("--workers", type=at_least(1), default=2, help="gunicorn workers (default 2)")
    parser.add_argument("--threads", type=at_least(1), default=4, help="threads per worker (default 4)")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    load = os.getloadavg()[0]  # other work on the machine shows up in every number below
    publish(run(args, load), "spaces-sqlite")


if __name__ == "__main__":
    main()
