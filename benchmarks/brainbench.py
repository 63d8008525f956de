"""The body of benchmarks/brain.py: fill a brain to its caps, check the bulk rows against
`brain_import`, time ticks and count what they write, time seed 002's whole-file save, and tick
a swarm on Celery worker processes. Imported only after `scratch_database` has configured
Django."""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import os
import platform
import pstats
import random
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from itertools import pairwise
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.contenttypes.models import ContentType
from django.db import DatabaseError, connection, transaction
from django.db.models import Count, Model
from django.utils import timezone

from agents.brains import services as brain_services
from agents.brains.logic import affect
from agents.brains.logic import memory_json as mj
from agents.brains.logic.caps import cap, clip
from agents.brains.models import Brain, Explored, Goal, Neuron, Record, RecordKind, Synapse, TickRun
from agents.context import services as context_services
from agents.context.models import Agent
from benchmarks.harness import REPO, Report, Row, Scratch, Stats, Table, database_version
from benchmarks.prose import WORDS, prose
from memory import selectors as memory_selectors
from memory import services as memory_services
from memory.models import Node
from memory.services.nodes import NodeSpec, insert_rows
from memsite.llm.models import LLMCall

TICK_TARGET_MS = 100
SAVE_RATIO_TARGET = 100
INSERT_BATCH = 10_000
MODEL = "gpt-4o"
HISTORY = timedelta(days=30)  # the generated entries are spread over the month before the run
TREE_FOLDERS = 12  # folders under /references for the ticks to list, TREE_NOTES notes each
TREE_NOTES = 25
BRAIN_TABLES = (Record, Goal, Explored, Neuron, Synapse, TickRun, Brain)
# Cap names of the collections, as `sizes` counts them: lists (Record kinds), then the others.
COLLECTIONS = (*(kind for _, kind, _ in mj.RECORD_SECTIONS), "goal", "path", "url", "neuron", "synapse", "tick")
ACTIONS = ("read_file", "list_dir", "fetch_url", "reply", "write_note", "idle")
LOG_TYPES = ("thought", "explore_path", "explore_url", "action", "plan", "deep_reflect", "error")


# --- the brain, as memory.json -------------------------------------------------------------------


def sizes(fill: float) -> dict[str, int]:
    """Entries per collection (by cap name) for a brain filled to `fill` of every cap."""
    counts = {name: max(1, round(cap(name) * fill)) for name in COLLECTIONS}
    # Every explored path and URL has its neuron, and `self` is one more.
    counts["neuron"] = max(counts["neuron"], counts["path"] + counts["url"] + 2)
    return counts


