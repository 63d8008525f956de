"""What benchmarks/brain.py measures: a tick of a brain at its caps (time without the provider's,
statements, rows and bytes written) against saving the whole memory.json, then a swarm ticked by
Celery workers. Imported once the script has set Django up on its scratch database."""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from itertools import pairwise
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.utils import timezone

from agents.brains import services as brain_services
from agents.brains.logic.caps import cap
from agents.brains.models import Brain, Explored, Goal, Neuron, Record, RecordKind, Synapse, TickRun
from agents.context import services as context_services
from agents.context.models import Agent
from benchmarks.corpora.brainfill import (
    COLLECTIONS,
    MODEL,
    brain_document,
    brain_fill,
    brain_rows,
    document_entries,
    sizes,
    table_counts,
    tick_history,
)
from benchmarks.corpora.prose import WORDS, prose
from benchmarks.kit.harness import (
    Report,
    Row,
    Scratch,
    Stats,
    Table,
    celery_workers,
    command,
    database_version,
    machine,
    millis_text,
    profiled,
    refresh_statistics,
)
from benchmarks.kit.tickmeters import CpuMeter, PostgresWal, ProviderClock, SqliteWal, WalMeter, WriteCounter
from memory import selectors as memory_selectors
from memory import services as memory_services
from memory.models import Node
from memory.services.nodes import NodeSpec
from memsite.llm.models import LLMCall
from memsite.spaces.logic import Role
from memsite.spaces.principals import system_principal
from memsite.spaces.selectors import space_default
from memsite.spaces.services import membership_set

TICK_TARGET_MS = 100
SAVE_RATIO_TARGET = 100
TREE_FOLDERS = 12  # folders under /references for the ticks to list, TREE_NOTES notes each
TREE_NOTES = 25
BRAIN_TABLES = (Record, Goal, Explored, Neuron, Synapse, TickRun, Brain)


# --- the run -------------------------------------------------------------------------------------


def run(args: argparse.Namespace, scratch: Scratch) -> Report:
    load = os.getloadavg()[0]  # other work on the machine shows up in every number below
    rng = random.Random(args.seed)
    var_dir = Path(os.environ["MEMSITE_VAR_DIR"])
    print(f"checking the bulk fill against brain_import ({args.check:g} of every cap)", file=sys.stderr)
    checked = check_against_import(args.check, args.seed)
    nodes = tree_build(rng)
    agent, built = measured_brain(args, rng)
    samples, saves, wal, cpu = ticks_and_saves(args, scratch, agent, var_dir / "memory.json")
    after = table_counts(agent.pk)
    if args.profile:
        _, text = profiled(lambda: [brain_services.tick_run(agent_id=agent.pk) for _ in range(args.ticks)])
        print(f"\n=== cProfile: {args.ticks} ticks ===\n{text}", file=sys.stderr)
    swarm = swarm_run(args, rng, var_dir) if args.swarm_agents else None

    filled = "at its caps" if args.fill == 1 else f"at {args.fill:g} of its caps"
    report = BrainReport(title=f"Agent brains on {database_version(scratch.vendor)}, one brain {filled}")
    report.rows = tick_rows(samples, saves)
    report.tables = [writes_table(samples, saves[-1])]
    if swarm:
        report.tables.append(swarm_table(swarm))
    report.preamble = [
        f"{machine(load)}, {database_version(scratch.vendor)}.",
        "",
        built,
        "",
        checked,
        "",
        (
            f"Ticks on the offline provider (no LLM latency), model `{MODEL}`, a deep reflection every "
            f"{settings.MEMSITE_TICK_DEEP_REFLECT_EVERY} ticks; {nodes} nodes under /references to list and read."
        ),
        "",
        f"Command: `{command('brain', args.database_url)}`",
    ]
    report.notes = [*tick_notes(args, samples, after), *cost_notes(args, samples, saves, wal, cpu)]
    report.notes += run_notes(args, swarm)
    return report


def vacuum_analyze() -> None:
    """What autovacuum does soon after a bulk load, of the brain and the tree."""
    refresh_statistics(connection.vendor, [model._meta.db_table for model in (*BRAIN_TABLES, Node)])


