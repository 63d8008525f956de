"""What benchmarks/graph.py measures: a reasoning graph fed a long synthetic trajectory step by
step, its rebuilt context's tokens against the raw history, its recalls, the memory model's
prompt tokens and each patch's time. Imported once the script has set Django up."""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import re
import sys
import time
import traceback
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import pairwise

from django.conf import settings
from django.db.models import Max, Sum
from django.test.utils import override_settings

import agents.graphs.services.graphs as graph_services
from agents.context.logic.wire import wire_tokens
from agents.graphs import selectors, services
from agents.graphs.models import Graph, GraphNode, GraphOp, Turn
from benchmarks.corpora.prose import prose
from benchmarks.kit.harness import (
    Report,
    Row,
    Scratch,
    Stats,
    Table,
    command,
    database_version,
    fake_llm,
    machine,
    percentiles,
    profiled,
)
from memsite.llm.config import llm_config
from memsite.llm.models import LLMCall
from memsite.llm.purposes import Purpose
from memsite.llm.tokens import counter_for_model
from memsite.spaces.principals import system_principal

PATCH_TARGET_MS = 20
RECALLS_PER_100_TARGET = 5  # at most one recall per 20 steps
WINDOW = 100  # steps per row of the table
TASK = (
    "Incident 4711: checkout latency p95 rose from 180 ms to 2.4 s after Tuesday's deploy. Find the cause, "
    "confirm it with evidence from logs, traces and metrics, and propose a fix with a rollback plan."
)
COMPONENTS = (
    "payments",
    "checkout",
    "inventory",
    "pricing",
    "sessions",
    "search",
    "cart",
    "shipping",
    "auth",
    "ledger",
    "notifications",
    "recommendations",
)
LEADS = (
    "compare the deploy diff of the {c} service",
    "read the slow-query log of the {c} database",
    "trace a slow checkout through the {c} service",
    "check the connection pool metrics of {c}",
    "look for retries and timeouts between checkout and {c}",
    "check the cache hit rate in front of {c}",
    "read the error logs of {c} around the deploy",
    "check the feature flags changed for {c} on Tuesday",
)
TOOLS = ("search_logs", "query_metrics", "get_trace", "run_sql", "read_file", "http_get")
DEAD_ENDS = (
    "ERROR: the query timed out after 30 s; no rows returned.",
    "No results for this query in the selected time range.",
    "ERROR 403: the dashboard requires a token this agent does not hold.",
)


# --- the run ----------------------------------------------------------------------------------


def run(args: argparse.Namespace, scratch: Scratch) -> Report:
    load = os.getloadavg()[0]  # other work on the machine shows up in every number below
    steps = trajectory(args.steps, args.step_tokens, args.seed)
    counter = counter_for_model(args.model)
    step_tokens = [sum(wire_tokens(counter, message) for message in step.messages) for step in steps]
    version = database_version(scratch.vendor)
    walk = walk_steps(args, steps)
    graph, records = walk.graph, walk.records
    report = Report(title=f"Reasoning graph on {version}, {len(records)} steps, {args.llm} memory model")
    step_p50, step_p95 = percentiles(step_tokens, 50, 95)
    report.preamble = [
        f"{machine(load)}, {version}.",
        "",
        f"Trajectory: {len(records)} tool steps ({sum(step.new_lead for step in steps)} leads, "
        f"{sum(step.dead_end for step in steps)} dead ends), {2 * len(records):,} turns, "
        f"{sum(step_tokens):,} tokens of raw turns (a step p50 {step_p50:,.0f}, "
        f"p95 {step_p95:,.0f}); each step one `graph_memorize` of the assistant's call "
        f"and the tool's result, then `graph_work` in this process.",
        "",
        f"Graph: model `{graph.model}` ({walk.window:,}-token window, encoding "
        f"`{counter.encoding.name}`{'' if counter.exact else ', approximate for this model'}), trigger "
        f"{graph.trigger_tokens:,}, target {graph.target_tokens:,}, at most {graph.max_recalls} recalls "
        f"in a row, first {graph.protected_head} and last {graph.protected_tail} turns always sent. "
        f"Memory model: {walk.described}; model `{walk.memorize_model}`, the graph shown in at most "
        f"{walk.prompt_budget:,} tokens (MEMSITE_GRAPH_PROMPT_TOKENS).",
        "",
        f"Command: `{command('graph', args.database_url)}`",
        "",
        *targets_table(walk).padded_markdown(),
        "",
        *windows_table(records).padded_markdown(),
    ]
    report.rows = [
        Row(
            operation="patch apply (`_apply_patch`)",
            memsite=Stats.of(walk.patch_ms),
            target=f"p95 ≤ {PATCH_TARGET_MS} ms",
            target_ms=PATCH_TARGET_MS,
        ),
        Row(operation="recall apply (`_apply_recall`)", memsite=Stats.of(walk.recall_ms or [0.0])),
        Row(operation="step: graph_memorize + graph_work", memsite=Stats.of([record.step_ms for record in records])),
        Row(operation="graph_context after the step", memsite=Stats.of([record.context_ms for record in records])),
    ]
    report.notes = notes(walk, sum(step_tokens))
    return report


