"""How fast is context assembly? One agent with 100,000 stored messages (user turns, assistant
replies, tool calls with their results, a few pinned messages; 20 to 400 tokens each) and a
model with a 128,000-token context. Times `agents.context.selectors.assembly.context_assemble` with every strategy
`agents.context.models.Strategy` offers, against a naive assembler in the same run that loads every
message and re-counts it with tiktoken, and prints one table (also written to
benchmarks/results/).

    python benchmarks/context.py                    # SQLite
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/memsite_contextbench python benchmarks/context.py
    python benchmarks/context.py --strategies importance --profile --explain   # where the time goes

DATABASE_URL (or --database-url) selects PostgreSQL, else a throwaway SQLite file. The
benchmark drops and recreates its database: a URL whose database name lacks 'bench' is used
only for its server, with a database named `memsite_contextbench` beside it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.kit.harness import add_database_url, at_least, publish, scratch_database, scratch_url

SCRATCH_DATABASE = "memsite_contextbench"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=at_least(10), default=100_000, help="stored messages (default 100,000)")
    parser.add_argument("--model", default="gpt-4o", help="the agent's model (default gpt-4o: 128,000 tokens)")
    parser.add_argument(
        "--strategies",
        type=lambda text: [part.strip() for part in text.split(",") if part.strip()],
        help="strategies to time, separated by commas (default: every one agents.context.models.Strategy has)",
    )
    parser.add_argument("--runs", type=at_least(1), default=200, help="timed assemblies per strategy (default 200)")
    parser.add_argument("--warmup", type=at_least(0), default=20, help="untimed assemblies first (default 20)")
    parser.add_argument(
        "--baseline-runs", type=at_least(1), default=5, help="timed naive assemblies (default 5, after one untimed)"
    )
    parser.add_argument(
        "--check",
        type=at_least(0),
        default=1_000,
        help="messages appended through message_append to check the bulk rows against (default 1,000)",
    )
    parser.add_argument("--seed", type=int, default=11, help="seed of the conversation (default 11)")
    add_database_url(parser)
    parser.add_argument(
        "--profile",
        action="store_true",
        help="cProfile each strategy over --runs assemblies (a separate, untimed pass)",
    )
    parser.add_argument("--explain", action="store_true", help="print the query plans of one assembly per strategy")
    parser.add_argument(
        "--no-gc-freeze",
        dest="gc_freeze",
        action="store_false",
        help="time without gc.freeze(), which memsite's web and worker processes call once "
        "loaded (memsite/wsgi.py, memsite/celery.py) and the benchmark calls too",
    )
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    with scratch_database(scratch_url(args.database_url, SCRATCH_DATABASE), keep=args.keep) as scratch:
        from benchmarks.measures import context

        report = context.run(args, scratch)
    publish(report, f"context-{scratch.vendor}{'' if args.gc_freeze else '-no-gc-freeze'}")


if __name__ == "__main__":
    main()