def measured_brain(args: argparse.Namespace, rng: random.Random) -> tuple[Agent, str]:
    """The agent whose ticks are timed, its brain filled to `--fill`; and a line describing it."""
    print(f"generating a brain at {args.fill:g} of every cap", file=sys.stderr)
    started = time.perf_counter()
    now = timezone.now()
    counts = sizes(args.fill)
    rows = brain_rows(brain_document(rng, counts, now=now), now=now)
    agent = context_services.agent_create(space=space_default(), name="brain-bench", model=MODEL)
    print(f"copying in a brain of {rows.count:,} rows", file=sys.stderr)
    brain_fill(agent=agent, rows=rows, ticks=tick_history(rng, counts["tick"], now=now))
    ticking_for_a_member([agent.pk])
    vacuum_analyze()
    built = describe_brain(table_counts(agent.pk), args.fill, time.perf_counter() - started, rows.entries)
    # The generated rows are millions of Python objects (700,000 rows at the caps) that a worker
    # would not hold: every full garbage collection during the timings would walk them.
    del rows
    gc.collect()
    if args.gc_freeze:
        gc.freeze()
    return agent, built


def ticks_and_saves(
    args: argparse.Namespace, scratch: Scratch, agent: Agent, path: Path
) -> tuple[list[TickSample], list[SaveSample], WalMeter, CpuMeter]:
    """The timed ticks and whole-file saves, in turns, so that both meet the same load from
    whatever else the machine runs; and the meters they were measured with."""
    clock = ProviderClock()
    clock.install()
    wal = PostgresWal() if scratch.vendor == "postgresql" else SqliteWal()
    cpu = CpuMeter()
    print(
        f"{args.warmup} ticks and a save untimed, then {args.ticks} ticks and {args.baseline_runs} saves in turn",
        file=sys.stderr,
    )
    samples: list[TickSample] = []
    saves: list[SaveSample] = []
    try:
        for _ in range(args.warmup):
            tick_measured(agent.pk, clock, wal, cpu)
        whole_file_save(agent, path, cpu)
        for turn in range(1, args.baseline_runs + 1):
            share = args.ticks * turn // args.baseline_runs - len(samples)
            samples += [tick_measured(agent.pk, clock, wal, cpu) for _ in range(share)]
            saves.append(whole_file_save(agent, path, cpu))
    finally:
        wal.close()
    return samples, saves, wal, cpu


def tick_rows(samples: list[TickSample], saves: list[SaveSample]) -> list[Row]:
    overhead = Stats.of([s.overhead_ms for s in samples])
    return [
        TickRow(
            operation="tick less the offline provider, vs brain_export + json.dumps + write + fsync",
            memsite=overhead,
            baseline=Stats.of([s.total_ms for s in saves]),
            p95_target=TICK_TARGET_MS,
            ratio_target=SAVE_RATIO_TARGET,
        ),
        TickRow(
            operation="tick less the offline provider, vs json.dumps + write + fsync (brain in memory)",
            memsite=overhead,
            baseline=Stats.of([s.in_memory_ms for s in saves]),
            ratio_target=SAVE_RATIO_TARGET,
        ),
        Row(operation="tick, offline provider included", memsite=Stats.of([s.wall_ms for s in samples])),
        Row(operation="offline provider, its calls in a tick", memsite=Stats.of([s.llm_ms for s in samples])),
        Row(operation="of a tick, its write statements and commits", memsite=Stats.of([s.write_ms for s in samples])),
        TickRow(
            operation="CPU time of a tick (offline provider included), vs the whole-file save's",
            memsite=Stats.of([s.cpu_ms for s in samples]),
            baseline=Stats.of([s.export_cpu_ms + s.encode_write_cpu_ms for s in saves]),
        ),
        TickRow(
            operation="CPU time of a tick, vs json.dumps + write + fsync's (brain in memory)",
            memsite=Stats.of([s.cpu_ms for s in samples]),
            baseline=Stats.of([s.encode_write_cpu_ms for s in saves]),
        ),
    ]