def _ms(moment: datetime) -> datetime:
    """To the millisecond, as memory.json writes times."""
    return moment.replace(microsecond=moment.microsecond // 1000 * 1000)


def brain_document(rng: random.Random, counts: dict[str, int], *, now: datetime) -> dict[str, Any]:
    """A memory.json as seed 002's agent would have written it after a month of ticks, with
    `counts` entries per collection: lists oldest first, keyed entries with their own times,
    every explored path and URL a neuron linked to `self`, concepts linked at random."""
    start, span = now - HISTORY, HISTORY - timedelta(hours=1)

    def when(index: int, count: int) -> int:
        return mj.ms(start + span * (index / max(1, count)))

    def sometime() -> datetime:
        return _ms(start + span * rng.random())

    def text(low: int, high: int) -> str:
        return prose(rng, rng.randint(low, high))

    def listed(name: str, entry: Callable[[int, int], Any]) -> list[Any]:
        return [entry(index, when(index, counts[name])) for index in range(counts[name])]

    topics = [f"{rng.choice(WORDS)}-{rng.choice(WORDS)}" for _ in range(200)]
    paths = [f"/references/{rng.choice(topics)}/{rng.choice(WORDS)}-{index}.md" for index in range(counts["path"])]
    urls = [f"https://docs.example.org/{rng.choice(topics)}/{index}" for index in range(counts["url"])]

    def episode(index: int, at: int) -> dict[str, Any]:
        action = rng.choice(ACTIONS)
        where = rng.choice(paths) if action in ("read_file", "list_dir") else None
        what = f"{action} {json.dumps({'path': where} if where else {})}"
        return {"t": at, "type": action, "what": what, "summary": text(8, 30), "where": where}

    def log(index: int, at: int) -> dict[str, Any]:
        kind = rng.choice(LOG_TYPES)
        if kind in ("explore_path", "explore_url"):
            message = rng.choice(paths if kind == "explore_path" else urls)
        else:
            message = text(6, 40)
        return {"t": at, "type": kind, "message": message}

    goals = [
        {
            "id": f"g{index}",
            "text": text(5, 14),
            "status": "done" if index < counts["goal"] * 0.6 else "active",
            "createdAt": when(index, counts["goal"]),
        }
        for index in range(counts["goal"])
    ]

    def neuron(kind: str, label: str, strength: float, last_used: datetime) -> dict[str, Any]:
        key = mj.SELF if kind == mj.SELF else f"{kind}:{label}"
        fields = mj.neuron_fields(key=key, label=label, kind=kind, strength=strength, last_used=last_used)
        return mj.keyed_entry({}, fields)

    neurons = {mj.SELF: neuron(mj.SELF, mj.SELF, 100.0, _ms(now - timedelta(hours=1)))}
    for kind, labels in (("path", paths), ("url", urls)):
        for label in labels:
            neurons[f"{kind}:{label}"] = neuron(kind, label, round(rng.uniform(0.5, 30.0), 2), sometime())
    while len(neurons) < counts["neuron"]:
        label = f"{rng.choice(WORDS)}-{rng.choice(WORDS)}-{len(neurons)}"
        neurons[f"concept:{label}"] = neuron("concept", label, round(rng.uniform(0.5, 30.0), 2), sometime())

    keys = list(neurons)
    pairs = dict.fromkeys((0, index) for index in range(1, min(len(keys), counts["synapse"] + 1)))
    while len(pairs) < counts["synapse"]:
        source, target = rng.randrange(1, len(keys)), rng.randrange(1, len(keys))
        if source != target:
            pairs[(source, target)] = None
    synapses = [
        mj.keyed_entry(
            {},
            mj.synapse_fields(
                source=keys[source], target=keys[target], weight=round(rng.uniform(0.1, 10.0), 2), last_used=sometime()
            ),
        )
        for source, target in pairs
    ]

    return {
        "thoughts": listed("thought", lambda index, at: {"t": at, "text": text(12, 70)}),
        "innerThoughts": listed("inner_thought", lambda index, at: {"t": at, "text": text(8, 30)}),
        "episodes": listed("episode", episode),
        "semanticFacts": listed("fact", lambda index, at: {"fact": text(8, 30), "source": "deep_reflect", "t": at}),
        "exploredPaths": {path: {"at": mj.ms(sometime()), "summary": text(10, 45)} for path in paths},
        "exploredUrls": {url: {"at": mj.ms(sometime()), "summary": text(10, 45)} for url in urls},
        "neurons": neurons,
        "synapses": synapses,
        "chatHistory": listed(
            "chat", lambda index, at: {"role": ("user", "assistant")[index % 2], "content": text(5, 60), "t": at}
        ),
        "logs": listed("log", log),
        "userModel": {"lastMessages": [text(5, 25) for _ in range(counts["user_message"])]},
        "state": {
            "goals": goals,
            "plan": {
                "steps": [
                    f"read_file {rng.choice(paths)}",
                    f"list_dir /references/{rng.choice(topics)}",
                    "write down what you learned",
                ],
                "currentStepIndex": 1,
                "createdAt": when(counts["thought"], counts["thought"]),
            },
            "selfSummary": text(300, 320)[: cap("self_summary_chars")],
            "selfInstructions": [text(6, 16) for _ in range(counts["self_instruction"])],
            "emotions": {"joy": 0.4, "frustration": 0.1, "interest": 0.6, "confusion": 0.05},
            "hormones": {"dopamine": 0.55, "cortisol": 0.45, "serotonin": 0.5},
            "lastUserMessage": text(20, 60)[: cap("last_user_message_chars")],
            "lastError": None,
            "lastDir": "/references",
            "totalReads": counts["path"] * 3,
            "totalFetches": counts["url"],
        },
    }


def document_entries(document: dict[str, Any]) -> int:
    """Entries of a memory.json: what a whole-file save rewrites every time."""
    sections = (
        "thoughts",
        "innerThoughts",
        "episodes",
        "semanticFacts",
        "exploredPaths",
        "exploredUrls",
        "neurons",
        "synapses",
        "chatHistory",
        "logs",
    )
    state = document["state"]
    return (
        sum(len(document[name]) for name in sections)
        + len(document["userModel"]["lastMessages"])
        + len(state["goals"])
        + len(state["selfInstructions"])
    )


# --- the rows brain_import writes for it ---------------------------------------------------------


@dataclass
class BrainRows:
    records: list[tuple]  # (kind, seq, text, data, created_at)
    goals: list[tuple]  # (text, status, data, created_at, done_at)
    explored: list[tuple]  # (kind, key, summary, at, data)
    neurons: list[tuple]  # (key, kind, label, strength, last_used, data)
    synapses: list[tuple]  # (source key, target key, weight, last_used, data)
    fields: dict[str, Any]  # the brain's row
    entries: int

    @property
    def count(self) -> int:
        return sum(len(rows) for rows in (self.records, self.goals, self.explored, self.neurons, self.synapses))


def brain_rows(document: dict[str, Any], *, now: datetime) -> BrainRows:
    """What `brain_import` stores for a clean document within the caps (no missing values, nothing
    to clip, trim or drop), computed as it does with the entry models and helpers of
    `agents.brains.logic.memory_json`, so that the rows can be copied in at once. `check_against_import`
    compares the two."""
    memory = mj.Memory(document)
    records = [
        (kind, seq, clip(entry.main_text(), "entry_chars"), mj.clipped_item(kind, item), entry.t or now)
        for name, kind, model in mj.RECORD_SECTIONS
        for seq, (_, item, entry) in enumerate(memory.items(name, model), 1)
    ]
    goals = []
    for _, item, entry in memory.items("state.goals", mj.GoalEntry):
        created = entry.createdAt or now
        done_at = created if entry.status == Goal.Status.DONE else None
        goals.append((entry.text, entry.status or Goal.Status.ACTIVE, dict(item), created, done_at))
    explored = []
    for kind, name in ((Explored.Kind.PATH, "exploredPaths"), (Explored.Kind.URL, "exploredUrls")):
        for key, item, entry in memory.entries(name, mj.ExploredEntry):
            at, summary = entry.at or now, entry.summary or ""
            data = mj.stored_entry(item, mj.explored_fields(at=at, summary=summary))
            explored.append((kind, key, summary, at, data))
    neurons = []
    for key, item, entry in memory.entries("neurons", mj.NeuronEntry):
        label, kind = entry.label or mj.neuron_label(key), entry.type or mj.neuron_kind(key)
        last_used = entry.lastUsed or now
        fields = mj.neuron_fields(key=key, label=label, kind=kind, strength=entry.strength, last_used=last_used)
        neurons.append((key, kind, label, entry.strength, last_used, mj.stored_entry(item, fields)))
    synapses = []
    for _, item, entry in memory.items("synapses", mj.SynapseEntry):
        last_used = entry.lastStrengthened or now
        fields = mj.synapse_fields(source=entry.fromId, target=entry.toId, weight=entry.weight, last_used=last_used)
        synapses.append((entry.fromId, entry.toId, entry.weight, last_used, mj.stored_entry(item, fields)))
    memory.check()
    state = document["state"]
    brain = {
        "self_summary": clip(state["selfSummary"], "self_summary_chars"),
        "plan": state["plan"]["steps"],
        "plan_step": state["plan"]["currentStepIndex"],
        "emotions": state["emotions"],
        "hormones": state["hormones"],
        "last_user_message": clip(state["lastUserMessage"] or "", "last_user_message_chars"),
        "last_error": clip(state["lastError"] or "", "last_error_chars"),
        "extra_state": {
            **{key: value for key, value in state.items() if key not in mj.STATE_KEYS},
            "plan": {key: value for key, value in state["plan"].items() if key not in mj.PLAN_KEYS},
        },
        "extra_user_model": {key: value for key, value in document["userModel"].items() if key != "lastMessages"},
        "record_seqs": {kind: seq for kind, seq, *_ in records},
        "path_count": sum(1 for row in explored if row[0] == Explored.Kind.PATH),
        "url_count": sum(1 for row in explored if row[0] == Explored.Kind.URL),
        "neuron_count": len(neurons),
        "synapse_count": len(synapses),
    }
    return BrainRows(records, goals, explored, neurons, synapses, brain, document_entries(document))


def _copy(
    model: type[Model], columns: Sequence[str], brain_id: int, rows: Iterable[tuple], json_columns: Sequence[str]
) -> None:
    """Rows of one of the brain's tables, in batches, through `insert_rows` (COPY on PostgreSQL,
    one prepared INSERT elsewhere), as benchmarks/context.py fills its messages."""
    as_json = {index for index, name in enumerate(columns) if name in json_columns}

    def prepared(row: tuple) -> tuple:
        return (
            brain_id,
            *(
                json.dumps(value)
                if index in as_json
                else connection.ops.adapt_datetimefield_value(value)
                if isinstance(value, datetime)
                else value
                for index, value in enumerate(row)
            ),
        )

    batch: list[tuple] = []
    for row in rows:
        batch.append(prepared(row))
        if len(batch) == INSERT_BATCH:
            insert_rows(model, ("brain", *columns), batch)
            batch = []
    insert_rows(model, ("brain", *columns), batch)


STEP_NAMES = ("read", "decide", "act", "reflect", "record")
TICK_COLUMNS = (
    "number",
    "status",
    "action",
    "arguments",
    "outcome",
    "error",
    "steps",
    "emotions",
    "hormones",
    "started_at",
    "ended_at",
)


def tick_history(rng: random.Random, count: int, *, now: datetime) -> list[tuple]:
    """Tick runs as the charts keep them (TICK_COLUMNS), one a little under an hour apart."""
    rows = []
    for number in range(1, count + 1):
        started = _ms(now - HISTORY + (HISTORY - timedelta(hours=1)) * (number / count))
        steps = [{"name": name, "ms": rng.randint(1, 40), "detail": {}} for name in STEP_NAMES]
        rows.append(
            (
                number,
                TickRun.Status.DONE,
                rng.choice(ACTIONS),
                {},
                prose(rng, 12),
                "",
                steps,
                dict(affect.CALM_EMOTIONS),
                dict(affect.BASELINE_HORMONES),
                started,
                started + timedelta(milliseconds=40),
            )
        )
    return rows


def brain_fill(*, agent: Agent, rows: BrainRows, ticks: list[tuple]) -> Brain:
    """The agent's brain (it must have none yet) with the rows copied in, in one transaction."""
    with transaction.atomic():
        brain = Brain.objects.create(agent=agent, tick_count=len(ticks), **rows.fields)
        _copy(Record, ("kind", "seq", "text", "data", "created_at"), brain.pk, rows.records, ("data",))
        _copy(Goal, ("text", "status", "data", "created_at", "done_at"), brain.pk, rows.goals, ("data",))
        _copy(Explored, ("kind", "key", "summary", "at", "data"), brain.pk, rows.explored, ("data",))
        _copy(Neuron, ("key", "kind", "label", "strength", "last_used", "data"), brain.pk, rows.neurons, ("data",))
        ids = dict(Neuron.objects.filter(brain=brain).values_list("key", "id"))
        linked = ((ids[source], ids[target], *rest) for source, target, *rest in rows.synapses)
        _copy(Synapse, ("source", "target", "weight", "last_used", "data"), brain.pk, linked, ("data",))
        _copy(TickRun, TICK_COLUMNS, brain.pk, ticks, ("arguments", "steps", "emotions", "hormones"))
    return brain


def vacuum_analyze() -> None:
    """What autovacuum does soon after a bulk load, of the brain and the tree: planner statistics
    and the visibility map."""
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        for model in (*BRAIN_TABLES, Node):
            cursor.execute(f"VACUUM ANALYZE {connection.ops.quote_name(model._meta.db_table)}")


def table_counts(brain_id: int) -> dict[str, int]:
    """Rows of the brain per collection, by cap name."""
    counts = dict.fromkeys(COLLECTIONS, 0)
    for model in (Record, Explored):
        kinds = model.objects.filter(brain_id=brain_id).values_list("kind").annotate(n=Count("id"))
        counts.update(kinds.values_list("kind", "n"))
    for name, model in (("goal", Goal), ("neuron", Neuron), ("synapse", Synapse), ("tick", TickRun)):
        counts[name] = model.objects.filter(brain_id=brain_id).count()
    return counts


def check_against_import(fill: float, seed: int) -> str:
    """Imports a small generated memory.json through `brain_import` into one agent, copies the
    rows `brain_rows` makes of it into another, and compares the two brains' exports (as JSON
    text: every entry, in order), rows and counters. Raises if anything differs."""
    if not fill:
        return "Not checked against `brain_import` (--check 0)."
    now = timezone.now()
    document = brain_document(random.Random(seed + 1), sizes(fill), now=now)
    imported = context_services.agent_create(name="brain-bench-check-import", model=MODEL)
    copied = context_services.agent_create(name="brain-bench-check-copy", model=MODEL)
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
    references = memory_selectors.node_internal_folder(name="references")
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
    return memory_services.node_bulk_create(parent=references, specs=specs)


# --- what a tick writes --------------------------------------------------------------------------

WRITE = re.compile(r'^\s*(INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+"?(\w+)"?', re.IGNORECASE)


class WriteCounter:
    """A `connection.execute_wrapper`: every query, and of the writes (INSERT, UPDATE, DELETE)
    the statements, the rows they affected (the cursor's rowcount) by table, and their time
    with that of the commits (`commits` also times `connection.commit`, which ends each atomic
    block; a statement outside one commits as it runs)."""

    def __init__(self) -> None:
        self.queries = 0
        self.statements = 0
        self.rows: Counter[str] = Counter()
        self.seconds = 0.0

    def __call__(self, execute, sql, params, many, context):
        started = time.perf_counter()
        result = execute(sql, params, many, context)
        elapsed = time.perf_counter() - started
        self.queries += 1
        written = WRITE.match(sql)
        if written:
            self.statements += 1
            rows = context["cursor"].rowcount
            if rows <= 0 and written.group(1).upper().startswith("INSERT"):
                # SQLite reports no count for an INSERT ... RETURNING before its rows are read;
                # a tick's INSERTs write one row per parameter set.
                rows = len(params) if many else 1
            self.rows[written.group(2)] += rows
            self.seconds += elapsed
        return result

    @contextmanager
    def commits(self) -> Iterator[None]:
        original = connection.commit

        def commit() -> None:
            started = time.perf_counter()
            try:
                original()
            finally:
                self.seconds += time.perf_counter() - started

        connection.commit = commit
        try:
            with connection.execute_wrapper(self):
                yield
        finally:
            del connection.commit


class ProviderClock:
    """The offline provider's own time, measured around its `complete` (what a real provider
    spends waiting for the model). The gateway's ledger row stays in the tick's time."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.calls = 0

    def install(self) -> None:
        from memsite.llm.providers.offline import OfflineProvider

        original = OfflineProvider.complete
        clock = self

        def complete(provider, request, trace):
            started = time.perf_counter()
            try:
                return original(provider, request, trace)
            finally:
                clock.seconds += time.perf_counter() - started
                clock.calls += 1

        OfflineProvider.complete = complete


class WalMeter:
    """Bytes a tick makes the database write to its log, and of those the full-page images
    (None where the log does not tell)."""

    describe = ""

    def start(self) -> None:
        raise NotImplementedError

    def stop(self) -> tuple[int, int | None]:
        raise NotImplementedError

    def close(self) -> None:
        pass


class PostgresWal(WalMeter):
    """The WAL records of the scratch database between two positions, read with pg_walinspect:
    records whose blocks belong to the database, and the commits of their transactions. The
    server's other databases write to the same log (tests run there), so the plain difference
    of positions is used only when the extension cannot be created, and the report says so."""

    def __init__(self) -> None:
        self.begin = ""
        with connection.cursor() as cursor:
            cursor.execute("SELECT oid FROM pg_database WHERE datname = current_database()")
            self.pattern = f"rel [0-9]+/{cursor.fetchone()[0]}/"
            try:
                with transaction.atomic():
                    cursor.execute("CREATE EXTENSION IF NOT EXISTS pg_walinspect")
            except DatabaseError as exc:  # not a superuser, or no contrib package
                self.inspect = False
                self.describe = (
                    f"difference of WAL positions (pg_walinspect unavailable: {type(exc).__name__}); it counts "
                    "whatever else the server wrote meanwhile"
                )
            else:
                self.inspect = True
                self.describe = (
                    "WAL records of the scratch database (pg_walinspect: records whose blocks are the "
                    "database's, and the commits of their transactions), full-page images included"
                )

    def start(self) -> None:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_current_wal_insert_lsn()")
            self.begin = cursor.fetchone()[0]

    def stop(self) -> tuple[int, int | None]:
        with connection.cursor() as cursor:
            # With synchronous_commit every commit of the tick is flushed by now.
            cursor.execute("SELECT pg_current_wal_flush_lsn()")
            end = cursor.fetchone()[0]
            if not self.inspect:
                cursor.execute("SELECT pg_wal_lsn_diff(%s, %s)", [end, self.begin])
                return int(cursor.fetchone()[0]), None
            cursor.execute(
                """
                WITH records AS (
                    SELECT xid, record_length, fpi_length, block_ref ~ %s AS ours
                    FROM pg_get_wal_records_info(%s::pg_lsn, %s::pg_lsn)
                ), transactions AS (
                    SELECT DISTINCT xid FROM records WHERE ours AND xid::text <> '0'
                )
                SELECT coalesce(sum(record_length), 0), coalesce(sum(fpi_length), 0) FROM records
                WHERE ours OR (xid::text <> '0' AND xid IN (SELECT xid FROM transactions))
                """,
                [self.pattern, self.begin, end],
            )
            total, images = cursor.fetchone()
            return int(total), int(images)


class SqliteWal(WalMeter):
    """The growth of the database's -wal file: emptied before each tick (wal_checkpoint
    TRUNCATE, untimed) with automatic checkpoints off, so that after the tick it holds exactly
    the frames the tick appended (page size + 24 bytes each, and a 32-byte header). A checkpoint
    later copies each page into the database file once more."""

    describe = "growth of the SQLite -wal file (the frames the tick appended), truncated before each tick"

    def __init__(self) -> None:
        self.path = Path(f"{connection.settings_dict['NAME']}-wal")
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA wal_autocheckpoint")
            self.autocheckpoint = int(cursor.fetchone()[0])
            cursor.execute("PRAGMA wal_autocheckpoint=0")

    def start(self) -> None:
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            busy, _, _ = cursor.fetchone()
        if busy:
            raise SystemExit("The WAL could not be truncated: another connection is using the database.")

    def stop(self) -> tuple[int, int | None]:
        return (self.path.stat().st_size if self.path.exists() else 0), None

    def close(self) -> None:
        with connection.cursor() as cursor:
            cursor.execute(f"PRAGMA wal_autocheckpoint={self.autocheckpoint}")


def _schedstat(pid: int | str) -> tuple[int, int]:
    """Nanoseconds a process's main thread has run on a CPU, and has waited for one (/proc)."""
    running, waiting, _ = Path(f"/proc/{pid}/schedstat").read_text().split()
    return int(running), int(waiting)


