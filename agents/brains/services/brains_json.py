"""memory.json into and out of a brain: her `Memory.load()` and `Memory.save()` (seed 002). An
import replaces the whole brain, checked in full before anything is written; an export writes it
back in the same format. Explained in docs/memory-json.md."""

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from django.db import connection, models, transaction
from django.utils import timezone

from agents.brains.logic import memory_json as mj
from agents.brains.logic.caps import cap, clip
from agents.brains.models import Brain, BrainExtra, Explored, Goal, Neuron, Record, Synapse
from agents.brains.services.brains import (
    GOAL_CHARS,
    MAX_KEY_CHARS,
    SELF,
    STRENGTH_MAX,
    WEIGHT_MAX,
    brain_writing,
)
from agents.context.models import Agent
from agents.context.selectors import message_chat_lines
from agents.context.services import ChatLine, conversation_replace
from agents.fields import column_field, max_chars

BATCH_SIZE = 2_000  # rows per INSERT (Django splits further where the database needs it)
CHUNK_SIZE = 2_000  # rows per fetch when exporting
NEURON_KEY_CHARS = max_chars(Neuron, "key")
LABEL_CHARS = max_chars(Neuron, "label")
# Columns of the rows `_insert` writes, after the brain.
RECORD_COLUMNS = ("kind", "seq", "text", "data", "created_at")
EXPLORED_COLUMNS = ("kind", "key", "summary", "at", "data")
NEURON_COLUMNS = ("key", "kind", "label", "strength", "last_used", "data")
SYNAPSE_COLUMNS = ("source", "target", "weight", "last_used", "data")
TEXT_FIELDS = {  # memory.json's state texts, with the brain fields they go to
    "selfSummary": "self_summary",
    "lastUserMessage": "last_user_message",
    "lastError": "last_error",
}
EXPLORED_SECTIONS: dict[str, str] = {Explored.Kind.PATH: "exploredPaths", Explored.Kind.URL: "exploredUrls"}


@dataclass
class ImportReport:
    """What an import did, by memory.json's names (`thoughts`, `state.goals`, ...)."""

    imported: dict[str, int] = field(default_factory=dict)  # entries stored
    # left out to keep a cap: the oldest, the least used
    trimmed: dict[str, int] = field(default_factory=dict)
    dropped: dict[str, int] = field(default_factory=dict)  # left out as unusable
    clipped: dict[str, int] = field(default_factory=dict)  # texts cut to their character cap
    # top-level keys kept as they are, unused (`embeddings`, `fileContents`, ...)
    kept_keys: list[str] = field(default_factory=list)
    added_self_neuron: bool = False

    def count(self, tally: dict[str, int], name: str, by: int = 1) -> None:
        if by:
            tally[name] = tally.get(name, 0) + by

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class _Explored:
    position: int
    key: str
    summary: str
    at: datetime
    item: Any


@dataclass(slots=True)
class _Neuron:
    position: int
    key: str
    kind: str
    label: str
    strength: float
    last_used: datetime
    item: Any


@dataclass(slots=True)
class _Synapse:
    position: int
    source: str
    target: str
    weight: float
    last_used: datetime
    item: Any


def brain_import(*, agent: Agent, document: bytes | str | Mapping[str, Any]) -> ImportReport:
    """Replace the agent's brain with a memory.json document (bytes, text or parsed).

    Refused, with nothing changed: a document that is not JSON, not an object, too deeply
    nested or of wrong types (InvalidInput, naming each problem's path), or over
    MEMSITE_BRAIN_IMPORT_MAX_BYTES (TooLarge). Left out and reported: entries over a cap
    (`trimmed`); explored paths, URLs and neurons whose keys are empty or longer than a key may
    be, and synapses whose ends are missing, that join a neuron to itself or repeat a pair
    (the later one is kept), and chat lines without text (`dropped`).

    The file's chatHistory replaces the agent's conversation (docs/memory-json.md); a file
    without one leaves the conversation as it is."""
    memory = mj.Memory(mj.load(document))
    now = timezone.now()
    report = ImportReport(kept_keys=memory.kept_keys)
    records = _records(memory, report, now=now)
    chat = _chat_lines(memory, report, now=now)
    goals = _goals(memory, report, agent=agent, now=now)
    explored = {kind: _explored(memory, report, kind=kind, now=now) for kind in EXPLORED_SECTIONS}
    neurons = _neurons(memory, report, now=now)
    synapses = _synapses(memory, report, neurons={neuron.key for neuron in neurons}, now=now)
    fields = _state(memory, report)
    kept = _kept(memory, report)
    memory.check()

    with brain_writing(agent=agent) as writer:
        brain = writer.brain
        _clear(brain)
        Goal.objects.bulk_create(goals)
        _insert(Record, RECORD_COLUMNS, brain, records)
        for kind, rows in explored.items():
            _insert(Explored, EXPLORED_COLUMNS, brain, (_explored_row(kind, row) for row in rows))
        _insert(Neuron, NEURON_COLUMNS, brain, map(_neuron_row, neurons))
        ids = dict(Neuron.objects.filter(brain=brain).values_list("key", "id"))
        _insert(Synapse, SYNAPSE_COLUMNS, brain, (_synapse_row(row, ids) for row in synapses))
        if kept:
            BrainExtra.objects.create(brain=brain, document=kept)
        if chat is not None:
            conversation_replace(agent=agent, lines=chat)
        writer.set(
            **fields,
            # in order: the last is the highest
            record_seqs={kind: seq for kind, seq, *_ in records},
            record_floors={},  # numbered from 1 again
            path_count=len(explored[Explored.Kind.PATH]),
            url_count=len(explored[Explored.Kind.URL]),
            neuron_count=len(neurons),
            synapse_count=len(synapses),
        )
    return report