def tick_notes(args: argparse.Namespace, samples: list[TickSample], after: dict[str, int]) -> list[str]:
    """What the ticks did, the caps after them, and the rows they wrote."""
    statuses = Counter(s.status for s in samples)
    actions = Counter(s.action or "none" for s in samples)
    steps = Counter(step for s in samples for step in s.steps)
    queries = Stats.of([s.queries for s in samples])
    over = {name: count for name, count in after.items() if count > cap(name)}
    under = {name: count for name, count in after.items() if count < cap(name)}
    per_table: Counter[str] = Counter()
    for s in samples:
        per_table.update(s.rows)
    brain_tables = {model._meta.db_table for model in BRAIN_TABLES}
    in_brain = sum(count for table, count in per_table.items() if table in brain_tables)
    return [
        (
            f"ticks: {args.ticks} timed after {args.warmup} untimed, one after another on the measured agent, in "
            f"{args.baseline_runs} turns with the baseline's saves; "
            f"status {', '.join(f'{name} {n}' for name, n in statuses.items())}. Actions: "
            f"{', '.join(f'{name} {n}' for name, n in actions.most_common())}; deep reflections "
            f"{steps['deep_reflect']}, new plans {steps['replan']}. Queries a tick: p50 {queries.p50:.0f}, "
            f"p95 {queries.p95:.0f}."
        ),
        f"After the ticks no collection is over its cap: {'✓' if not over else '✗ ' + str(over)}"
        + (
            f"; below it: {', '.join(f'{name} {count:,}' for name, count in under.items())} (a forgotten neuron "
            "takes its synapses with it; deep reflections drop done goals)."
            if under and args.fill == 1
            else "."
        ),
        (
            "Rows a tick writes, mean by table: "
            + ", ".join(f"{table} {count / len(samples):.1f}" for table, count in per_table.most_common())
            + f"; {in_brain / len(samples):.1f} in the brain's own tables, the rest in the LLM ledger."
        ),
    ]


def cost_notes(
    args: argparse.Namespace, samples: list[TickSample], saves: list[SaveSample], wal: WalMeter, cpu: CpuMeter
) -> list[str]:
    """How the costs were measured, the baseline's parts, and the targets."""
    save = saves[-1]

    def p50(values: Iterable[float]) -> str:
        return f"{Stats.of(list(values)).p50:,.0f}"

    return [
        (
            f"offline provider: {_mean([s.llm_calls for s in samples]):.1f} calls a tick (decide and reflect; "
            "a deep reflection and a new plan now and then), timed around the provider's `complete` and "
            "subtracted; the ledger row each call writes stays in the tick's time."
        ),
        f"bytes written: {wal.describe}.",
        (
            f"CPU time: of {cpu.describe}, from /proc/<pid>/schedstat. Waiting for a CPU meanwhile, a tick: "
            f"p50 {Stats.of([s.cpu_wait_ms for s in samples]).p50:.1f} ms, p95 "
            f"{Stats.of([s.cpu_wait_ms for s in samples]).p95:.1f} ms: the machine's other work in the wall times."
        ),
        (
            f"baseline: {args.baseline_runs} timed saves after 1 untimed, one after each turn of ticks, of a "
            f"{_bytes(save.size)} memory.json "
            f"({save.entries:,} entries): brain_export p50 {p50(s.export_ms for s in saves)} ms, json.dumps "
            f"{p50(s.encode_ms for s in saves)} ms, write + fsync {p50(s.write_ms for s in saves)} ms. The seed "
            "holds its brain in memory and pays only the last two; a brain kept in a database and saved whole "
            "pays all three."
        ),
        (
            "ratio = baseline p50 / memsite p50 (times), save / mean per tick (rows, bytes): above 1 means a tick "
            f"costs less. Targets: ≥ {SAVE_RATIO_TARGET}× less time and bytes per tick than the whole-file save, "
            f"tick p95 ≤ {TICK_TARGET_MS} ms without the LLM."
        ),
    ]


def run_notes(args: argparse.Namespace, swarm: Swarm | None) -> list[str]:
    lines = [
        (
            f"memsite: `gc.freeze()` before timing ({gc.get_freeze_count():,} objects frozen), as its worker "
            "processes do."
            if args.gc_freeze
            else "memsite: timed without `gc.freeze()`."
        ),
    ]
    if swarm:
        lines.append(
            f"swarm: {swarm.agents} agents whose brains are filled to {args.swarm_fill:g} of every cap; "
            f"{args.swarm_rounds} rounds of {args.swarm_burst} ticks queued back to back per agent, for "
            f"{swarm.workers} worker processes (`celery worker --concurrency 1`); the checks read the tick runs, "
            "records, counters and LLM calls the ticks left. Ticks per second: runs / (the last run's end − the "
            "first task queued)."
        )
    return lines