class CpuMeter:
    """CPU time of the benchmark process and of its PostgreSQL backend when the server runs on
    this machine (on SQLite the database works inside the process), and the time both waited for
    a CPU: on a shared machine the wall times grow with the wait, the CPU times much less."""

    def __init__(self) -> None:
        self.backend: int | None = None
        self.describe = "the benchmark process (SQLite works inside it)"

    def start(self) -> tuple[int, int]:
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                pid = cursor.fetchone()[0]
            try:
                local = Path(f"/proc/{pid}/comm").read_text().strip() in ("postgres", "postmaster")
            except OSError:
                local = False
            self.backend = pid if local else None
            self.describe = (
                "the benchmark process and its PostgreSQL backend"
                if local
                else "the benchmark process only (the PostgreSQL server is not on this machine)"
            )
        return self.read()

    def read(self) -> tuple[int, int]:
        running, waiting = _schedstat("self")
        if self.backend is not None:
            backend_running, backend_waiting = _schedstat(self.backend)
            running, waiting = running + backend_running, waiting + backend_waiting
        return running, waiting

    def since(self, start: tuple[int, int]) -> tuple[float, float]:
        """Milliseconds on a CPU and waiting for one since `start`."""
        running, waiting = self.read()
        return (running - start[0]) / 1e6, (waiting - start[1]) / 1e6


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

