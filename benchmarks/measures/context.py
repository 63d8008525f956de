"""What benchmarks/context.py measures: context assembly with every strategy over a long stored
conversation, against a naive assembler that loads and re-counts every message. Imported once
the script has set Django up on its scratch database."""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from agents.context import services
from agents.context.logic.instructions import instructions_render
from agents.context.logic.wire import wire_message, wire_tokens
from agents.context.models import Agent, Message, Role, Strategy
from agents.context.selectors.assembly import LONG_TERM_HEADING, WORKING_HEADING, context_assemble
from agents.context.services.checkpoints import MESSAGE_FIELDS
from benchmarks.corpora.prose import WORDS, prose
from benchmarks.kit.harness import (
    Report,
    Row,
    Scratch,
    Stats,
    command,
    database_version,
    machine,
    profiled,
    time_each,
)
from memory.services.nodes import insert_rows
from memsite.llm.config import llm_config
from memsite.llm.tokens import TOKENS_REPLY_PRIMING, TokenCounter, counter_for_model
from memsite.spaces.selectors import space_default

ASSEMBLY_TARGET_MS = 50
SPEEDUP_TARGET = 20
INSERT_BATCH = 10_000

INSTRUCTIONS = (
    "You are $name, one node of a research swarm. Your role: $role. Work from the memory you are "
    "given, cite message positions when you build on them, and call tools rather than guess. "
    "Answer in $language; keep replies short unless asked for detail."
)
VARIABLES = {"name": "falcon-7", "role": "triage incoming incidents and route them", "language": "English"}

TOOLS = ("search_memory", "read_node", "run_sql", "http_get", "list_children")


def run(args: argparse.Namespace, scratch: Scratch) -> Report:
    load = os.getloadavg()[0]  # other work on the machine shows up in every number below
    names = strategies(args.strategies)
    print(f"building {args.messages:,} messages", file=sys.stderr)
    conv = build(args)
    built = describe(conv)
    print(f"checking the first {args.check:,} against message_append", file=sys.stderr)
    checked = check_against_append(conv, args.check)
    agent, conversation_tokens = conv.agent, conv.built.conversation_tokens
    # The generated conversation is hundreds of thousands of Python objects that a server
    # process would not hold: every full garbage collection during the timings would walk them.
    del conv
    gc.collect()
    if args.gc_freeze:
        gc.freeze()
    working, long_term = caller_memory(args.seed)
    counter = counter_for_model(agent.model)

    def baseline() -> list[dict]:
        return naive_assemble(agent_id=agent.pk, model=agent.model, working_memory=working, long_term=long_term)

    def assembler(strategy: str) -> Callable[[], object]:
        return lambda: context_assemble(agent=agent, strategy=strategy, working_memory=working, long_term=long_term)

    naive = baseline()
    naive_tokens = billed(counter, naive)
    print(f"timing: baseline, {args.baseline_runs} runs", file=sys.stderr)
    baseline_stats, _ = measure(baseline, runs=args.baseline_runs, warmup=1)

    report = Report(title=f"Context assembly on {database_version(scratch.vendor)}, {args.messages:,} stored messages")
    notes = []
    for strategy in names:
        row, note = time_strategy(args, strategy, assembler(strategy), counter, baseline_stats)
        if row is not None:
            report.rows.append(row)
        notes.append(note)
    report.preamble = [
        f"{machine(load)}, {database_version(scratch.vendor)}.",
        "",
        built,
        "",
        checked,
        "",
        describe_model(agent, counter, working=len(working), long_term=len(long_term)),
        "",
        f"Command: `{command('context', args.database_url)}`",
    ]
    report.notes = [
        *notes,
        f"baseline: reads all {args.messages:,} rows (5 columns), re-counts every message with "
        f"`counter_for_model` ({conversation_tokens:,} tokens), keeps the pinned and the newest that "
        f"fit: {len(naive) - 3:,} stored messages, {naive_tokens:,} tokens. "
        f"{args.baseline_runs} timed runs after 1 untimed.",
        f"memsite: {args.runs} timed runs per strategy after {args.warmup} untimed"
        + (f"; `gc.freeze()` before timing ({gc.get_freeze_count():,} objects frozen)." if args.gc_freeze else "."),
        "ratio = baseline p50 / memsite p50: above 1 means memsite is faster. "
        f"Targets: p95 ≤ {ASSEMBLY_TARGET_MS} ms (set for PostgreSQL) and ≥ {SPEEDUP_TARGET}× the baseline.",
    ]
    return report