@dataclass
class Walk:
    """The graph after the steps, what was recorded after each, and how it was configured."""

    graph: Graph
    records: list[StepRecord]
    patch_ms: list[float]  # each `_apply_patch`
    recall_ms: list[float]  # each `_apply_recall`
    graph_budget: list[int]  # the tokens of the graph each memory-model prompt showed
    seconds: float
    described: str  # the memory model
    window: int
    prompt_budget: int
    memorize_model: str


def walk_steps(args: argparse.Namespace, steps: Sequence[Step]) -> Walk:
    """A graph fed the steps one by one, with `graph_work` run here, in this process: the task
    `graph_memorize` queues on commit is not sent."""
    from agents.graphs import tasks
    from memsite.spaces.selectors import space_default

    tasks.graph_work.delay = lambda **kwargs: None
    with memory_model(args.llm) as described:
        graph = services.graph_create(
            space=space_default(), task=TASK, model=args.model, trigger_tokens=args.trigger, target_tokens=args.target
        )
        window = llm_config().model_info(graph.model).context_window
        memorize_model = llm_config().model_for(Purpose.MEMORIZE)
        # As memsite's worker processes do once loaded (memsite/celery.py).
        gc.collect()
        gc.freeze()
        graph_budget: list[int] = []
        with Timed(graph_services, "_apply_patch") as patches, Timed(graph_services, "_apply_recall") as recalls:
            print(f"{args.steps} steps, {args.llm} memory model", file=sys.stderr)
            started = time.perf_counter()
            if args.profile:
                records, profile = profiled(lambda: run_steps(graph, steps, patches, graph_budget))
                print(f"\n=== cProfile: {args.steps} steps ===\n{profile}", file=sys.stderr)
            else:
                records = run_steps(graph, steps, patches, graph_budget)
            seconds = time.perf_counter() - started
        gc.unfreeze()
    return Walk(
        graph=graph,
        records=records,
        patch_ms=patches.millis,
        recall_ms=recalls.millis,
        graph_budget=graph_budget,
        seconds=seconds,
        described=described,
        window=window,
        prompt_budget=settings.MEMSITE_GRAPH_PROMPT_TOKENS,
        memorize_model=memorize_model,
    )


# --- the trajectory ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    assistant: str
    tool: str
    new_lead: bool
    dead_end: bool

    @property
    def messages(self) -> list[dict[str, str]]:
        return [{"role": "assistant", "content": self.assistant}, {"role": "tool", "content": self.tool}]


