"""Does memsite hold up under load? gunicorn and two Celery worker processes on PostgreSQL and
Redis, with the LLM behind an OpenAI-compatible server of its own (the fake server of the tests,
answering with memsite's offline heuristics), all on loopback:

1. reads: 64 keep-alive connections for 60 s over the tree API (a folder's children, a node)
   and the dashboard's tree partial (`/memory/{id}/children/` as htmx asks for it, with a
   logged-in session);
2. mixed writes for 60 s: documents created through the API, searches started through the API
   and run by the workers against the LLM server, ticks requested through the API, with a few
   read connections going on;
3. the queue drained (bounded), then the rows counted: every 201 node exists once, every
   accepted search ended, every accepted tick made one tick run, nothing left running.

Prints throughput, p50/p95/p99 and errors per operation and the checks (also written to
benchmarks/results/load-postgresql.md).

    python benchmarks/load.py
    python benchmarks/load.py --database-url postgres://postgres@127.0.0.1:5432/memsite_loadbench \\
        --redis-url redis://127.0.0.1:6379/7
    python benchmarks/load.py --nodes 2000 --read-seconds 5 --mixed-seconds 5   # smoke test

The database is created fresh and dropped at the end (--keep keeps it); its name must contain
'bench'. The Redis database must be empty and not 0: the workers consume its default queue, and
the keys the run made are deleted at the end. MEMSITE_API_RATE is raised for the run (--api-rate):
its default, 1,200 requests a minute per user, is far below what a load test sends."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.kit.harness import at_least, run_on_services, services_parser

DEFAULT_DATABASE = "postgres://postgres@127.0.0.1:5432/memsite_loadbench"
DEFAULT_REDIS = "redis://127.0.0.1:6379/7"


def parse_args() -> argparse.Namespace:
    parser = services_parser(__doc__, database=DEFAULT_DATABASE, redis=DEFAULT_REDIS)
    parser.add_argument("--nodes", type=at_least(100), default=5_000, help="tree size (default 5,000)")
    parser.add_argument(
        "--users", type=at_least(1), default=8, help="users, each with a token and a session (default 8)"
    )
    parser.add_argument(
        "--agents", type=at_least(1), default=8, help="agents with brains; each ticks one tick at a time (default 8)"
    )
    parser.add_argument(
        "--brain-fill",
        type=float,
        default=0.01,
        help="how full each agent's brain is, as a fraction of every cap (default 0.01)",
    )
    parser.add_argument(
        "--api-rate", default="100000/min", help="MEMSITE_API_RATE for the run (default 100000/min per user)"
    )
    parser.add_argument("--web-workers", type=at_least(1), default=3, help="gunicorn workers (default 3)")
    parser.add_argument("--web-threads", type=at_least(1), default=4, help="threads per gunicorn worker (default 4)")
    parser.add_argument("--celery-workers", type=at_least(1), default=2, help="Celery worker processes (default 2)")
    parser.add_argument(
        "--celery-threads", type=at_least(1), default=4, help="threads of each Celery worker's pool (default 4)"
    )
    parser.add_argument(
        "--llm-delay", type=float, default=0.05, help="seconds the LLM server waits before each reply (default 0.05)"
    )
    add_phase_arguments(parser)
    parser.add_argument("--timeout", type=float, default=30, help="client timeout per request, seconds (default 30)")
    parser.add_argument("--seed", type=int, default=7, help="seed of the samples (default 7)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    return parser.parse_args()


def add_phase_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--read-seconds", type=float, default=60, help="phase 1 duration (default 60)")
    parser.add_argument("--read-connections", type=at_least(3), default=64, help="phase 1 connections (default 64)")
    parser.add_argument("--mixed-seconds", type=float, default=60, help="phase 2 duration (default 60)")
    parser.add_argument(
        "--create-connections",
        type=at_least(0),
        default=4,
        help="phase 2: connections creating documents back to back (default 4)",
    )
    parser.add_argument(
        "--search-clients",
        type=at_least(0),
        default=4,
        help="phase 2: clients each starting a search and polling it until it ends (default 4)",
    )
    parser.add_argument(
        "--search-calls", type=at_least(1), default=12, help="phase 2: max_llm_calls of each search (default 12)"
    )
    parser.add_argument(
        "--mixed-read-connections",
        type=at_least(0),
        default=8,
        help="phase 2: read connections going on meanwhile (default 8)",
    )
    parser.add_argument("--poll-interval", type=float, default=0.25, help="seconds between status polls (default 0.25)")
    parser.add_argument(
        "--drain-seconds",
        type=float,
        default=180,
        help="longest wait for the queued work to end after phase 2 (default 180)",
    )


def main() -> None:
    args = parse_args()
    run_on_services("load", args, {"MEMSITE_API_RATE": args.api_rate})


if __name__ == "__main__":
    main()