def time_strategy(
    args: argparse.Namespace, strategy: str, call: Callable[[], Any], counter: TokenCounter, baseline: Stats
) -> tuple[AssemblyRow | None, str]:
    """Time one strategy; its row, and a note on what it assembled (or why it was not timed)."""
    try:
        with CaptureQueriesContext(connection) as captured:
            result = call()
    except Exception as exc:  # a strategy in the making: report it and time the others
        return None, f"{strategy}: not timed, `context_assemble` raised {type(exc).__name__}: {exc}"
    print(f"timing: {strategy}, {args.warmup} + {args.runs} runs", file=sys.stderr)
    stats, collections = measure(call, runs=args.runs, warmup=args.warmup)
    row = AssemblyRow(operation=f"context_assemble, {strategy}", memsite=stats, baseline=baseline)
    assembled = result.report
    recount = billed(counter, result.messages)
    pinned = [entry for entry in assembled.included if entry.tier == "pinned"]
    history = [entry for entry in assembled.included if entry.tier == "short_term"]
    note = (
        f"{strategy}: {len(pinned)} pinned and {len(history):,} other stored messages"
        + (f" (positions {history[0].position:,} to {history[-1].position:,})" if history else "")
        + f", {assembled.total:,} of "
        f"{assembled.window:,} tokens (compacted: {assembled.compacted}); {len(captured.captured_queries)} "
        f"queries; re-counted from scratch {recount:,} tokens "
        f"{'✓' if recount == assembled.total else '✗ (differs from the report)'}; "
        f"{collections.count} full garbage collections in the timed runs"
        + (f", {collections.millis / collections.count:.0f} ms each" if collections.count else "")
    )
    if args.explain:
        print(f"\n=== query plans: {strategy} ===\n{explain(call)}", file=sys.stderr)
    if args.profile:
        _, profile = profiled(lambda: [call() for _ in range(args.runs)], tottime=15, cumulative=25)
        print(f"\n=== cProfile: {strategy}, {args.runs} runs ===\n{profile}", file=sys.stderr)
    return row, note


def describe_model(agent: Agent, counter: TokenCounter, *, working: int, long_term: int) -> str:
    info = llm_config().model_info(agent.model)
    return (
        f"Model `{agent.model}`: {info.context_window:,}-token context, {agent.reserved_output_tokens:,} "
        f"reserved for output, so a {info.context_window - agent.reserved_output_tokens:,}-token window "
        f"(compaction trigger {agent.compaction_trigger:.0%}, target {agent.compaction_target:.0%}; "
        f"sliding window {agent.window_turns} turns); encoding `{counter.encoding.name}`"
        f"{'' if counter.exact else ' (approximate for this model)'}. Each call passes "
        f"{working} working-memory blocks and {long_term} long-term items."
    )


# --- the conversation -------------------------------------------------------------------------


def tool_call(rng: random.Random, call_id: str) -> dict:
    name = rng.choice(TOOLS)
    if name in ("search_memory", "run_sql"):
        arguments = {"query": prose(rng, rng.randint(4, 14)), "limit": rng.choice((5, 10, 20))}
    elif name == "http_get":
        arguments = {"url": f"https://status.example.org/api/v2/incidents/{rng.randint(1, 99_999)}"}
    else:
        arguments = {"node_id": f"memory_{rng.getrandbits(128):032x}"}
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def tool_result(rng: random.Random) -> str:
    if rng.random() < 0.4:
        return prose(rng, int(rng.triangular(15, 330, 60)))
    records = [
        {
            "id": f"memory_{rng.getrandbits(128):032x}",
            "name": "-".join(rng.choices(WORDS, k=3)) + ".md",
            "score": round(rng.random(), 3),
            "snippet": prose(rng, rng.randint(8, 40)),
        }
        for _ in range(rng.randint(1, 4))
    ]
    return json.dumps({"results": records, "truncated": rng.random() < 0.2})


def _extras(rng: random.Random, position: int) -> dict:
    references = []
    if position > 1 and rng.random() < 0.1:
        low = max(1, position - 300)
        references = sorted(set(rng.sample(range(low, position), k=min(position - low, rng.randint(1, 3)))))
    return {"importance": round(rng.betavariate(2, 3), 2), "references": references}