def _tool_result(rng: random.Random, tool: str, words: int) -> str:
    """About `words` words of what a tool returns: matching log lines, metric series, a trace's
    spans, rows, a file; a first sentence that says what was found."""
    component = rng.choice(COMPONENTS)
    head = f"Found {rng.randint(2, 40)} matches in {component} for the window 14:00 to 16:00 UTC."
    lines, left = [head], words - len(head.split())
    while left > 0:
        if tool in ("search_logs", "get_trace") and rng.random() < 0.7:
            line = (
                f"{rng.randint(14, 15)}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d} "
                f"{rng.choice(('WARN', 'INFO', 'ERROR'))} {component} span={rng.getrandbits(32):08x} "
                f"latency_ms={rng.randint(3, 4_000)} " + prose(rng, rng.randint(6, 16))
            )
        elif tool in ("query_metrics", "run_sql") and rng.random() < 0.7:
            line = json.dumps(
                {
                    "series": f"{component}.{rng.choice(('p95_ms', 'pool_wait_ms', 'qps', 'errors'))}",
                    "points": [rng.randint(1, 2_500) for _ in range(rng.randint(4, 10))],
                }
            )
        else:
            line = prose(rng, rng.randint(12, 40))
        lines.append(line)
        left -= len(line.split())
    return "\n".join(lines)


def trajectory(steps: int, step_tokens: int, seed: int) -> list[Step]:
    """`steps` tool steps of an agent working the task: a new lead every 3 to 9 steps
    (announced with "Next:"), each step a short reasoning and a tool call, then the tool's
    result; about one in ten results a dead end (an error or nothing found). A step is
    `step_tokens` tokens on average (0.5× to 1.6×)."""
    rng = random.Random(seed)
    out: list[Step] = []
    until_next = 0
    lead = ""
    # Tokens per space-separated word of this text (log lines and JSON cost more than prose),
    # measured on a 500-step run.
    tokens_per_word = 1.82
    for _ in range(steps):
        new_lead = until_next == 0
        if new_lead:
            lead = rng.choice(LEADS).format(c=rng.choice(COMPONENTS))
            until_next = rng.randint(3, 9)
        until_next -= 1
        tool = rng.choice(TOOLS)
        arguments = {"query": prose(rng, rng.randint(4, 10)).rstrip(".?!"), "limit": rng.choice((20, 50, 100))}
        reasoning = prose(rng, rng.randint(15, 45))
        assistant = (f"Next: {lead}. " if new_lead else "") + f"{reasoning}\nCall {tool}({json.dumps(arguments)})"
        budget = rng.triangular(0.5, 1.6, 0.9) * step_tokens / tokens_per_word
        dead_end = not new_lead and rng.random() < 0.1
        if dead_end:
            result = rng.choice(DEAD_ENDS)
        else:
            # Dead ends are short; the others make up for them so the average holds.
            result = _tool_result(rng, tool, max(20, int(budget / 0.92) - len(assistant.split())))
        out.append(Step(assistant=assistant, tool=result, new_lead=new_lead, dead_end=dead_end))
    return out


# --- a scripted memory model, answering what each prompt shows ----------------------------------

NODE_LINE = re.compile(r"^\[(\d+)\] (task|subtask|evidence|summary): ?(.*)$")
EDGE_LINE = re.compile(r"^(\d+) -> (\d+)$")
SUMMARY_CHARS = 1_500  # what the scripted model writes at most in one summary


def _shown_graph(text: str) -> tuple[dict[int, tuple[str, str]], list[tuple[int, int]]]:
    """The nodes (id -> kind, text) and edges of a prompt's graph lines."""
    nodes: dict[int, tuple[str, str]] = {}
    edges: list[tuple[int, int]] = []
    for line in text.splitlines():
        if found := NODE_LINE.match(line):
            nodes[int(found[1])] = (found[2], found[3])
        elif found := EDGE_LINE.match(line):
            edges.append((int(found[1]), int(found[2])))
    return nodes, edges