# --- the brains ------------------------------------------------------------------------------------


def check_against_import(fill: float, seed: int) -> str:
    """Imports a small generated memory.json through `brain_import` into one agent, copies the
    rows `brain_rows` makes of it into another, and compares the two brains' exports (as JSON
    text: every entry, in order), rows and counters. Raises if anything differs."""
    if not fill:
        return "Not checked against `brain_import` (--check 0)."
    now = timezone.now()
    document = brain_document(random.Random(seed + 1), sizes(fill), now=now)
    space = space_default()
    imported = context_services.agent_create(space=space, name="brain-bench-check-import", model=MODEL)
    copied = context_services.agent_create(space=space, name="brain-bench-check-copy", model=MODEL)
    brain_services.brain_import(agent=imported, document=document)
    brain_fill(agent=copied, rows=brain_rows(document, now=now), ticks=[])
    exports, counters, counts = [], [], []
    for agent in (imported, copied):
        exports.append(json.dumps(brain_services.brain_export(agent=agent)))
        brain = Brain.objects.get(pk=agent.pk)
        counters.append((brain.path_count, brain.url_count, brain.neuron_count, brain.synapse_count))
        counts.append(table_counts(agent.pk))
    Agent.objects.filter(pk__in=[imported.pk, copied.pk]).delete()
    if exports[0] != exports[1]:
        raise SystemExit("The bulk-filled brain's export differs from the imported brain's.")
    if counters[0] != counters[1] or counts[0] != counts[1]:
        raise SystemExit(f"Counters differ: imported {counters[0]} {counts[0]}, copied {counters[1]} {counts[1]}.")
    return (
        f"Check: a memory.json of {document_entries(document):,} entries ({fill:g} of every cap) imported "
        "through `brain_import` into one agent and copied in by the benchmark's bulk fill into another give "
        "the same export (as JSON text, every entry in order), the same rows per collection and the same "
        "counters: ✓"
    )


# --- a tree for the ticks to explore -------------------------------------------------------------


def tree_build(rng: random.Random) -> int:
    """Folders of notes under /references, so that ticks list and read real nodes."""
    references = memory_selectors.node_internal_folder(space=space_default(), name="references")
    topics = [f"{rng.choice(WORDS)}-{rng.choice(WORDS)}" for _ in range(TREE_FOLDERS)]
    specs = [
        NodeSpec(
            name=f"{topic}-{index}",
            type="folder",
            description=f"Notes on {topic.replace('-', ' ')}",
            children=[
                NodeSpec(
                    name=f"{rng.choice(WORDS)}-{note}.md",
                    type="document",
                    description=prose(rng, rng.randint(8, 20)),
                    content=f"# {topic} {note}\n\n{prose(rng, rng.randint(150, 500))}\n".encode(),
                )
                for note in range(TREE_NOTES)
            ],
        )
        for index, topic in enumerate(topics)
    ]
    return memory_services.node_bulk_create(parent=references, specs=specs, by=system_principal(space_default()))


@dataclass
class TickSample:
    wall_ms: float
    llm_ms: float
    llm_calls: int
    queries: int
    statements: int
    rows: Counter[str]
    write_ms: float
    cpu_ms: float
    cpu_wait_ms: float
    wal_bytes: int
    image_bytes: int | None
    status: str
    action: str
    steps: list[str]

    @property
    def overhead_ms(self) -> float:
        return self.wall_ms - self.llm_ms

    @property
    def rows_written(self) -> int:
        return sum(self.rows.values())


def tick_measured(agent_id: int, clock: ProviderClock, wal: WalMeter, cpu: CpuMeter) -> TickSample:
    wal.start()
    counter = WriteCounter()
    clock.seconds, clock.calls = 0.0, 0
    cpu_start = cpu.start()
    with counter.commits():
        started = time.perf_counter()
        run = brain_services.tick_run(agent_id=agent_id)
        wall = time.perf_counter() - started
    cpu_ms, cpu_wait_ms = cpu.since(cpu_start)
    wal_bytes, image_bytes = wal.stop()
    if run is None:
        raise SystemExit("A tick found its brain's lease held: nothing else should tick this agent.")
    return TickSample(
        wall_ms=wall * 1000,
        llm_ms=clock.seconds * 1000,
        llm_calls=clock.calls,
        queries=counter.queries,
        statements=counter.statements,
        rows=counter.rows,
        write_ms=counter.seconds * 1000,
        cpu_ms=cpu_ms,
        cpu_wait_ms=cpu_wait_ms,
        wal_bytes=wal_bytes,
        image_bytes=image_bytes,
        status=run.status,
        action=run.action,
        steps=[step["name"] for step in run.steps],
    )