TASK_ENDED = re.compile(r"Task agents\.tasks\.tick_run\[[^\]]+\] (succeeded|raised|failed)")


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


Workers = list[tuple[subprocess.Popen, Path]]


def _workers_start(count: int, queue: str, logs: Path) -> Workers:
    """Celery workers, one process each (`--concurrency 1`, prefork), with the benchmark's
    environment (the scratch database, the broker, the offline provider), consuming only the
    run's own queue, each logging to a file."""
    workers = []
    for index in range(1, count + 1):
        log = logs / f"worker-{index}.log"
        command = [
            str(Path(sys.executable).parent / "celery"),
            "-A",
            "memsite",
            "worker",
            "--concurrency",
            "1",
            "-n",
            f"brainbench{index}@%h",
            "-Q",
            queue,
            "--loglevel",
            "INFO",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
        ]
        with open(log, "wb") as out:
            process = subprocess.Popen(command, cwd=REPO, env=dict(os.environ), stdout=out, stderr=subprocess.STDOUT)
        workers.append((process, log))
    deadline = time.monotonic() + 120
    for process, log in workers:
        while " ready." not in log.read_text(errors="replace"):
            if process.poll() is not None or time.monotonic() > deadline:
                _workers_stop(workers)
                raise SystemExit(f"A Celery worker did not start; see {log}.")
            time.sleep(0.2)
    return workers