def conversation(count: int, seed: int) -> list[dict]:
    """`count` messages as `message_append`'s keyword arguments: about 35% user turns, 39%
    assistant replies, 9% assistant tool calls (one to three) each followed by its results
    (16%), 1% system notes; the first message and about one in 10,000 others pinned."""
    rng = random.Random(seed)
    specs: list[dict] = [
        {"role": Role.SYSTEM, "content": prose(rng, 160), "pinned": True, "importance": 1.0, "sender": "operator"}
    ]
    calls = 0
    while len(specs) < count:
        position, left, kind = len(specs) + 1, count - len(specs), rng.random()
        if kind < 0.11 and left >= 2:
            ids = []
            for _ in range(min(left - 1, rng.choice((1, 1, 1, 2, 2, 3)))):
                calls += 1
                ids.append(f"call_{calls:06d}")
            content = prose(rng, rng.randint(10, 40)) if rng.random() < 0.3 else ""
            specs.append(
                {
                    "role": Role.ASSISTANT,
                    "content": content,
                    "tool_calls": [tool_call(rng, call_id) for call_id in ids],
                    **_extras(rng, position),
                }
            )
            for call_id in ids:
                specs.append(
                    {"role": Role.TOOL, "content": tool_result(rng), "tool_call_id": call_id, **_extras(rng, position)}
                )
            continue
        if kind < 0.52:
            role, words = Role.USER, int(rng.triangular(14, 150, 35))
        elif kind < 0.985:
            role, words = Role.ASSISTANT, int(rng.triangular(14, 320, 90))
        else:
            role, words = Role.SYSTEM, rng.randint(14, 60)
        spec = {"role": role, "content": prose(rng, words), **_extras(rng, position)}
        if rng.random() < 1e-4:
            spec["pinned"] = True
        if role == Role.USER:
            spec["sender"] = rng.choice(("operator", "planner", "falcon-3"))
        specs.append(spec)
    return specs


# --- the rows message_append would write ------------------------------------------------------

COLUMNS = ("agent", *MESSAGE_FIELDS)  # what a checkpoint keeps of a message, and whose it is
COMPARED = tuple(column for column in COLUMNS if column not in ("agent", "created_at"))


@dataclass
class Built:
    rows: list[tuple]
    message_count: int
    conversation_tokens: int
    history_tokens: int
    pending_tool_calls: list[dict]

    @property
    def counters(self) -> tuple:
        return self.message_count, self.conversation_tokens, self.history_tokens, self.pending_tool_calls


def rows_for(specs: Sequence[dict], *, agent_id: int, counter: TokenCounter) -> Built:
    """What `message_append` writes for each spec, appended in order to an empty conversation,
    and the agent's counters afterwards: the count made the same way (`agents.wire`), each
    unpinned message's offset the unpinned tokens before it, a result's tool name its call's."""
    started = timezone.now()
    rows = []
    conversation_tokens = history_tokens = 0
    pending: list[dict] = []
    for position, spec in enumerate(specs, 1):
        role, content = str(spec["role"]), spec.get("content", "")
        calls, call_id = spec.get("tool_calls", []), spec.get("tool_call_id", "")
        tool_name = ""
        if role == Role.TOOL:
            call = next(call for call in pending if call["id"] == call_id)
            tool_name = call["name"]
            pending = [other for other in pending if other is not call]
        else:
            pending = [{"id": call["id"], "name": call["function"]["name"]} for call in calls]
        tokens = wire_tokens(counter, wire_message(role=role, content=content, tool_calls=calls, tool_call_id=call_id))
        pinned = spec.get("pinned", False)
        created_at = connection.ops.adapt_datetimefield_value(started + timedelta(milliseconds=position))
        rows.append(
            (
                agent_id,
                position,
                role,
                content,
                "[]",  # a message of this conversation is sent as a string, never as parts
                "",
                "",
                "{}",
                "{}",
                json.dumps(calls),
                "[]",
                call_id,
                tool_name,
                spec.get("sender", ""),
                pinned,
                float(spec.get("importance", 0.5)),
                json.dumps(spec.get("references", [])),
                tokens,
                counter.encoding.name,
                counter.approximate,
                history_tokens,
                created_at,
                "{}",  # data: set on chat lines only
            )
        )
        conversation_tokens += tokens
        if not pinned:
            history_tokens += tokens
    return Built(rows, len(rows), conversation_tokens, history_tokens, pending)


@dataclass(frozen=True)
class Conversation:
    agent: Agent
    specs: list[dict]
    built: Built
    count_seconds: float
    insert_seconds: float