# --- the baseline: seed 002's save ---------------------------------------------------------------


@dataclass
class SaveSample:
    export_ms: float
    encode_ms: float
    write_ms: float
    size: int
    entries: int
    export_cpu_ms: float
    encode_write_cpu_ms: float

    @property
    def total_ms(self) -> float:
        return self.export_ms + self.encode_ms + self.write_ms

    @property
    def in_memory_ms(self) -> float:
        return self.encode_ms + self.write_ms


def whole_file_save(agent: Agent, path: Path, cpu: CpuMeter) -> SaveSample:
    """Seed 002's memory.save(): the whole brain as one JSON document, written over the file.
    Compact JSON (as JSON.stringify without indentation), then write and fsync, as a debounced
    save that must survive a crash would."""
    cpu_start = cpu.start()
    started = time.perf_counter()
    document = brain_services.brain_export(agent=agent)
    exported = time.perf_counter()
    export_cpu_ms, _ = cpu.since(cpu_start)
    cpu_start = cpu.read()
    data = json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode()
    encoded = time.perf_counter()
    with open(path, "wb") as file:
        file.write(data)
        file.flush()
        os.fsync(file.fileno())
    written = time.perf_counter()
    encode_write_cpu_ms, _ = cpu.since(cpu_start)
    return SaveSample(
        export_ms=(exported - started) * 1000,
        encode_ms=(encoded - exported) * 1000,
        write_ms=(written - encoded) * 1000,
        size=len(data),
        entries=document_entries(document),
        export_cpu_ms=export_cpu_ms,
        encode_write_cpu_ms=encode_write_cpu_ms,
    )


# --- the swarm -----------------------------------------------------------------------------------


@dataclass
class Swarm:
    agents: int
    workers: int
    broker: str
    queued: int
    delivered: int = 0  # tasks the workers' logs show ended
    raised: int = 0
    runs: int = 0
    done: int = 0
    failed: int = 0
    seconds: float = 0.0
    durations: Stats | None = None
    timed_out: bool = False
    checks: list[tuple[str, str, bool]] = field(default_factory=list)  # (check, what was found, passed)

    @property
    def skipped(self) -> int:
        """Tasks that found their brain's lease held, or a tick run since they read it, and did
        nothing."""
        return self.delivered - self.runs

    @property
    def rate(self) -> float:
        return self.runs / self.seconds if self.seconds else 0.0


def _redis_cleanup(url: str, queue: str) -> None:
    import redis

    client = redis.Redis.from_url(url)
    keys = list(client.scan_iter(match=f"*{queue}*"))
    if keys:
        client.delete(*keys)


def _ticks_ended(tasks: Counter[tuple[str, str]]) -> Counter[str]:
    """Tick tasks that succeeded, raised or failed, by the workers' logs."""
    ended = ("succeeded", "raised", "failed")
    return Counter(
        {event: n for (name, event), n in tasks.items() if name == "agents.tasks.tick_run" and event in ended}
    )


def swarm_brains(args: argparse.Namespace, rng: random.Random) -> list[int]:
    """`--swarm-agents` agents with brains filled to `--swarm-fill`."""
    now = timezone.now()
    counts = sizes(args.swarm_fill)
    ids, space = [], space_default()
    for index in range(args.swarm_agents):
        agent = context_services.agent_create(space=space, name=f"swarm-{index + 1:02d}", model=MODEL)
        rows = brain_rows(brain_document(rng, counts, now=now), now=now)
        brain_fill(agent=agent, rows=rows, ticks=tick_history(rng, counts["tick"], now=now))
        ids.append(agent.pk)
    ticking_for_a_member(ids)
    vacuum_analyze()
    return ids