def _workers_stop(workers: Workers) -> None:
    for process, _ in workers:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)  # Celery's warm shutdown
    for process, _ in workers:
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _tasks_ended(workers: Workers) -> Counter[str]:
    ended: Counter[str] = Counter()
    for _, log in workers:
        ended.update(match.group(1) for match in TASK_ENDED.finditer(log.read_text(errors="replace")))
    return ended


def _redis_cleanup(url: str, queue: str) -> None:
    import redis

    client = redis.Redis.from_url(url)
    keys = list(client.scan_iter(match=f"*{queue}*"))
    if keys:
        client.delete(*keys)


def swarm_run(args: argparse.Namespace, rng: random.Random, logs: Path) -> Swarm:
    """`--swarm-agents` agents with brains filled to `--swarm-fill`; `--swarm-rounds` rounds in
    which every agent gets `--swarm-burst` ticks queued back to back, so that the workers often
    take ticks of the same agent at once; the checks, from what the ticks left in the database."""
    from agents.brains.tasks import tick_run as tick_task

    now = timezone.now()
    counts = sizes(args.swarm_fill)
    ids = []
    for index in range(args.swarm_agents):
        agent = context_services.agent_create(name=f"swarm-{index + 1:02d}", model=MODEL)
        rows = brain_rows(brain_document(rng, counts, now=now), now=now)
        brain_fill(agent=agent, rows=rows, ticks=tick_history(rng, counts["tick"], now=now))
        ids.append(agent.pk)
    vacuum_analyze()
    before = dict(Brain.objects.filter(pk__in=ids).values_list("pk", "tick_count"))

    queue = f"brainbench-{os.getpid()}"  # a queue of the run's own, also on a shared Redis
    broker = f"Redis at {args.redis_url}" if args.redis_url else "kombu filesystem broker"
    swarm = Swarm(
        agents=len(ids), workers=args.workers, broker=broker, queued=args.swarm_rounds * len(ids) * args.swarm_burst
    )
    print(f"swarm: starting {args.workers} workers ({broker})", file=sys.stderr)
    workers = _workers_start(args.workers, queue, logs)
    try:
        started_at = timezone.now()
        for _ in range(args.swarm_rounds):
            for agent_id in ids:
                for _ in range(args.swarm_burst):
                    tick_task.apply_async(kwargs={"agent_id": agent_id}, queue=queue)
        print(f"swarm: {swarm.queued:,} ticks queued", file=sys.stderr)
        deadline = time.monotonic() + args.swarm_timeout
        while sum(_tasks_ended(workers).values()) < swarm.queued:
            if time.monotonic() > deadline or any(process.poll() is not None for process, _ in workers):
                swarm.timed_out = True
                break
            time.sleep(0.25)
    finally:
        _workers_stop(workers)
        if args.redis_url:
            _redis_cleanup(args.redis_url, queue)
    ended = _tasks_ended(workers)
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
    own: dict[int, list[tuple]] = {agent_id: [] for agent_id in ids}
    for run in runs:
        own[run[1]].append(run)
    swarm.runs = len(runs)
    swarm.done = sum(1 for run in runs if run[3] == TickRun.Status.DONE)
    swarm.failed = sum(1 for run in runs if run[3] == TickRun.Status.FAILED)
    ended = [run for run in runs if run[5] is not None]
    if ended:
        swarm.seconds = (max(run[5] for run in ended) - started_at).total_seconds()
        swarm.durations = Stats.of([(run[5] - run[4]).total_seconds() * 1000 for run in ended])

    overlaps = sum(
        1
        for mine in own.values()
        for earlier, later in pairwise(mine)
        if earlier[5] is None or later[4] < earlier[5]  # started before the one before it ended
    )
    brains = {brain.pk: brain for brain in Brain.objects.filter(pk__in=ids)}
    gaps = [
        agent_id
        for agent_id, mine in own.items()
        if [run[2] for run in mine] != list(range(before[agent_id] + 1, before[agent_id] + len(mine) + 1))
        or brains[agent_id].tick_count != before[agent_id] + len(mine)
    ]
    running = TickRun.objects.filter(brain_id__in=ids, status=TickRun.Status.RUNNING).count()
    leased = sum(1 for brain in brains.values() if brain.lease_until is not None)

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
    swarm.checks = [
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


def _ms_text(value: float) -> str:
    return f"{value:.1f}" if value < 10 else f"{value:,.0f}"


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
        p50, p95 = _ms_text(swarm.durations.p50), _ms_text(swarm.durations.p95)
        rows.append(("a run on a worker, start to end (p50 / p95)", f"{p50} / {p95} ms", ""))
    rows += [(check, found, "✓" if passed else "✗") for check, found, passed in swarm.checks]
    return Table(("swarm", "measured", "check"), rows, align="lll")


def profile(agent_id: int, ticks: int) -> str:
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(ticks):
        brain_services.tick_run(agent_id=agent_id)
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out).strip_dirs()
    stats.sort_stats("tottime").print_stats(20)
    stats.sort_stats("cumulative").print_stats(40)
    return out.getvalue()