def _without_role(text: str) -> str:
    return text.split(": ", 1)[1] if ": " in text[:20] else text


def _first_sentences(text: str, limit: int) -> str:
    sentences = re.split(r"(?<=[.!?])\s+", text)
    kept = ""
    for sentence in sentences:
        if kept and len(kept) + len(sentence) + 1 > limit:
            break
        kept = f"{kept} {sentence}".strip()
    return kept[:limit]


def _scripted_patch(graph_text: str, step_text: str) -> dict:
    nodes, _ = _shown_graph(graph_text)
    task = min(node for node, (kind, _) in nodes.items() if kind == "task")
    subtasks = [node for node, (kind, _) in nodes.items() if kind == "subtask"]
    said = dict(line.split(": ", 1) for line in step_text.splitlines()[1:] if ": " in line)
    assistant, result = said.get("assistant", ""), said.get("tool", "")
    dead_end = result.startswith(("ERROR", "No results"))
    finding = f"Dead end: {result[:160]}" if dead_end else _first_sentences(result, 240)
    evidence = {"tmp_id": "e1", "kind": "evidence", "thought": [{"role": "tool", "content": finding}]}
    lead = re.match(r"Next: (.*?)\.", assistant)
    if lead or not subtasks:
        goal = lead[1] if lead else _first_sentences(assistant, 160)
        return {
            "add_nodes": [
                {"tmp_id": "s1", "kind": "subtask", "thought": [{"role": "assistant", "content": goal}]},
                evidence,
            ],
            "add_edges": [
                {"src": str(task), "dst": "s1", "rationale": "decompose"},
                {"src": "e1", "dst": "s1", "rationale": "support"},
            ],
        }
    return {"add_nodes": [evidence], "add_edges": [{"src": "e1", "dst": str(max(subtasks)), "rationale": "support"}]}


def _scripted_recall(graph_text: str) -> dict:
    """Flush the dead ends; fold every finished subtask (all but the newest) with the evidence
    the shown edges link to it, any evidence whose subtask is gone, and the earlier summaries,
    into one summary. With no finished subtask, the live one's evidence but the newest three."""
    nodes, edges = _shown_graph(graph_text)
    kinds = {node: kind for node, (kind, _) in nodes.items()}
    text = {node: _without_role(line) for node, (_, line) in nodes.items()}
    parent = {src: dst for src, dst in edges if kinds.get(src) == "evidence"}
    subtasks = sorted(node for node, kind in kinds.items() if kind == "subtask")
    live = subtasks[-1] if subtasks else None
    dead = [node for node, kind in kinds.items() if kind == "evidence" and text[node].startswith("Dead end")]
    evidence = [node for node, kind in kinds.items() if kind == "evidence" and node not in dead]
    summaries = sorted(node for node, kind in kinds.items() if kind == "summary")
    finished = subtasks[:-1]
    under = {subtask: [node for node in evidence if parent.get(node) == subtask] for subtask in finished}
    stray = [node for node in evidence if parent.get(node) not in subtasks]
    if finished:
        folded = [*summaries, *finished, *(node for nodes_ in under.values() for node in nodes_), *stray]
    else:
        folded = [*summaries, *stray, *[node for node in evidence if parent.get(node) == live][:-3]]
    lines = [text[node] for node in summaries]
    for subtask in finished:
        found = under[subtask]
        more = f" (+{len(found) - 1} more findings)" if len(found) > 1 else ""
        finding = f"{text[found[0]][:140]}{more}" if found else "nothing found"
        lines.append(f"{text[subtask][:100]}: {finding}")
    placed = {node for nodes_ in under.values() for node in nodes_}
    lines += [f"Also: {text[node][:100]}" for node in folded if kinds[node] == "evidence" and node not in placed]
    while len("\n".join(lines)) > SUMMARY_CHARS and len(lines) > 1:
        lines.pop(0)  # the oldest detail goes first
    fold_ops = []
    if folded:
        fold_ops.append(
            {
                "ids": sorted(set(folded)),
                "notes": [{"role": "system", "content": "\n".join(lines)[:SUMMARY_CHARS]}],
                "rationale": f"{len(finished)} finished subtasks with their evidence",
            }
        )
    return {
        "flush_ops": [{"id": node, "rationale": "a dead end"} for node in sorted(dead)],
        "fold_ops": fold_ops,
    }