def ticking_for_a_member(agent_ids: Sequence[int]) -> None:
    """A tick is a member's work, never memsite's own: one that nobody asked for fails at once
    (agents/brains/services/ticks.py). The benchmark's brains tick for an editor of the default
    space, as if they had set them ticking."""
    if not agent_ids:
        return
    user = get_user_model().objects.create_user(f"brain-bench-{agent_ids[0]}")
    membership_set(space=space_default(), member=user, role=Role.EDITOR)
    Brain.objects.filter(agent_id__in=agent_ids).update(ticking_by=user)


def swarm_run(args: argparse.Namespace, rng: random.Random, logs: Path) -> Swarm:
    """`--swarm-rounds` rounds in which every agent of the swarm gets `--swarm-burst` ticks queued
    back to back, so that the workers often take ticks of the same agent at once; the checks,
    from what the ticks left in the database."""
    from agents.brains.tasks import tick_run as tick_task

    ids = swarm_brains(args, rng)
    before = dict(Brain.objects.filter(pk__in=ids).values_list("pk", "tick_count"))
    queue = f"brainbench-{os.getpid()}"  # a queue of the run's own, also on a shared Redis
    broker = f"Redis at {args.redis_url}" if args.redis_url else "kombu filesystem broker"
    swarm = Swarm(
        agents=len(ids), workers=args.workers, broker=broker, queued=args.swarm_rounds * len(ids) * args.swarm_burst
    )
    print(f"swarm: starting {args.workers} workers ({broker})", file=sys.stderr)
    options = ("--concurrency", "1", "-Q", queue)  # prefork, one process each, the run's queue only
    try:
        with celery_workers({}, count=args.workers, name="brainbench", options=options, logs=logs) as workers:
            started_at = timezone.now()
            for _ in range(args.swarm_rounds):
                for agent_id in ids:
                    for _ in range(args.swarm_burst):
                        tick_task.apply_async(kwargs={"agent_id": agent_id}, queue=queue)
            print(f"swarm: {swarm.queued:,} ticks queued", file=sys.stderr)
            deadline = time.monotonic() + args.swarm_timeout
            while sum(_ticks_ended(workers.tasks()).values()) < swarm.queued:
                if time.monotonic() > deadline or not workers.alive():
                    swarm.timed_out = True
                    break
                time.sleep(0.25)
    finally:
        if args.redis_url:
            _redis_cleanup(args.redis_url, queue)
    ended = _ticks_ended(workers.tasks())
    swarm.delivered = sum(ended.values())
    swarm.raised = ended["raised"] + ended["failed"]
    swarm_checks(swarm, ids, before, started_at)
    return swarm


def swarm_checks(swarm: Swarm, ids: list[int], before: dict[int, int], started_at: datetime) -> None:
    """What the swarm's ticks left: their runs (numbered, not overlapping, ended), and the
    episode, thought and log lines each run must have written, the brains' counters and leases,
    and the LLM calls in the ledger."""
    runs = list(
        TickRun.objects.filter(brain_id__in=ids, started_at__gte=started_at)
        .order_by("brain_id", "number")
        .values_list("pk", "brain_id", "number", "status", "started_at", "ended_at", "steps")
    )
    swarm.runs = len(runs)
    swarm.done = sum(1 for run in runs if run[3] == TickRun.Status.DONE)
    swarm.failed = sum(1 for run in runs if run[3] == TickRun.Status.FAILED)
    ended = [run for run in runs if run[5] is not None]
    if ended:
        swarm.seconds = (max(run[5] for run in ended) - started_at).total_seconds()
        swarm.durations = Stats.of([(run[5] - run[4]).total_seconds() * 1000 for run in ended])
    brains = {brain.pk: brain for brain in Brain.objects.filter(pk__in=ids)}
    swarm.checks = [
        *_run_checks(swarm, runs, brains, before),
        *_record_checks(swarm, runs, brains, started_at),
    ]


