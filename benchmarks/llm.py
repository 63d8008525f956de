"""Benchmark of the LLM gateway (memsite/llm), run from the project root:

    .venv/bin/python benchmarks/llm.py [--calls 400]

Against the local fake OpenAI-compatible server (tests/fake_openai.py) with no delay, it times
a bare `openai` client call and a gateway call (`memsite.llm.complete`: the same request, plus
JSON parsing, pydantic validation, cost estimate and the ledger row) alternately in one run,
and reports p50/p95, the ratio and the milliseconds the gateway adds. Then token counting
throughput. The database is a throwaway SQLite file in WAL mode, as in the embedded default,
unless DATABASE_URL is set."""

import argparse
import os
import secrets
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.measures import llm


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=400, help="timed calls of each kind (default 400)")
    parser.add_argument("--warmup", type=int, default=40, help="untimed rounds first (default 40)")
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memsite.settings")
    os.environ.setdefault("MEMSITE_VAR_DIR", tempfile.mkdtemp(prefix="llm-bench-"))
    os.environ["MEMSITE_LOG_LEVEL"] = "WARNING"
    # As in production: DEBUG off, so Django does not keep a log of every query.
    os.environ.setdefault("DJANGO_DEBUG", "false")
    os.environ.setdefault("DJANGO_SECRET_KEY", secrets.token_urlsafe(50))  # production refuses a weak key
    llm.run(args)


if __name__ == "__main__":
    main()