def build(args: argparse.Namespace) -> Conversation:
    specs = conversation(args.messages, args.seed)
    agent = services.agent_create(
        space=space_default(),
        name="context-bench",
        model=args.model,
        instructions=INSTRUCTIONS,
        context_variables=VARIABLES,
    )
    started = time.perf_counter()
    built = rows_for(specs, agent_id=agent.pk, counter=counter_for_model(args.model))
    counted = time.perf_counter()
    with transaction.atomic():
        for start in range(0, len(built.rows), INSERT_BATCH):
            insert_rows(Message, COLUMNS, built.rows[start : start + INSERT_BATCH])
        Agent.objects.filter(pk=agent.pk).update(
            message_count=built.message_count,
            conversation_tokens=built.conversation_tokens,
            history_tokens=built.history_tokens,
            pending_tool_calls=built.pending_tool_calls,
        )
    inserted = time.perf_counter()
    if connection.vendor == "postgresql":
        # What autovacuum does soon after a bulk load: planner statistics and the visibility map.
        with connection.cursor() as cursor:
            for table in (Message._meta.db_table, Agent._meta.db_table):
                cursor.execute(f"VACUUM ANALYZE {table}")
    agent.refresh_from_db()
    return Conversation(agent, specs, built, counted - started, inserted - counted)


def check_against_append(conv: Conversation, count: int) -> str:
    """Appends the first `count` specs through `message_append` to a second agent and compares
    its rows (every column but ids and times) with the bulk rows, and its counters with what
    `rows_for` computes for that prefix. Raises if anything differs."""
    sample = conv.specs[:count]
    if not sample:
        return "Not checked against `message_append` (--check 0)."
    agent = services.agent_create(space=space_default(), name="context-bench-check", model=conv.agent.model)
    for spec in sample:
        services.message_append(agent=agent, **spec)
    appended = list(Message.objects.filter(agent=agent).order_by("position").values_list(*COMPARED))
    bulk = list(
        Message.objects.filter(agent=conv.agent, position__lte=len(sample)).order_by("position").values_list(*COMPARED)
    )
    agent.refresh_from_db()
    counters = (agent.message_count, agent.conversation_tokens, agent.history_tokens, agent.pending_tool_calls)
    expected = rows_for(sample, agent_id=agent.pk, counter=counter_for_model(agent.model)).counters
    Agent.objects.filter(pk=agent.pk).delete()
    differing = [index for index, (one, other) in enumerate(zip(appended, bulk, strict=False)) if one != other]
    if len(appended) != len(bulk) or differing:
        raise SystemExit(f"Bulk rows differ from message_append's at positions {[i + 1 for i in differing[:10]]}.")
    if counters != expected:
        raise SystemExit(f"Agent counters differ: message_append {counters}, bulk {expected}.")
    roles = Counter(row[COMPARED.index("role")] for row in appended)
    return (
        f"Check: the first {len(sample):,} messages ({', '.join(f'{n} {r}' for r, n in roles.most_common())}) "
        "appended through `message_append` to a second agent equal the bulk rows in every column but "
        "ids and times, and its counters (message_count, conversation_tokens, history_tokens, "
        "pending_tool_calls) equal the bulk computation's: ✓"
    )


# --- caller-provided memory -------------------------------------------------------------------


def caller_memory(seed: int) -> tuple[list[str], list[str]]:
    """What a tick passes: three working-memory blocks and eight long-term items."""
    rng = random.Random(seed + 1)
    working = [
        f"Goal: {prose(rng, 25)}",
        f"Current plan step: {prose(rng, 30)}",
        f"Reasoning graph summary: {prose(rng, 60)}",
    ]
    long_term = [f"Fact {index}: {prose(rng, rng.randint(40, 120))}" for index in range(1, 9)]
    return working, long_term


# --- the baseline -----------------------------------------------------------------------------


def naive_assemble(*, agent_id: int, model: str, working_memory: Sequence[str], long_term: Sequence[str]) -> list[dict]:
    """What an assembler without stored counts does: load every message of the agent, count
    each with tiktoken (the same counter and wire form as memsite), keep the pinned ones and the
    newest others that fit, and drop a tool result whose call was cut."""
    agent = Agent.objects.get(pk=agent_id)
    counter = counter_for_model(model)
    window = llm_config().model_info(model).context_window - agent.reserved_output_tokens
    head = [
        wire_message(
            role=Role.SYSTEM,
            content=instructions_render(template=agent.instructions, variables=agent.context_variables),
        ),
        wire_message(role=Role.SYSTEM, content="\n\n".join([WORKING_HEADING, *working_memory])),
        wire_message(role=Role.SYSTEM, content="\n\n".join([LONG_TERM_HEADING, *long_term])),
    ]
    room = window - TOKENS_REPLY_PRIMING - sum(wire_tokens(counter, message) for message in head)
    rows = (
        Message.objects.filter(agent_id=agent_id)
        .order_by("position")
        .values_list("role", "content", "tool_calls", "tool_call_id", "pinned")
    )
    stored = [
        (wire_message(role=role, content=content, tool_calls=calls, tool_call_id=call_id), pinned)
        for role, content, calls, call_id, pinned in rows
    ]
    costs = [wire_tokens(counter, message) for message, _ in stored]
    room -= sum(cost for (_, pinned), cost in zip(stored, costs, strict=True) if pinned)
    start = len(stored)
    for index in range(len(stored) - 1, -1, -1):
        if stored[index][1]:
            continue
        if costs[index] > room:
            break
        room -= costs[index]
        start = index
    while start < len(stored) and stored[start][0]["role"] == Role.TOOL:
        start += 1
    return [*head, *(message for index, (message, pinned) in enumerate(stored) if pinned or index >= start)]