def brain_export(*, agent: Agent) -> dict[str, Any]:
    """The agent's brain as a memory.json document, read in one transaction with the brain's
    row locked, so that no tick's writes show half done; its chatHistory is the conversation's
    newest chat lines."""
    with transaction.atomic():
        brain = Brain.objects.select_for_update().filter(pk=agent.pk).first()
        chat = _export_chat(agent)
        if brain is None:
            return {**mj.default_document(at=timezone.now()), mj.CHAT_SECTION: chat}
        lists = _export_lists(brain)
        explored = _export_explored(brain)
        neurons, keys = _export_neurons(brain)
        synapses = _export_synapses(brain, keys)
        goals = [
            mj.goal_entry(text=text, status=status, data=data)
            for text, status, data in Goal.objects.filter(brain=brain)
            .order_by("id")
            .values_list("text", "status", "data")
        ]
        kept = BrainExtra.objects.filter(brain=brain).values_list("document", flat=True).first()

    user_model = {"lastMessages": lists.pop("userModel.lastMessages")}
    user_model.update((key, value) for key, value in brain.extra_user_model.items() if key not in user_model)
    return {
        "thoughts": lists["thoughts"],
        "innerThoughts": lists["innerThoughts"],
        "episodes": lists["episodes"],
        "semanticFacts": lists["semanticFacts"],
        "exploredPaths": explored[Explored.Kind.PATH],
        "exploredUrls": explored[Explored.Kind.URL],
        "neurons": neurons,
        "synapses": synapses,
        mj.CHAT_SECTION: chat,
        "logs": lists["logs"],
        **mj.kept_defaults(),
        **(kept or {}),
        "userModel": user_model,
        "state": _export_state(brain, goals, lists["state.selfInstructions"]),
    }


# Reading the brain's rows into the document --------------------------------------------


def _export_lists(brain: Brain) -> dict[str, list[Any]]:
    lists: dict[str, list[Any]] = {name: [] for name, _, _ in mj.RECORD_SECTIONS}
    section_of: dict[str, str] = {kind: name for name, kind, _ in mj.RECORD_SECTIONS}
    rows = Record.objects.filter(brain=brain).order_by("kind", "seq").values_list("kind", "text", "data", "created_at")
    for kind, text, data, at in rows.iterator(chunk_size=CHUNK_SIZE):
        lists[section_of[kind]].append(mj.record_entry(kind=kind, text=text, data=data, at=at))
    return lists


def _export_chat(agent: Agent) -> list[Any]:
    return [
        mj.keyed_entry(line.data, mj.chat_line_fields(role=line.role, content=line.content, at=line.created_at))
        for line in message_chat_lines(agent=agent, limit=cap(mj.CHAT_CAP))
    ]


def _export_explored(brain: Brain) -> dict[str, dict[str, Any]]:
    explored: dict[str, dict[str, Any]] = {kind: {} for kind in EXPLORED_SECTIONS}
    rows = Explored.objects.filter(brain=brain).order_by("id").values_list("kind", "key", "summary", "at", "data")
    for kind, key, summary, at, data in rows.iterator(chunk_size=CHUNK_SIZE):
        explored[kind][key] = mj.keyed_entry(data, mj.explored_fields(at=at, summary=summary))
    return explored