def scripted_reply(request) -> dict:
    """What the scripted memory model answers to one request of the fake server."""
    try:
        messages = request.messages
        if "MemoryPatch" in messages[0]["content"]:
            return _scripted_patch(messages[1]["content"], messages[2]["content"])
        return _scripted_recall(messages[1]["content"])
    except Exception:  # noqa: BLE001 -- seen in the ledger as a rejected reply, and here
        traceback.print_exc()
        return {"error": "the scripted model failed"}


@contextmanager
def memory_model(kind: str) -> Iterator[str]:
    """The gateway configured for the run: the offline provider, or the `openai` provider
    against the fake server in a forked process of its own (so that its work never runs under
    this process's GIL while a patch is timed), answering with `scripted_reply`. Yields a
    description."""
    if kind == "offline":
        with override_settings(MEMSITE_LLM_PROVIDER="offline", OPENAI_API_KEY=None):
            yield "memsite's offline provider (the schemas' `offline_reply`, given each prompt's reading)"
        return
    # No usage in the replies: the gateway counts the prompts itself, with the model's encoding.
    with fake_llm(scripted_reply, usage=None) as (url, _):
        gateway = {"MEMSITE_LLM_PROVIDER": "openai", "OPENAI_API_KEY": "sk-bench", "OPENAI_BASE_URL": url}
        with override_settings(**gateway):
            yield (
                "a scripted memory model behind the fake OpenAI-compatible server (tests/fake_openai.py), "
                "through the `openai` provider: a subtask per new lead, evidence under it, dead ends "
                "flushed and finished subtasks folded with their evidence and the earlier summaries"
            )


# --- measuring --------------------------------------------------------------------------------


@dataclass
class StepRecord:
    context_tokens: int
    raw_tokens: int
    recalls: int
    peak_tokens: int  # the context before this step's recalls, or after it when none ran
    prompt_tokens: int  # memorize and recall calls of the step together
    step_ms: float
    context_ms: float
    patch_ms: list[float] = field(default_factory=list)
    recall_tokens: list[tuple[int, int]] = field(default_factory=list)  # each recall's context before, after
    rejected: int = 0


class Timed:
    """Wraps a module function with a timer for the run, appending milliseconds to `millis`."""

    def __init__(self, module: object, name: str) -> None:
        self.module, self.name = module, name
        self.original = getattr(module, name)
        self.millis: list[float] = []

    def __enter__(self) -> Timed:
        original, millis = self.original, self.millis

        def timed(*args, **kwargs):
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                millis.append((time.perf_counter() - started) * 1000)

        setattr(self.module, self.name, timed)
        return self

    def __exit__(self, *exc: object) -> None:
        setattr(self.module, self.name, self.original)


def _last_id(model) -> int:
    return model.objects.aggregate(last=Max("id"))["last"] or 0


