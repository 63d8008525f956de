"""What does a tick cost a brain at its caps? One agent whose brain holds every collection at
its cap (20,000 thoughts, 50,000 log lines, 10,000 explored paths and 10,000 URLs, 100,000
neurons, 500,000 synapses, ...) ticks on the offline LLM provider; each tick is timed without
the provider's own time, and its writes are counted: statements, rows and bytes. The baseline,
in the same run, is seed 002's save: the whole brain exported as memory.json (`brain_export`),
serialized, written and fsynced. Then a swarm: agents with brains ticked by real Celery worker
processes, several ticks queued at once per agent, checked afterwards from their tick runs: no
two runs of one agent overlap, every run wrote its episode, thought and log, none is left
running. Prints one report (also written to benchmarks/results/).

    python benchmarks/brain.py                       # SQLite, the filesystem broker
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/memsite_brainbench python benchmarks/brain.py \\
        --redis-url redis://127.0.0.1:6379/0
    python benchmarks/brain.py --fill 0.05 --ticks 20 --baseline-runs 1 --swarm-agents 10 \\
        --swarm-rounds 1   # smoke test

DATABASE_URL (or --database-url) selects PostgreSQL, else a throwaway SQLite file. The
benchmark drops and recreates its database: a URL whose database name lacks 'bench' is used
only for its server, with a database named `memsite_brainbench` beside it. --redis-url sends
the swarm's ticks through Redis (on a queue of the run's own) rather than kombu's filesystem
broker under the scratch directory."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.kit.harness import above, add_database_url, at_least, publish, scratch_database, scratch_url

SCRATCH_DATABASE = "memsite_brainbench"


fraction = above(0, at_most=1)


def fraction_or_zero(text: str) -> float:
    return 0.0 if text.strip() in ("0", "0.0") else fraction(text)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--fill",
        type=fraction,
        default=1.0,
        help="how full the measured brain is, as a fraction of every cap (default 1: at the caps)",
    )
    parser.add_argument("--ticks", type=at_least(1), default=100, help="timed ticks (default 100)")
    parser.add_argument("--warmup", type=at_least(0), default=10, help="untimed ticks first (default 10)")
    parser.add_argument(
        "--baseline-runs", type=at_least(1), default=3, help="timed whole-file saves (default 3, after one untimed)"
    )
    parser.add_argument(
        "--check",
        type=fraction_or_zero,
        default=0.01,
        help="how full a small memory.json is, as a fraction of every cap, imported through "
        "brain_import to check the bulk fill against (default 0.01; 0: no check)",
    )
    add_swarm_arguments(parser)
    parser.add_argument("--seed", type=int, default=2, help="seed of the generated brains (default 2)")
    add_database_url(parser)
    parser.add_argument(
        "--profile",
        action="store_true",
        help="cProfile --ticks more ticks (a separate, untimed pass) and print where the time goes",
    )
    parser.add_argument(
        "--no-gc-freeze",
        dest="gc_freeze",
        action="store_false",
        help="time without gc.freeze(), which memsite's worker processes call once loaded "
        "(memsite/celery.py) and the benchmark calls too",
    )
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    return parser.parse_args()


def add_swarm_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--swarm-agents", type=at_least(0), default=50, help="agents of the swarm (default 50; 0: no swarm)"
    )
    parser.add_argument(
        "--swarm-fill",
        type=fraction,
        default=0.01,
        help="how full each swarm agent's brain is, as a fraction of every cap (default 0.01)",
    )
    parser.add_argument(
        "--swarm-rounds", type=at_least(1), default=2, help="rounds of ticks queued for every swarm agent (default 2)"
    )
    parser.add_argument(
        "--swarm-burst",
        type=at_least(1),
        default=3,
        help="ticks queued back to back for an agent in each round (default 3)",
    )
    parser.add_argument("--workers", type=at_least(1), default=2, help="Celery worker processes (default 2)")
    parser.add_argument(
        "--swarm-timeout", type=at_least(10), default=600, help="seconds to wait for the swarm's ticks (default 600)"
    )
    parser.add_argument("--redis-url", help="broker for the swarm (default: kombu's filesystem broker)")


def main() -> None:
    args = parse_args()
    # Read by the settings at django.setup(), here and in the workers: ticks on the offline
    # provider (no LLM latency), and the broker the swarm goes through.
    os.environ["MEMSITE_LLM_PROVIDER"] = "offline"
    os.environ["REDIS_URL"] = args.redis_url or ""
    with scratch_database(scratch_url(args.database_url, SCRATCH_DATABASE), keep=args.keep) as scratch:
        from benchmarks.measures import brain

        report = brain.run(args, scratch)
    publish(report, f"brain-{scratch.vendor}{'' if args.gc_freeze else '-no-gc-freeze'}")


if __name__ == "__main__":
    main()