def command(args: argparse.Namespace) -> str:
    words = ["python benchmarks/brain.py", *sys.argv[1:]]
    if args.database_url and not any(word.startswith("--database-url") for word in sys.argv[1:]):
        words.insert(0, f"DATABASE_URL={args.database_url}")
    return " ".join(words)


def describe_brain(counts: dict[str, int], fill: float, seconds: float, entries: int) -> str:
    at_caps = all(counts[name] == cap(name) for name in COLLECTIONS)
    listed = ", ".join(f"{counts[name]:,} {name.replace('_', ' ')}" for name in COLLECTIONS)
    state = "every collection at its cap ✓" if at_caps else f"{fill:g} of every cap"
    return (
        f"The measured brain (by cap name): {listed}; {entries:,} memory.json entries, {state}. Generated and "
        f"copied in in {seconds:.1f} s."
    )


def run(args: argparse.Namespace, scratch: Scratch) -> Report:
    load = os.getloadavg()[0]  # other work on the machine shows up in every number below
    rng = random.Random(args.seed)
    var_dir = Path(os.environ["MEMSITE_VAR_DIR"])
    print(f"checking the bulk fill against brain_import ({args.check:g} of every cap)", file=sys.stderr)
    checked = check_against_import(args.check, args.seed)
    nodes = tree_build(rng)

    print(f"generating a brain at {args.fill:g} of every cap", file=sys.stderr)
    started = time.perf_counter()
    now = timezone.now()
    counts = sizes(args.fill)
    rows = brain_rows(brain_document(rng, counts, now=now), now=now)
    agent = context_services.agent_create(name="brain-bench", model=MODEL)
    print(f"copying in a brain of {rows.count:,} rows", file=sys.stderr)
    brain_fill(agent=agent, rows=rows, ticks=tick_history(rng, counts["tick"], now=now))
    vacuum_analyze()
    built = describe_brain(table_counts(agent.pk), args.fill, time.perf_counter() - started, rows.entries)
    # The generated rows are millions of Python objects (700,000 rows at the caps) that a worker
    # would not hold: every full garbage collection during the timings would walk them.
    del rows
    gc.collect()
    if args.gc_freeze:
        gc.freeze()

    clock = ProviderClock()
    clock.install()
    wal = PostgresWal() if scratch.vendor == "postgresql" else SqliteWal()
    cpu = CpuMeter()
    # Ticks and saves in turn, so that both meet the same load from whatever else the machine runs.
    print(
        f"{args.warmup} ticks and a save untimed, then {args.ticks} ticks and {args.baseline_runs} saves in turn",
        file=sys.stderr,
    )
    path = var_dir / "memory.json"
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
    after = table_counts(agent.pk)

    if args.profile:
        print(f"\n=== cProfile: {args.ticks} ticks ===\n{profile(agent.pk, args.ticks)}", file=sys.stderr)

    swarm = swarm_run(args, rng, var_dir) if args.swarm_agents else None

    overhead = Stats.of([s.overhead_ms for s in samples])
    filled = "at its caps" if args.fill == 1 else f"at {args.fill:g} of its caps"
    report = BrainReport(title=f"Agent brains on {database_version(scratch.vendor)}, one brain {filled}")
    report.rows = [
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
    report.tables = [writes_table(samples, saves[-1])]
    if swarm:
        report.tables.append(swarm_table(swarm))
    report.preamble = [
        (
            f"{date.today()}, {os.cpu_count()} CPUs (load average {load:.1f} at the start), "
            f"Python {platform.python_version()}, {database_version(scratch.vendor)}."
        ),
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
        f"Command: `{command(args)}`",
    ]
    report.notes = notes(args, samples, saves, after, wal, cpu, swarm)
    return report


def notes(
    args: argparse.Namespace,
    samples: list[TickSample],
    saves: list[SaveSample],
    after: dict[str, int],
    wal: WalMeter,
    cpu: CpuMeter,
    swarm: Swarm | None,
) -> list[str]:
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
    save = saves[-1]

    def p50(values: Iterable[float]) -> str:
        return f"{Stats.of(list(values)).p50:,.0f}"

    lines = [
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