def run_steps(graph, steps: Sequence[Step], patches: Timed, graph_budget: list[int]) -> list[StepRecord]:
    records = []
    counter = counter_for_model(graph.model)  # what `_graph_lines` counts the shown graph with
    last_op, last_call = _last_id(GraphOp), _last_id(LLMCall)
    for number, step in enumerate(steps, 1):
        patched = len(patches.millis)
        started = time.perf_counter()
        services.graph_memorize(graph=graph, messages=step.messages, by=system_principal(graph.space))
        services.graph_work(graph_id=graph.pk)
        step_ms = (time.perf_counter() - started) * 1000
        started = time.perf_counter()
        context = selectors.graph_context(graph=graph)
        context_ms = (time.perf_counter() - started) * 1000
        raw = Turn.objects.filter(graph=graph).aggregate(total=Sum("token_count"))["total"]
        ops = list(
            GraphOp.objects.filter(graph=graph, id__gt=last_op).values_list(
                "id", "kind", "status", "tokens_before", "tokens_after"
            )
        )
        calls = list(
            LLMCall.objects.filter(id__gt=last_call, purpose__in=[Purpose.MEMORIZE, Purpose.RECALL]).values_list(
                "id", "prompt_tokens", "messages"
            )
        )
        last_op = max([last_op, *(op[0] for op in ops)])
        last_call = max([last_call, *(call[0] for call in calls)])
        recalls = [op for op in ops if op[1] == GraphOp.Kind.RECALL]
        # The graph as the memory model was shown it: the prompt's second message.
        graph_budget.extend(counter.count(messages[1]["content"]) for _, _, messages in calls if len(messages) > 1)
        records.append(
            StepRecord(
                context_tokens=context.tokens,
                raw_tokens=raw,
                recalls=len(recalls),
                peak_tokens=max([context.tokens, *(op[3] or 0 for op in recalls)]),
                prompt_tokens=sum(call[1] for call in calls),
                step_ms=step_ms,
                context_ms=context_ms,
                patch_ms=patches.millis[patched:],
                recall_tokens=[(op[3] or 0, op[4] or 0) for op in recalls],
                rejected=sum(op[2] != GraphOp.Status.APPLIED for op in ops),
            )
        )
        if number % 50 == 0:
            print(
                f"step {number}: raw {raw:,} tokens, context {context.tokens:,}, "
                f"recalls so far {sum(r.recalls for r in records)}",
                file=sys.stderr,
            )
    return records


# --- the report -------------------------------------------------------------------------------


# --- the report -------------------------------------------------------------------------------


def ms(value: float) -> str:
    return f"{value:.2f}" if value < 10 else f"{value:.0f}"


def targets_table(walk: Walk) -> Table:
    graph, records, graph_budget = walk.graph, walk.records, walk.graph_budget
    recall_count = sum(record.recalls for record in records)
    per_100 = recall_count * 100 / len(records)
    highest = max(records, key=lambda record: record.context_tokens)
    prompts = [record.prompt_tokens for record in records]
    prompt_p50, prompt_p95 = percentiles(prompts, 50, 95)
    first, last = prompts[:WINDOW], prompts[-WINDOW:]
    patch_stats = Stats.of(walk.patch_ms)
    rows = [
        (
            f"context ≤ the trigger ({graph.trigger_tokens:,}) at the end of every step",
            f"max {highest.context_tokens:,} (step {records.index(highest) + 1}); before recall at most "
            f"{max(record.peak_tokens for record in records):,}",
            "✓" if highest.context_tokens <= graph.trigger_tokens else "✗",
        ),
        (
            f"≤ {RECALLS_PER_100_TARGET} recalls per 100 steps (one per 20)",
            f"{per_100:.1f} ({recall_count} recalls in {len(records)} steps)",
            "✓" if per_100 <= RECALLS_PER_100_TARGET else "✗",
        ),
        (
            f"memory-model prompt bounded (graph shown ≤ MEMSITE_GRAPH_PROMPT_TOKENS = {walk.prompt_budget:,})",
            f"per step p50 {prompt_p50:,.0f}, p95 {prompt_p95:,.0f}, max {max(prompts):,}; "
            f"graph shown max {max(graph_budget, default=0):,}; p50 of the first {len(first)} steps "
            f"{percentiles(first, 50)[0]:,.0f}, of the last {len(last)} {percentiles(last, 50)[0]:,.0f}",
            "✓" if max(graph_budget, default=0) <= walk.prompt_budget else "✗",
        ),
        (
            f"patch apply p95 ≤ {PATCH_TARGET_MS} ms",
            f"p50 {ms(patch_stats.p50)}, p95 {ms(patch_stats.p95)} ms ({patch_stats.count} patches)",
            "✓" if patch_stats.p95 <= PATCH_TARGET_MS else "✗",
        ),
    ]
    return Table(("target", "measured", ""), rows, align="lll")