# --- measuring --------------------------------------------------------------------------------


def billed(counter: TokenCounter, messages: Sequence[dict]) -> int:
    """What the chat API would bill for `messages`, counted from scratch."""
    countable = [
        {**message, "tool_calls": json.dumps(message["tool_calls"], ensure_ascii=False, separators=(",", ":"))}
        if "tool_calls" in message
        else message
        for message in messages
    ]
    return counter.count_messages(countable)


@dataclass
class AssemblyRow(Row):
    """Two targets: p95 and the speed-up over the baseline (baseline p50 / assembler p50)."""

    @property
    def verdict(self) -> str:
        fast = self.memsite.p95 <= ASSEMBLY_TARGET_MS
        ahead = self.speedup >= SPEEDUP_TARGET
        return f"p95 ≤ {ASSEMBLY_TARGET_MS} ms {'✓' if fast else '✗'}, ≥ {SPEEDUP_TARGET}× {'✓' if ahead else '✗'}"


def strategies(chosen: Sequence[str] | None) -> list[str]:
    """The strategies to time: every one `Strategy` has (so one added later is measured without
    a change here), or those asked for."""
    if not chosen:
        return list(Strategy.values)
    unknown = [name for name in chosen if name not in Strategy.values]
    if unknown:
        raise SystemExit(f"Unknown strategies {unknown}; agents.context.models.Strategy has {Strategy.values}.")
    return list(chosen)


@dataclass
class Collections:
    """Full (generation 2) garbage collections while timing, and the milliseconds they took."""

    count: int = 0
    millis: float = 0.0

    def __post_init__(self) -> None:
        self._started = 0.0

    def __call__(self, phase: str, info: dict) -> None:
        if info["generation"] != 2:
            return
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.count += 1
            self.millis += (time.perf_counter() - self._started) * 1000


def measure(call: Callable[[], object], *, runs: int, warmup: int) -> tuple[Stats, Collections]:
    for _ in range(warmup):
        call()
    collections = Collections()
    gc.callbacks.append(collections)
    try:
        return time_each(lambda _: call(), [None] * runs), collections
    finally:
        gc.callbacks.remove(collections)


def explain(call: Callable[[], object]) -> str:
    with CaptureQueriesContext(connection) as captured:
        call()
    prefix = "EXPLAIN (ANALYZE, BUFFERS) " if connection.vendor == "postgresql" else "EXPLAIN QUERY PLAN "
    lines = []
    with connection.cursor() as cursor:
        for query in captured.captured_queries:
            cursor.execute(prefix + query["sql"])
            plan = "\n".join("    " + " ".join(str(cell) for cell in row) for row in cursor.fetchall())
            lines.append(f"  {query['sql'][:400]}\n{plan}")
    return "\n".join(lines)


def describe(conv: Conversation) -> str:
    rows = conv.built.rows
    role, calls, pinned, tokens = (COLUMNS.index(name) for name in ("role", "tool_calls", "pinned", "token_count"))
    roles = Counter(row[role] for row in rows)
    callers = sum(1 for row in rows if row[calls] != "[]")
    counts = sorted(row[tokens] for row in rows)
    cuts = statistics.quantiles(counts, n=100, method="inclusive")
    total = conv.built.conversation_tokens
    return (
        f"{len(rows):,} messages: {roles[Role.USER]:,} user, {roles[Role.ASSISTANT] - callers:,} assistant replies, "
        f"{callers:,} assistant tool calls answered by {roles[Role.TOOL]:,} tool results, "
        f"{roles[Role.SYSTEM]:,} system; {sum(1 for row in rows if row[pinned])} pinned. "
        f"Tokens a message: p5 {cuts[4]:.0f}, p50 {cuts[49]:.0f}, p95 {cuts[94]:.0f}, max {counts[-1]}; "
        f"{total:,} in all. Counted with `agents.wire` in {conv.count_seconds:.1f} s "
        f"({total / conv.count_seconds / 1e6:.1f} M tokens/s), inserted in {conv.insert_seconds:.1f} s."
    )
