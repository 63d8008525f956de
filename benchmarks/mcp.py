"""What do MCP and the Python client add to a call? The same calls over the REST API (gunicorn),
over the MCP server (`manage.py mcp_serve`, uvicorn) and through `memsite_client` in one run, on
one scratch database: memory_read through the API's tool endpoint and through MCP's tools/call,
memory_retrieve as POST /api/retrieve/, through MCP and through the client, and a node's GET
through the client; p50 and p95 of each. Targets: each at most 1.5 times the bare REST call, and
at most 5 ms more, at p50.

    python benchmarks/mcp.py                              # 300 documents, 300 samples per call
    python benchmarks/mcp.py --documents 50 --samples 20  # smoke test

Both servers run this tree with this Python on 127.0.0.1, DEBUG off, the offline LLM, and an
editor's API token; each call is timed from its request to the end of its answer, over one
keep-alive connection per server, in rounds that alternate which server goes first. Every answer
is checked (its status, and that MCP's is no tool error; the client raises on any refusal). The
tables are also written to benchmarks/results/mcp-<database>.md."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.kit.harness import add_database_url, at_least, publish, scratch_database


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--documents", type=at_least(1), default=300, help="documents seeded (default 300)")
    parser.add_argument("--samples", type=at_least(2), default=300, help="timed calls per call and server")
    parser.add_argument("--rounds", type=at_least(1), default=10, help="rounds the samples are split in (default 10)")
    parser.add_argument("--warmup", type=at_least(0), default=20, help="untimed calls per call and server")
    parser.add_argument("--threads", type=at_least(1), default=4, help="gunicorn's threads, and the MCP server's")
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    add_database_url(parser)
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    load = os.getloadavg()[0]  # other work on the machine shows up in every number below
    os.environ["MEMSITE_LLM_PROVIDER"] = "offline"
    # The run's requests, not the rate limit, are timed; the servers see this too.
    os.environ["MEMSITE_API_RATE"] = "1000000/min"
    os.environ["MEMSITE_MCP_THREADS"] = str(args.threads)
    with scratch_database(args.database_url, keep=args.keep) as scratch:
        from benchmarks.measures import mcp

        report = mcp.run(args, scratch, load)
    publish(report, f"mcp-{scratch.vendor}")


if __name__ == "__main__":
    main()
