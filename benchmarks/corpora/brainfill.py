"""A generated brain: a memory.json as seed 002's agent would have written it after a month of
ticks, the rows `brain_import` stores for it, and a bulk fill that copies those rows in at once
(far faster than importing). Used by the brain and load benchmarks; needs Django set up."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import connection, transaction
from django.db.models import Count, Model

from agents.brains.logic import affect
from agents.brains.logic import memory_json as mj
from agents.brains.logic.caps import cap, clip
from agents.brains.models import Brain, Explored, Goal, Neuron, Record, Synapse, TickRun
from agents.context.models import Agent, Message
from agents.context.services import ChatLine, conversation_replace
from benchmarks.corpora.prose import WORDS, prose
from memory.services.nodes import insert_rows

MODEL = "gpt-4o"
INSERT_BATCH = 10_000
HISTORY = timedelta(days=30)  # the generated entries are spread over the month before the run
# Cap names of the collections, as `sizes` counts them: lists (Record kinds), then the others.
COLLECTIONS = (
    *(kind for _, kind, _ in mj.RECORD_SECTIONS),
    mj.CHAT_CAP,  # chat lines are the agent's conversation: messages
    "goal",
    "path",
    "url",
    "neuron",
    "synapse",
    "tick",
)
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
    made = _Generator(rng, counts, now)
    goals = made.goals()
    neurons = made.neurons()
    synapses = made.synapses(list(neurons))
    # In this order: every entry takes its randomness from `rng` in turn.
    return {
        "thoughts": made.listed("thought", lambda index, at: {"t": at, "text": made.text(12, 70)}),
        "innerThoughts": made.listed("inner_thought", lambda index, at: {"t": at, "text": made.text(8, 30)}),
        "episodes": made.listed("episode", made.episode),
        "semanticFacts": made.listed(
            "fact", lambda index, at: {"fact": made.text(8, 30), "source": "deep_reflect", "t": at}
        ),
        "exploredPaths": {path: {"at": mj.ms(made.sometime()), "summary": made.text(10, 45)} for path in made.paths},
        "exploredUrls": {url: {"at": mj.ms(made.sometime()), "summary": made.text(10, 45)} for url in made.urls},
        "neurons": neurons,
        "synapses": synapses,
        "chatHistory": made.listed(
            "chat", lambda index, at: {"role": ("user", "assistant")[index % 2], "content": made.text(5, 60), "t": at}
        ),
        "logs": made.listed("log", made.log),
        "userModel": {"lastMessages": [made.text(5, 25) for _ in range(counts["user_message"])]},
        "state": made.state(goals),
    }


class _Generator:
    """The entries of one generated memory.json, all drawn from one random generator."""

    def __init__(self, rng: random.Random, counts: dict[str, int], now: datetime) -> None:
        self.rng, self.counts, self.now = rng, counts, now
        self.start, self.span = now - HISTORY, HISTORY - timedelta(hours=1)
        self.topics = [f"{rng.choice(WORDS)}-{rng.choice(WORDS)}" for _ in range(200)]
        self.paths = [
            f"/references/{rng.choice(self.topics)}/{rng.choice(WORDS)}-{index}.md" for index in range(counts["path"])
        ]
        self.urls = [f"https://docs.example.org/{rng.choice(self.topics)}/{index}" for index in range(counts["url"])]

    def when(self, index: int, count: int) -> int:
        return mj.ms(self.start + self.span * (index / max(1, count)))

    def sometime(self) -> datetime:
        return _ms(self.start + self.span * self.rng.random())

    def text(self, low: int, high: int) -> str:
        return prose(self.rng, self.rng.randint(low, high))

    def listed(self, name: str, entry: Callable[[int, int], Any]) -> list[Any]:
        count = self.counts[name]
        return [entry(index, self.when(index, count)) for index in range(count)]

    def episode(self, index: int, at: int) -> dict[str, Any]:
        action = self.rng.choice(ACTIONS)
        where = self.rng.choice(self.paths) if action in ("read_file", "list_dir") else None
        what = f"{action} {json.dumps({'path': where} if where else {})}"
        return {"t": at, "type": action, "what": what, "summary": self.text(8, 30), "where": where}

    def log(self, index: int, at: int) -> dict[str, Any]:
        kind = self.rng.choice(LOG_TYPES)
        if kind in ("explore_path", "explore_url"):
            message = self.rng.choice(self.paths if kind == "explore_path" else self.urls)
        else:
            message = self.text(6, 40)
        return {"t": at, "type": kind, "message": message}

    def goals(self) -> list[dict[str, Any]]:
        count = self.counts["goal"]
        return [
            {
                "id": f"g{index}",
                "text": self.text(5, 14),
                "status": "done" if index < count * 0.6 else "active",
                "createdAt": self.when(index, count),
            }
            for index in range(count)
        ]

    def neurons(self) -> dict[str, Any]:
        """`self`, a neuron per explored path and URL, then concepts up to the count."""

        def neuron(kind: str, label: str, strength: float, last_used: datetime) -> dict[str, Any]:
            key = mj.SELF if kind == mj.SELF else f"{kind}:{label}"
            fields = mj.neuron_fields(key=key, label=label, kind=kind, strength=strength, last_used=last_used)
            return mj.keyed_entry({}, fields)

        rng = self.rng
        neurons = {mj.SELF: neuron(mj.SELF, mj.SELF, 100.0, _ms(self.now - timedelta(hours=1)))}
        for kind, labels in (("path", self.paths), ("url", self.urls)):
            for label in labels:
                neurons[f"{kind}:{label}"] = neuron(kind, label, round(rng.uniform(0.5, 30.0), 2), self.sometime())
        while len(neurons) < self.counts["neuron"]:
            label = f"{rng.choice(WORDS)}-{rng.choice(WORDS)}-{len(neurons)}"
            neurons[f"concept:{label}"] = neuron("concept", label, round(rng.uniform(0.5, 30.0), 2), self.sometime())
        return neurons

    def synapses(self, keys: list[str]) -> list[dict[str, Any]]:
        """`self` linked to the first neurons, then pairs of the others at random."""
        rng, count = self.rng, self.counts["synapse"]
        pairs = dict.fromkeys((0, index) for index in range(1, min(len(keys), count + 1)))
        while len(pairs) < count:
            source, target = rng.randrange(1, len(keys)), rng.randrange(1, len(keys))
            if source != target:
                pairs[(source, target)] = None
        return [
            mj.keyed_entry(
                {},
                mj.synapse_fields(
                    source=keys[source],
                    target=keys[target],
                    weight=round(rng.uniform(0.1, 10.0), 2),
                    last_used=self.sometime(),
                ),
            )
            for source, target in pairs
        ]

    def state(self, goals: list[dict[str, Any]]) -> dict[str, Any]:
        rng, counts = self.rng, self.counts
        return {
            "goals": goals,
            "plan": {
                "steps": [
                    f"read_file {rng.choice(self.paths)}",
                    f"list_dir /references/{rng.choice(self.topics)}",
                    "write down what you learned",
                ],
                "currentStepIndex": 1,
                "createdAt": self.when(counts["thought"], counts["thought"]),
            },
            "selfSummary": self.text(300, 320)[: cap("self_summary_chars")],
            "selfInstructions": [self.text(6, 16) for _ in range(counts["self_instruction"])],
            "emotions": {"joy": 0.4, "frustration": 0.1, "interest": 0.6, "confusion": 0.05},
            "hormones": {"dopamine": 0.55, "cortisol": 0.45, "serotonin": 0.5},
            "lastUserMessage": self.text(20, 60)[: cap("last_user_message_chars")],
            "lastError": None,
            "lastDir": "/references",
            "totalReads": counts["path"] * 3,
            "totalFetches": counts["url"],
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
    chat: list[ChatLine]  # the conversation
    goals: list[tuple]  # (text, status, data, created_at, done_at)
    explored: list[tuple]  # (kind, key, summary, at, data)
    neurons: list[tuple]  # (key, kind, label, strength, last_used, data)
    synapses: list[tuple]  # (source key, target key, weight, last_used, data)
    fields: dict[str, Any]  # the brain's row
    entries: int

    @property
    def count(self) -> int:
        return sum(
            len(rows) for rows in (self.records, self.chat, self.goals, self.explored, self.neurons, self.synapses)
        )


def brain_rows(document: dict[str, Any], *, now: datetime) -> BrainRows:
    """What `brain_import` stores for a clean document within the caps (no missing values, nothing
    to clip, trim or drop), computed as it does with the entry models and helpers of
    `agents.brains.logic.memory_json`, so that the rows can be copied in at once. The brain benchmark
    compares the two."""
    memory = mj.Memory(document)
    records = [
        (kind, seq, clip(entry.main_text(), "entry_chars"), mj.clipped_item(kind, item), entry.t or now)
        for name, kind, model in mj.RECORD_SECTIONS
        for seq, (_, item, entry) in enumerate(memory.items(name, model), 1)
    ]
    chat = []
    for _, item, entry in memory.items(mj.CHAT_SECTION, mj.ChatEntry):
        role, content, at = mj.chat_role(entry), clip(entry.main_text(), "entry_chars"), entry.t or now
        data = mj.stored_entry(item, mj.chat_line_fields(role=role, content=content, at=at))
        chat.append(ChatLine(role=role, content=content, created_at=at, data=data))
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
    return BrainRows(records, chat, goals, explored, neurons, synapses, brain, document_entries(document))


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
        conversation_replace(agent=agent, lines=rows.chat)  # a cap of 200 lines: written as an import writes them
    return brain


def table_counts(brain_id: int) -> dict[str, int]:
    """Rows of the brain per collection, by cap name."""
    counts = dict.fromkeys(COLLECTIONS, 0)
    for model in (Record, Explored):
        kinds = model.objects.filter(brain_id=brain_id).values_list("kind").annotate(n=Count("id"))
        counts.update(kinds.values_list("kind", "n"))
    for name, model in (("goal", Goal), ("neuron", Neuron), ("synapse", Synapse), ("tick", TickRun)):
        counts[name] = model.objects.filter(brain_id=brain_id).count()
    counts[mj.CHAT_CAP] = Message.objects.filter(agent_id=brain_id).count()  # a brain's id is its agent's
    return counts