def _run_checks(
    swarm: Swarm, runs: list[tuple], brains: dict[int, Brain], before: dict[int, int]
) -> list[tuple[str, str, bool]]:
    """The tasks and the runs they made: taken, ended, numbered, never two at once."""
    own: dict[int, list[tuple]] = {agent_id: [] for agent_id in brains}
    for run in runs:
        own[run[1]].append(run)
    overlaps = sum(
        1
        for mine in own.values()
        for earlier, later in pairwise(mine)
        if earlier[5] is None or later[4] < earlier[5]  # started before the one before it ended
    )
    gaps = [
        agent_id
        for agent_id, mine in own.items()
        if [run[2] for run in mine] != list(range(before[agent_id] + 1, before[agent_id] + len(mine) + 1))
        or brains[agent_id].tick_count != before[agent_id] + len(mine)
    ]
    running = TickRun.objects.filter(brain_id__in=list(brains), status=TickRun.Status.RUNNING).count()
    leased = sum(1 for brain in brains.values() if brain.lease_until is not None)
    return [
        (
            "every queued tick was taken and ended",
            f"{swarm.delivered:,} of {swarm.queued:,}, {swarm.raised} raised",
            swarm.delivered == swarm.queued and not swarm.raised and not swarm.timed_out,
        ),
        (
            "ticks queued at once for one agent met its lease",
            f"{swarm.skipped:,} found it held, or a tick run since they read, and did nothing",
            swarm.skipped > 0,
        ),
        ("no two runs of one agent overlap", f"{overlaps} overlapping pairs in {len(runs):,} runs", overlaps == 0),
        ("runs numbered without gaps, tick_count equal to them", f"{len(gaps)} agents off", not gaps),
        ("no run left running, no lease left held", f"{running} running, {leased} leases", not running and not leased),
        ("no failed run", f"{swarm.failed} failed", swarm.failed == 0),
    ]


def _record_checks(
    swarm: Swarm, runs: list[tuple], brains: dict[int, Brain], started_at: datetime
) -> list[tuple[str, str, bool]]:
    """What each run must have written: its episode, thought and log lines, counters equal to the
    rows, its LLM calls in the ledger."""
    ids = list(brains)
    written = Counter(
        Record.objects.filter(brain_id__in=ids, created_at__gte=started_at).values_list("brain_id", "kind")
    )
    done = Counter(run[1] for run in runs if run[3] == TickRun.Status.DONE)
    reflected = Counter(
        run[1] for run in runs if any(step["name"] == "reflect" and "thought" in step["detail"] for step in run[6])
    )
    ran = Counter(run[1] for run in runs)
    episodes_off = [agent_id for agent_id in ids if written[(agent_id, RecordKind.EPISODE)] != done[agent_id]]
    thoughts_off = [agent_id for agent_id in ids if written[(agent_id, RecordKind.THOUGHT)] != reflected[agent_id]]
    logs_short = [agent_id for agent_id in ids if written[(agent_id, RecordKind.LOG)] < ran[agent_id]]
    totals = Counter()
    for (_, kind), count in written.items():
        totals[kind] += count

    def counters_off(agent_id: int) -> bool:
        counts, brain = table_counts(agent_id), brains[agent_id]
        return (counts["path"], counts["url"], counts["neuron"], counts["synapse"]) != (
            brain.path_count,
            brain.url_count,
            brain.neuron_count,
            brain.synapse_count,
        )

    off = [agent_id for agent_id in ids if counters_off(agent_id)]
    calls = LLMCall.objects.filter(
        served_type=ContentType.objects.get_for_model(TickRun), served_id__in=[run[0] for run in runs]
    ).count()
    return [
        (
            "an episode per done run",
            f"{totals[RecordKind.EPISODE]:,} episodes, {swarm.done:,} done runs; {len(episodes_off)} agents off",
            not episodes_off,
        ),
        (
            "a thought per reflected run",
            (
                f"{totals[RecordKind.THOUGHT]:,} thoughts, {sum(reflected.values()):,} reflections; "
                f"{len(thoughts_off)} agents off"
            ),
            not thoughts_off,
        ),
        (
            "a log line or more per run",
            f"{totals[RecordKind.LOG]:,} log lines; {len(logs_short)} agents short",
            not logs_short,
        ),
        ("explored, neuron and synapse counters equal their rows", f"{len(off)} agents off", not off),
        (
            "LLM calls in the ledger, served by the runs",
            f"{calls:,} calls, {calls / max(1, len(runs)):.1f} a run",
            calls >= 2 * swarm.done,
        ),
    ]


# --- the report ----------------------------------------------------------------------------------


