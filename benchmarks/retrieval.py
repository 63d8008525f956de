"""Does memsite find what was said, where descriptions say nothing about content? Generates a
corpus nobody tuned for memsite (conversation sessions, notes, project files, and the search
benchmark's tree; benchmarks/corpora/retrievalcorpus.py) with questions whose evidence is known, and
measures, per kind of question:

- baselines in the same run: BM25 over whole documents at k=1, 3 and 5, and the tokens of one
  prompt holding every document;
- `POST /api/retrieve/`: evidence recall@1 and @5;
- the search (output=node and output=answer), on the offline provider and on a scripted oracle:
  evidence recall of the nodes it returns, nodes returned and the share of them the reading
  found (the rest the index), answers against the gold answer (containment, token F1), LLM
  calls and tokens per question;
- indexing throughput with the configured embeddings, and the retrieve latency over an index
  grown to --passages passages.

It prints the tables and the targets (also written to benchmarks/results/).

    python benchmarks/retrieval.py                                    # SQLite, 100,000 passages
    python benchmarks/retrieval.py --scale 3 --passages 0             # a larger corpus, no latency
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres python benchmarks/retrieval.py --passages 1_000_000

DATABASE_URL (or --database-url) selects PostgreSQL, else a throwaway SQLite. The benchmark
drops and recreates its database: a URL whose database name lacks 'bench' is used only for
its server, with a database named `memsite_retrieval_bench` beside it."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.kit.harness import RESULTS_DIR, above, at_least, publish, scratch_database, scratch_url, shown

SCRATCH_DATABASE = "memsite_retrieval_bench"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--scale",
        type=above(0, at_most=100),
        default=1.0,
        help="corpus size: 1 is ~60 sessions, ~40 notes and files, a 1,000-node tree, ~120 questions",
    )
    parser.add_argument(
        "--passages",
        type=at_least(0),
        default=100_000,
        help="grow the index to this many passages for the latency (default 100,000; 0: skip)",
    )
    parser.add_argument(
        "--database-url",
        default=os.environ.get("DATABASE_URL") or None,
        help="a postgres:// URL (default: DATABASE_URL; neither: SQLite)",
    )
    parser.add_argument("--seed", type=int, default=7, help="seed of the corpus and questions (default 7)")
    parser.add_argument("--skip-offline", action="store_true", help="leave out the offline provider's searches")
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    # The latency loop calls the API faster than a user's default rate allows.
    os.environ["MEMSITE_API_RATE"] = "1000000/min"
    url = scratch_url(args.database_url, SCRATCH_DATABASE)
    with scratch_database(url, keep=args.keep) as scratch:
        from benchmarks.measures import retrieval

        report, rows = retrieval.run(args, scratch)
    publish(report, f"retrieval-{scratch.vendor}")
    outcomes = RESULTS_DIR / f"retrieval-{scratch.vendor}-questions.jsonl"
    outcomes.write_text("".join(json.dumps(row) + "\n" for row in rows))
    print(f"Each question's outcome written to {shown(outcomes)}")


if __name__ == "__main__":
    main()