WINDOWS_HEADER = (
    "steps",
    "raw history tokens",
    "peak before recall",
    "context max",
    "context at end",
    "recalls",
    "prompt tokens/step p50",
    "max",
    "patch apply p95 ms",
    "step p50 ms",
    "graph_context p50 ms",
)


def windows_table(records: Sequence[StepRecord]) -> Table:
    """A row per WINDOW steps."""
    rows = []
    for start in range(0, len(records), WINDOW):
        chunk = records[start : start + WINDOW]
        patch_ms = [value for record in chunk for value in record.patch_ms]
        prompts = [record.prompt_tokens for record in chunk]
        rows.append(
            (
                f"{start + 1}–{start + len(chunk)}",
                f"{chunk[-1].raw_tokens:,}",
                f"{max(record.peak_tokens for record in chunk):,}",
                f"{max(record.context_tokens for record in chunk):,}",
                f"{chunk[-1].context_tokens:,}",
                str(sum(record.recalls for record in chunk)),
                f"{percentiles(prompts, 50)[0]:,.0f}",
                f"{max(prompts):,}",
                ms(percentiles(patch_ms, 95)[0]) if patch_ms else "—",
                ms(percentiles([record.step_ms for record in chunk], 50)[0]),
                ms(percentiles([record.context_ms for record in chunk], 50)[0]),
            )
        )
    return Table(WINDOWS_HEADER, rows, align="l" + "r" * (len(WINDOWS_HEADER) - 1))


def notes(walk: Walk, raw_total: int) -> list[str]:
    records = walk.records
    end = records[-1]
    nodes = Counter(GraphNode.objects.filter(graph=walk.graph).values_list("kind", "state"))
    calls = Counter(
        LLMCall.objects.filter(purpose__in=[Purpose.MEMORIZE, Purpose.RECALL]).values_list("purpose", "status")
    )
    rejected = sum(record.rejected for record in records)
    recalled = [number for number, record in enumerate(records, 1) if record.recalls]
    gaps = [later - earlier for earlier, later in pairwise(recalled)]
    shrinks = [pair for record in records for pair in record.recall_tokens]
    kinds = ", ".join(f"{count} {kind} {state}" for (kind, state), count in sorted(nodes.items()))
    return [
        f"At the end: raw history {end.raw_tokens:,} tokens, context {end.context_tokens:,}: "
        f"{end.raw_tokens / end.context_tokens:.1f}× smaller. Raw history counted at generation "
        f"{raw_total:,} (sum of the steps' wire tokens) {'✓' if raw_total == end.raw_tokens else '✗'}.",
        f"Recalls ran at steps {', '.join(map(str, recalled)) or 'none'}"
        + (f" (at least {min(gaps)} steps apart)" if gaps else "")
        + "; context before → after each: "
        + ", ".join(f"{before:,} → {after:,}" for before, after in shrinks)
        + ".",
        f"Nodes: {kinds}.",
        "Memory-model calls: "
        + ", ".join(f"{count} {purpose} {status}" for (purpose, status), count in sorted(calls.items()))
        + f"; {rejected} operations rejected. Prompt tokens per step are the step's memorize and recall "
        "prompts together, counted by the gateway with the memory model's encoding.",
        f"{len(records)} steps in {walk.seconds:.0f} s; `gc.freeze()` before the steps, as memsite's workers do. "
        "patch apply: `agents.graphs.services.graphs._apply_patch` timed per call (lock, validation against the "
        "graph, inserts, commit); recall apply likewise `_apply_recall`.",
    ]
