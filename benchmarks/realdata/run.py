"""Does memsite find what was said, on public data nobody here wrote? Loads BEAM, RealMem,
MADial-Bench (English), PrefEval (explicit preferences), CoSQA's retrieval split and HippoRAG's
HotpotQA and MuSiQue samples from their git mirrors (nothing of them is copied here), writes each
through the API as a swarm node would, and measures per set and category, the tuned part and an
untouched slice side by side: recall at 1, 5 and 10 at the set's unit and at the document, the
tokens retrieve returns and its latency, beside BM25 over units and over documents and dense
ranking by memsite's own model; then offline searches on a sample (docs/benchmarks.md).

    python benchmarks/realdata/run.py                                  # the default sets, SQLite
    python benchmarks/realdata/run.py --sets cosqa,hotpotqa --max-questions 30 --searches 10
    python benchmarks/realdata/run.py --sets beam-500k --max-questions 20

A set whose mirror (`<mirrors>/<owner>+<name>/repo`) is missing is skipped with a message."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.kit.harness import (
    REPO,
    RESULTS_DIR,
    add_database_url,
    at_least,
    command,
    database_version,
    machine,
    publish,
    scratch_database,
    scratch_url,
    shown,
)
from benchmarks.realdata.mirrors import MirrorMissing
from benchmarks.realdata.sets import BY_NAME, DEFAULT, SOURCES
from benchmarks.realdata.shape import Dataset, bounded

SCRATCH_DATABASE = "memsite_realdata_bench"
# Sized for ~20 minutes on two quiet cores with local embeddings: most of it embedding passages
# (CoSQA's 6,267 functions alone are some 39,000) and the dense baseline's units.
MAX_QUESTIONS = 60
SEARCHES = 20


def set_names(text: str) -> list[str]:
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in BY_NAME]
    if unknown or not names:
        known = ", ".join(source.name for source in SOURCES)
        raise argparse.ArgumentTypeError(f"unknown set(s) {', '.join(unknown) or '(none)'}; known: {known}")
    return names


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--sets", type=set_names, default=list(DEFAULT), help=f"comma-separated (default: {','.join(DEFAULT)})"
    )
    parser.add_argument(
        "--max-questions", type=at_least(1), default=MAX_QUESTIONS, help=f"per set (default {MAX_QUESTIONS})"
    )
    parser.add_argument(
        "--searches", type=at_least(0), default=SEARCHES, help=f"offline searches per set (default {SEARCHES})"
    )
    parser.add_argument(
        "--mirrors",
        type=Path,
        default=REPO.parent / ".mirror",
        help="the folder of the sets' git mirrors, <owner>+<name>/repo (default: <repo>/../.mirror)",
    )
    add_database_url(parser)
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    return parser.parse_args(argv)


def load(args: argparse.Namespace) -> tuple[list[Dataset], list[str]]:
    """The sets asked for, each cut to --max-questions; those whose mirror is missing, why."""
    datasets, skipped = [], []
    for name in args.sets:
        try:
            dataset = BY_NAME[name].load(args.mirrors)
        except MirrorMissing as exc:
            skipped.append(f"{name} ({exc})")
            print(f"Skipping {name}: {exc}.", file=sys.stderr)
            continue
        datasets.append(bounded(dataset, args.max_questions))
    return datasets, skipped


def main() -> None:
    args = parse_args()
    datasets, skipped = load(args)
    if not datasets:  # no mirror on this machine (CI has none): nothing to measure, no failure
        print("No set to run: " + "; ".join(skipped), file=sys.stderr)
        return
    os.environ.update(
        {
            "MEMSITE_API_RATE": "1000000/min",  # the benchmark calls faster than a user's default rate
            "MEMSITE_LLM_PROVIDER": "offline",  # searches on the offline provider, whatever is configured
            "MEMSITE_ARCHIVE_MAX_FILES": "20000",  # CoSQA's project holds 6,267 files
        }
    )
    load_average = os.getloadavg()[0]
    with scratch_database(scratch_url(args.database_url, SCRATCH_DATABASE), keep=args.keep) as scratch:
        from benchmarks.realdata import bench, report

        runs = bench.run_all(datasets, searches=args.searches)
        from django.conf import settings

        version = database_version(scratch.vendor)
        preamble = [
            f"{machine(load_average)}, {version}, embeddings {settings.MEMSITE_EMBEDDINGS}.",
            "",
            f"Command: `{command('realdata/run')}`",
        ]
        published = report.build(runs, title=f"Real public data on {version}", preamble=preamble, skipped=skipped)
        rows = report.question_rows(runs)
    publish(published, f"realdata-{scratch.vendor}")
    outcomes = RESULTS_DIR / f"realdata-{scratch.vendor}-questions.jsonl"
    outcomes.write_text("".join(json.dumps(row) + "\n" for row in rows))
    print(f"Each question's outcome written to {shown(outcomes)}")


if __name__ == "__main__":
    main()