def _export_neurons(brain: Brain) -> tuple[dict[str, Any], dict[int, str]]:
    """The neurons by key, and the keys by row id (for the synapses)."""
    neurons: dict[str, Any] = {}
    keys: dict[int, str] = {}
    rows = (
        Neuron.objects.filter(brain=brain)
        .order_by("id")
        .values_list("id", "key", "kind", "label", "strength", "last_used", "data")
    )
    for pk, key, kind, label, strength, last_used, data in rows.iterator(chunk_size=CHUNK_SIZE):
        keys[pk] = key
        fields = mj.neuron_fields(key=key, label=label, kind=kind, strength=strength, last_used=last_used)
        neurons[key] = mj.keyed_entry(data, fields)
    return neurons, keys


def _export_synapses(brain: Brain, keys: dict[int, str]) -> list[dict[str, Any]]:
    synapses: list[dict[str, Any]] = []
    rows = (
        Synapse.objects.filter(brain=brain)
        .order_by("id")
        .values_list("source_id", "target_id", "weight", "last_used", "data")
    )
    for source, target, weight, last_used, data in rows.iterator(chunk_size=CHUNK_SIZE):
        fields = mj.synapse_fields(source=keys[source], target=keys[target], weight=weight, last_used=last_used)
        synapses.append(mj.keyed_entry(data, fields))
    return synapses


def _export_state(brain: Brain, goals: list[Any], self_instructions: list[Any]) -> dict[str, Any]:
    """`state` as her load reads it back: texts her clears to null are null when empty, and
    emotions and hormones are there only when the brain has them."""
    extra_state = dict(brain.extra_state)
    state = {
        "goals": goals,
        "plan": mj.plan_entry(list(brain.plan), brain.plan_step, extra_state.pop("plan", None)),
        "selfSummary": brain.self_summary,
        "selfInstructions": self_instructions,
        "lastUserMessage": brain.last_user_message or None,
        "lastError": brain.last_error or None,
    }
    for name, levels in (("emotions", brain.emotions), ("hormones", brain.hormones)):
        if levels:
            state[name] = levels
    state.update((key, value) for key, value in extra_state.items() if key not in state)
    return state


# Reading the document into rows ----------------------------------------------------------------


def _records(memory: mj.Memory, report: ImportReport, *, now: datetime) -> list[tuple]:
    rows = []
    for name, kind, model in mj.RECORD_SECTIONS:
        first_kept = max(0, memory.length(name) - cap(kind))
        seq = 0
        for index, item, entry in memory.items(name, model):
            if index < first_kept:
                continue  # checked all the same: a document is refused for any wrong entry
            text = entry.main_text()
            clipped = clip(text, "entry_chars")
            report.count(report.clipped, name, clipped != text)
            seq += 1
            data = mj.clipped_item(kind, item)
            rows.append((kind, seq, clipped, data, entry.t or now))
        report.count(report.imported, name, seq)
        report.count(report.trimmed, name, first_kept)
    return rows


def _chat_lines(memory: mj.Memory, report: ImportReport, *, now: datetime) -> list[ChatLine] | None:
    """The conversation the file's chatHistory makes: its newest lines within the `chat` cap,
    each kept as a message whose `data` writes the entry back as the file has it; None when
    the file has no chatHistory."""
    name = mj.CHAT_SECTION
    if memory.section(name) is None:
        return None
    first_kept = max(0, memory.length(name) - cap(mj.CHAT_CAP))
    lines = []
    for index, item, entry in memory.items(name, mj.ChatEntry):
        text = entry.main_text()
        if index < first_kept:
            continue  # checked all the same: a document is refused for any wrong entry
        if not text.strip():
            report.count(report.dropped, name)  # a message says something
            continue
        content = clip(text, "entry_chars")
        report.count(report.clipped, name, content != text)
        role, at = mj.chat_role(entry), entry.t or now
        data = mj.stored_entry(item, mj.chat_line_fields(role=role, content=content, at=at))
        lines.append(ChatLine(role=role, content=content, created_at=at, data=data))
    report.count(report.imported, name, len(lines))
    report.count(report.trimmed, name, first_kept)
    return lines


