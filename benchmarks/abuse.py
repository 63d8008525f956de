"""Can one user take memsite down? Replays the attacks of a hostile review against gunicorn on
this machine, started as production starts it (deploy/gunicorn.conf.py, else the Procfile), on
PostgreSQL and Redis, loopback only, each attack bounded in size and time:

1. validation errors: 0.9 MB, then 90,000 items, of bad `questions`, `tool_calls`, `references`,
   snapshot notes;
2. tar long names: a GNU `L` and a PAX header of 400 MiB in a ~400 KiB upload;
3. markdown: 200 KB of `[`, of `[^`, of `<div>`, and a list nested 300 deep, as pages and
   previews; and each rendered in-process by memory/rendering.py, in a child killed when late;
4. slow bodies: 40 logins that never send their body, held 15 s, to gunicorn and through nginx
   (deploy/nginx/default.conf.template, when it and /usr/sbin/nginx exist);
5. waiting: 6 searches with ?wait=30 and 6 chats to a model that takes 20 s, at once;
6. background work: one user queueing 300 searches at the largest budgets, and 100 from the
   dashboard;
7. the rate limiter: 24 clients of one user for 10 s against 120 requests an hour;
8. export: 6 exports at once of a 190 MiB project made from a ~190 KiB upload;
9. form bodies: an anonymous 31 MB login form of percent escapes and 8 at the form cap, to
   gunicorn and through nginx; a user's 12 live previews at the content cap and 12 at the
   preview's cap;
10. MCP bodies: 16 of 30 MiB at once to the MCP server, with a reader's token;
11. one busy user: 24 connections of one token asking for passages for 10 s;
and, in this process, a space's spent LLM budget and its backlog of 100, then 800, documents
waiting for descriptions, queued before another space's one (`--only queue`).

For each it prints the peak resident memory of any worker above its idle peak (sampled every
50 ms), the largest refused response, the statuses, and /healthz p50/p95 while it runs (probed
every 100 ms) beside the same server's idle figures, each against its target. Also written to
benchmarks/results/abuse-postgresql.md; exits 1 if a target is missed.

    python benchmarks/abuse.py
    python benchmarks/abuse.py --only 1,4 --skip-render      # some of the attacks

The database is created fresh and dropped at the end (--keep keeps it); its name must contain
'bench'. The Redis database must be empty and not 0; the run's keys are deleted at the end."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.kit.harness import above, run_on_services, services_parser

DEFAULT_DATABASE = "postgres://postgres@127.0.0.1:5432/memsite_abusebench"
DEFAULT_REDIS = "redis://127.0.0.1:6379/8"


def parse_args() -> argparse.Namespace:
    parser = services_parser(__doc__, database=DEFAULT_DATABASE, redis=DEFAULT_REDIS)
    parser.add_argument(
        "--only",
        type=lambda text: [key.strip() for key in text.split(",") if key.strip()],
        default=[],
        help="the attacks to run, by number or row (1,4b); default all",
    )
    parser.add_argument("--skip-render", action="store_true", help="leave out the in-process rendering table")
    parser.add_argument(
        "--render-timeout",
        type=above(0, at_most=600, unit="seconds"),
        default=10,
        help="seconds the renders of one document may take before they are stopped (default 10)",
    )
    parser.add_argument(
        "--idle-seconds",
        type=above(0, at_most=600, unit="seconds"),
        default=3,
        help="seconds each fresh server is watched idle before its attack (default 3)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    return parser.parse_args()


def main() -> None:
    run_on_services("abuse", parse_args(), {})


if __name__ == "__main__":
    main()