@dataclass
class BrainReport(Report):
    """The harness's table, then the tables of what a tick writes and of the swarm."""

    tables: list[Table] = field(default_factory=list)

    def text(self) -> str:
        parts = [Report(self.title, self.preamble, self.rows).text().rstrip("\n")]
        for table in self.tables:
            parts += ["", *table.text()]
        return "\n".join([*parts, "", *self.notes])

    def markdown(self) -> str:
        parts = [Report(self.title, self.preamble, self.rows).markdown().rstrip("\n")]
        for table in self.tables:
            parts += ["", *table.markdown()]
        return "\n".join([*parts, "", *(f"- {note}" for note in self.notes), ""])


@dataclass
class TickRow(Row):
    """Targets: p95 (optional) and the ratio to the baseline (baseline p50 / tick p50)."""

    p95_target: float | None = None
    ratio_target: float | None = None

    @property
    def verdict(self) -> str:
        verdicts = []
        if self.p95_target is not None:
            verdicts.append(f"p95 ≤ {self.p95_target:g} ms {'✓' if self.memsite.p95 <= self.p95_target else '✗'}")
        if self.ratio_target is not None:
            verdicts.append(f"≥ {self.ratio_target:g}× {'✓' if self.speedup >= self.ratio_target else '✗'}")
        return ", ".join(verdicts)


def _count(value: float) -> str:
    return f"{value:,.0f}" if value >= 10 else f"{value:.2g}"


def _bytes(value: float) -> str:
    for unit, size in (("MB", 1e6), ("kB", 1e3)):
        if value >= size:
            return f"{value / size:,.1f} {unit}"
    return f"{value:,.0f} B"


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def writes_table(samples: list[TickSample], save: SaveSample) -> Table:
    """Per tick: rows, statements and bytes written, against what one whole-file save writes;
    the ratios use the mean, what many ticks add up to."""

    def line(
        what: str,
        values: Sequence[float],
        shown: Callable[[float], str],
        baseline: float | None = None,
        target: float | None = None,
    ) -> tuple[str, ...]:
        stats, mean = Stats.of(values), _mean(values)
        ratio = baseline / mean if baseline and mean else None
        verdict = "" if target is None or ratio is None else f"≥ {target:g}× {'✓' if ratio >= target else '✗'}"
        return (
            what,
            shown(stats.p50),
            shown(stats.p95),
            shown(mean),
            shown(baseline) if baseline else "—",
            f"{ratio:,.0f}×" if ratio else "—",
            verdict,
        )

    rows = [
        line("rows written (INSERT, UPDATE, DELETE)", [s.rows_written for s in samples], _count, save.entries),
        line("write statements", [s.statements for s in samples], _count),
        line("bytes written", [s.wal_bytes for s in samples], _bytes, save.size, SAVE_RATIO_TARGET),
    ]
    if all(s.image_bytes is not None for s in samples):
        rows.append(line("of which full-page images", [s.image_bytes for s in samples], _bytes))
    header = ("per tick", "memsite p50", "p95", "mean", "whole-file save", "ratio (save / mean)", "target")
    return Table(header, rows, align="lrrrrrl")


def swarm_table(swarm: Swarm) -> Table:
    rows = [
        ("agents, worker processes", f"{swarm.agents}, {swarm.workers} ({swarm.broker})", ""),
        ("ticks queued", f"{swarm.queued:,}", ""),
        ("ticks run (done / failed)", f"{swarm.runs:,} ({swarm.done:,} / {swarm.failed})", ""),
        ("ticks per second", f"{swarm.rate:.1f} ({swarm.runs:,} in {swarm.seconds:.1f} s)", ""),
    ]
    if swarm.durations:
        p50, p95 = millis_text(swarm.durations.p50), millis_text(swarm.durations.p95)
        rows.append(("a run on a worker, start to end (p50 / p95)", f"{p50} / {p95} ms", ""))
    rows += [(check, found, "✓" if passed else "✗") for check, found, passed in swarm.checks]
    return Table(("swarm", "measured", "check"), rows, align="lll")


def describe_brain(counts: dict[str, int], fill: float, seconds: float, entries: int) -> str:
    at_caps = all(counts[name] == cap(name) for name in COLLECTIONS)
    listed = ", ".join(f"{counts[name]:,} {name.replace('_', ' ')}" for name in COLLECTIONS)
    state = "every collection at its cap ✓" if at_caps else f"{fill:g} of every cap"
    return (
        f"The measured brain (by cap name): {listed}; {entries:,} memory.json entries, {state}. Generated and "
        f"copied in in {seconds:.1f} s."
    )