def _goals(memory: mj.Memory, report: ImportReport, *, agent: Agent, now: datetime) -> list[Goal]:
    name = "state.goals"
    first_kept = max(0, memory.length(name) - cap("goal"))
    rows = []
    for index, item, entry in memory.items(name, mj.GoalEntry):
        if index < first_kept:
            continue
        text = entry.text or ""
        data = dict(item) if isinstance(item, dict) else {"text": item}
        if len(text) > GOAL_CHARS:
            text = data["text"] = text[:GOAL_CHARS]
            report.count(report.clipped, name)
        status = entry.status or Goal.Status.ACTIVE
        created_at = entry.createdAt or now
        done_at = created_at if status == Goal.Status.DONE else None  # her keeps no such time
        rows.append(
            Goal(
                brain_id=agent.pk,
                text=text,
                status=status,
                data=data,
                created_at=created_at,
                done_at=done_at,
            )
        )
    report.count(report.imported, name, len(rows))
    report.count(report.trimmed, name, first_kept)
    return rows


def _explored(memory: mj.Memory, report: ImportReport, *, kind: str, now: datetime) -> list[_Explored]:
    name = EXPLORED_SECTIONS[kind]
    rows = []
    for position, (key, item, entry) in enumerate(memory.entries(name, mj.ExploredEntry)):
        if not key or len(key) > MAX_KEY_CHARS:
            report.count(report.dropped, name)
            continue
        summary = clip(entry.summary or "", "entry_chars")
        report.count(report.clipped, name, summary != (entry.summary or ""))
        rows.append(_Explored(position, key, summary, entry.at or now, item))
    kept = mj.most_recent(rows, cap(kind), lambda row: row.at)
    report.count(report.imported, name, len(kept))
    report.count(report.trimmed, name, len(rows) - len(kept))
    return kept


def _neurons(memory: mj.Memory, report: ImportReport, *, now: datetime) -> list[_Neuron]:
    rows = []
    myself = None
    for position, (key, item, entry) in enumerate(memory.entries("neurons", mj.NeuronEntry)):
        if not key or len(key) > NEURON_KEY_CHARS:
            report.count(report.dropped, "neurons")
            continue
        label = entry.label if entry.label is not None else mj.neuron_label(key)
        report.count(report.clipped, "neurons", len(label) > LABEL_CHARS)
        strength = 1.0 if entry.strength is None else min(STRENGTH_MAX, max(0.0, entry.strength))
        kind = entry.type or mj.neuron_kind(key)
        row = _Neuron(position, key, kind, label[:LABEL_CHARS], strength, entry.lastUsed or now, item)
        if key == SELF:
            myself = row
        else:
            rows.append(row)
    if myself is None:
        myself = _Neuron(-1, SELF, SELF, SELF, 1.0, now, None)
        report.added_self_neuron = True
    kept = mj.most_recent(rows, cap("neuron") - 1, lambda row: row.last_used)
    report.count(report.trimmed, "neurons", len(rows) - len(kept))
    kept = sorted([myself, *kept], key=lambda row: row.position)
    report.count(report.imported, "neurons", len(kept) - (1 if report.added_self_neuron else 0))
    return kept


def _synapses(memory: mj.Memory, report: ImportReport, *, neurons: set[str], now: datetime) -> list[_Synapse]:
    pairs: dict[tuple[str, str], _Synapse] = {}
    for position, item, entry in memory.items("synapses", mj.SynapseEntry):
        source, target = entry.fromId, entry.toId
        if source not in neurons or target not in neurons or source == target:
            report.count(report.dropped, "synapses")
            continue
        if pairs.pop((source, target), None) is not None:
            report.count(report.dropped, "synapses")
        weight = 0.1 if entry.weight is None else min(WEIGHT_MAX, max(0.0, entry.weight))
        last_used = entry.lastStrengthened or now
        pairs[(source, target)] = _Synapse(position, source, target, weight, last_used, item)
    rows = list(pairs.values())
    kept = mj.most_recent(rows, cap("synapse"), lambda row: row.last_used)
    report.count(report.imported, "synapses", len(kept))
    report.count(report.trimmed, "synapses", len(rows) - len(kept))
    return sorted(kept, key=lambda row: row.position)


def _state(memory: mj.Memory, report: ImportReport) -> dict[str, Any]:
    """The brain's fields from `state` and `userModel`: what the file has, and nothing it has
    not (no emotions or hormones for a file without them)."""
    state = memory.outline.state
    raw_state = memory.section("state") or {}
    fields: dict[str, Any] = {}
    for key, name in TEXT_FIELDS.items():
        text = getattr(state, key, None) or ""
        fields[name] = clip(text, f"{name}_chars")
        report.count(report.clipped, f"state.{key}", fields[name] != text)

    plan = state.plan if state is not None else None
    given = list(plan.steps or []) if plan is not None else []
    steps = [clip(step, "entry_chars") if isinstance(step, str) else step for step in given]
    current = (plan.currentStepIndex or 0) if plan is not None else 0
    steps, current = mj.plan_steps(steps, current)
    report.count(report.trimmed, "state.plan.steps", len(given) - len(steps))
    fields["plan"], fields["plan_step"] = steps, current

    # The file's own numbers (a JSON 1 stays 1).
    fields["emotions"] = raw_state.get("emotions") or {}
    fields["hormones"] = raw_state.get("hormones") or {}

    extra_state = {key: value for key, value in raw_state.items() if key not in mj.STATE_KEYS}
    raw_plan = raw_state.get("plan") or {}
    plan_extra = {key: value for key, value in raw_plan.items() if key not in mj.PLAN_KEYS}
    if plan_extra:
        extra_state["plan"] = plan_extra
    fields["extra_state"] = extra_state
    raw_user_model = memory.section("userModel") or {}
    fields["extra_user_model"] = {key: value for key, value in raw_user_model.items() if key != "lastMessages"}
    return fields


