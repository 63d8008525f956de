"""Does a reasoning graph keep a long trajectory's context under its budget? One synthetic agent
trajectory of 500 tool steps (an assistant turn calling a tool and the tool's result, about 600
tokens a step: some 300,000 tokens of raw turns) is fed step by step through
`services.graph_memorize` and `services.graph_work`, run synchronously in this process, with
the memory model answering through the real gateway. After every step it records the rebuilt
context's tokens against the raw history, the recalls that ran, the prompt tokens the memory
model was sent, and how long each patch took to apply; it prints the targets, a table per 100
steps and the timings (also written to benchmarks/results/).

    python benchmarks/graph.py                      # SQLite, the offline provider
    python benchmarks/graph.py --llm scripted       # a scripted memory model behind the fake server
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/memsite_graphbench python benchmarks/graph.py
    python benchmarks/graph.py --steps 100 --profile    # where the time goes

--llm offline (the default) is memsite's offline provider, whose MemoryPatch and
FlushAndFoldOp replies come from their `offline_reply`, given the graph's data as the prompt's
reading. --llm scripted
points the `openai` provider at the fake OpenAI-compatible server of the tests
(tests/fake_openai.py) in a process of its own, answering from what each prompt shows: a
subtask whenever the agent turns to a new lead, evidence under it, and at recall the finished
subtasks folded with their evidence into one summary, dead ends flushed.

DATABASE_URL (or --database-url) selects PostgreSQL, else a throwaway SQLite file. The
benchmark drops and recreates its database: a URL whose database name lacks 'bench' is used
only for its server, with a database named `memsite_graphbench` beside it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.kit.harness import add_database_url, at_least, publish, scratch_database, scratch_url

SCRATCH_DATABASE = "memsite_graphbench"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=at_least(1), default=500, help="tool steps of the trajectory (default 500)")
    parser.add_argument(
        "--step-tokens",
        type=at_least(100),
        default=600,
        help="average tokens of a step, call and result together (default 600)",
    )
    parser.add_argument(
        "--llm",
        choices=("offline", "scripted"),
        default="offline",
        help="the memory model: memsite's offline provider (default) or a scripted model "
        "behind the fake OpenAI-compatible server",
    )
    parser.add_argument(
        "--model",
        default="gpt-4o",
        help="the graph's model, whose window and encoding count the context (default gpt-4o: 128,000 tokens)",
    )
    parser.add_argument(
        "--trigger",
        type=at_least(1),
        default=None,
        help="the graph's trigger in tokens (default: graph_create's, "
        "MEMSITE_GRAPH_TRIGGER_TOKENS capped at half the window)",
    )
    parser.add_argument(
        "--target",
        type=at_least(1),
        default=None,
        help="the graph's target in tokens (default: graph_create's, 60%% of the trigger)",
    )
    parser.add_argument("--seed", type=int, default=4, help="seed of the trajectory (default 4)")
    add_database_url(parser)
    parser.add_argument(
        "--profile",
        action="store_true",
        help="run the steps under cProfile and print where the time went (timings inflated)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    with scratch_database(scratch_url(args.database_url, SCRATCH_DATABASE), keep=args.keep) as scratch:
        from benchmarks.measures import graph

        report = graph.run(args, scratch)
    publish(report, f"graph-{scratch.vendor}-{args.llm}")


if __name__ == "__main__":
    main()