def _kept(memory: mj.Memory, report: ImportReport) -> dict[str, Any]:
    """The top-level keys a brain does not use, as the file has them; embeddings to their cap
    (the newest, as her load keeps them)."""
    kept = {key: memory.raw[key] for key in memory.kept_keys}
    embeddings = kept.get("embeddings")
    if isinstance(embeddings, list):
        first_kept = max(0, len(embeddings) - cap("embedding"))
        kept["embeddings"] = embeddings[first_kept:]
        report.count(report.imported, "embeddings", len(embeddings) - first_kept)
        report.count(report.trimmed, "embeddings", first_kept)
    return kept


# Writing rows ------------------------------------------------------------------------------------


def _clear(brain: Brain) -> None:
    """Delete the brain's collections. Synapses go first: then nothing refers to the neurons,
    which are deleted in one statement rather than fetched for Django to cascade."""
    Synapse.objects.filter(brain=brain).delete()
    with connection.cursor() as cursor:
        table = connection.ops.quote_name(Neuron._meta.db_table)
        cursor.execute(f"DELETE FROM {table} WHERE brain_id = %s", [brain.pk])
    Record.objects.filter(brain=brain).delete()
    Goal.objects.filter(brain=brain).delete()
    Explored.objects.filter(brain=brain).delete()
    BrainExtra.objects.filter(brain=brain).delete()


def _insert(model: type[models.Model], columns: Sequence[str], brain: Brain, rows: Iterable[tuple]) -> None:
    """Insert the brain's rows (values for `columns`, after the brain) in batches, each one
    statement run over many rows: building a model instance per row would take most of the time
    of an import at the caps."""
    fields = [column_field(model, name) for name in ("brain", *columns)]
    table = connection.ops.quote_name(model._meta.db_table)
    names = ", ".join(connection.ops.quote_name(field.column) for field in fields)
    sql = f"INSERT INTO {table} ({names}) VALUES ({', '.join(['%s'] * len(fields))})"
    prepared = [
        (index, field)
        for index, field in enumerate(fields)
        if isinstance(field, models.DateTimeField | models.JSONField)
    ]
    empty_json = {
        index: field.get_db_prep_save({}, connection)
        for index, field in prepared
        if isinstance(field, models.JSONField)
    }
    with connection.cursor() as cursor:
        for batch in _batches(rows, BATCH_SIZE):
            values = []
            for row in batch:
                value = [brain.pk, *row]
                for index, field in prepared:
                    if index in empty_json and value[index] == {}:
                        value[index] = empty_json[index]
                    else:
                        value[index] = field.get_db_prep_save(value[index], connection)
                values.append(value)
            cursor.executemany(sql, values)


def _batches(rows: Iterable[Any], size: int) -> Iterator[list[Any]]:
    batch = []
    for row in rows:
        batch.append(row)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _explored_row(kind: str, row: _Explored) -> tuple:
    data = mj.stored_entry(row.item, mj.explored_fields(at=row.at, summary=row.summary))
    return (kind, row.key, row.summary, row.at, data)


def _neuron_row(row: _Neuron) -> tuple:
    fields = mj.neuron_fields(
        key=row.key, label=row.label, kind=row.kind, strength=row.strength, last_used=row.last_used
    )
    data = mj.stored_entry(row.item, fields) if row.item is not None else {}
    return (row.key, row.kind, row.label, row.strength, row.last_used, data)


def _synapse_row(row: _Synapse, ids: dict[str, int]) -> tuple:
    fields = mj.synapse_fields(source=row.source, target=row.target, weight=row.weight, last_used=row.last_used)
    data = mj.stored_entry(row.item, fields)
    return (ids[row.source], ids[row.target], row.weight, row.last_used, data)
