"""Writing to brains. Every write goes through `brain_writing`, which locks the brain's row for
one transaction and hands out a `BrainWrite`: appends and upserts that keep every cap, each at
the same cost whatever the collection's size. Ticks, chat, goals and memory.json imports all
write this way, so they never interleave on one brain."""

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any, TypeVar

from django.db import transaction
from django.db.models import Case, F, FloatField, Value, When
from django.db.models.functions import Least
from django.utils import timezone

from agents.brains.logic import affect
from agents.brains.logic import memory_json as mj
from agents.brains.logic.caps import cap, clip
from agents.brains.models import Brain, Explored, Goal, Neuron, Record, RecordKind, Synapse
from agents.brains.selectors.ticks import records_in_ranges
from agents.context.models import Agent
from agents.fields import max_chars
from memsite.errors import Conflict, InvalidInput, NotFound

SELF = "self"
NEURON_KINDS = ("self", "path", "url", "concept")
MAX_KEY_CHARS = max_chars(Explored, "key")
GOAL_CHARS = max_chars(Goal, "text")
STRENGTH_MAX = 100.0
WEIGHT_MAX = 10.0
# The rows `BrainWrite._strengthen` adds to and marks used.
Strengthened = TypeVar("Strengthened", Neuron, Synapse)


def neuron_key(kind: str, label: str) -> str:
    return SELF if kind == SELF else f"{kind}:{label}"


def brain_create(*, agent: Agent) -> Brain:
    """The agent's brain, made with its `self` neuron if it has none yet."""
    with transaction.atomic():
        brain, created = Brain.objects.get_or_create(
            agent=agent, defaults={"emotions": affect.CALM_EMOTIONS, "hormones": affect.BASELINE_HORMONES}
        )
        if created:
            BrainWrite(brain).neuron(kind=SELF, label=SELF, at=timezone.now())
            brain.save(update_fields=["neuron_count"])
    return brain


class BrainWrite:
    """Writes to one locked brain within one transaction (see `brain_writing`)."""

    def __init__(self, brain: Brain):
        self.brain = brain
        self.changed: set[str] = set()  # fields of the brain's row to save

    def set(self, **fields: Any) -> None:
        """State fields of the brain's row (texts are clipped to their caps)."""
        for name, value in fields.items():
            if name in ("self_summary", "last_user_message", "last_error"):
                value = clip(value, f"{name}_chars")
            elif name == "plan":
                value = list(value)[: cap("plan_steps")]
            setattr(self.brain, name, value)
            self.changed.add(name)

    def record(self, *, kind: str, text: str, item: Mapping[str, Any] | str, at: datetime) -> Record:
        """Append to a list collection (see `records`)."""
        return self.records([(kind, text, item)], at=at)[0]

    def records(self, entries: Sequence[tuple[str, str, Mapping[str, Any] | str]], *, at: datetime) -> list[Record]:
        """Append to list collections, in order: (kind, text, item) each, `item` the entry as
        memory.json has it (`memory_json.entry` shapes one as her writes it). One INSERT, and
        one DELETE of the oldest beyond each cap (those above the collection's floor: a cap
        lowered in settings takes the rest at once)."""
        seqs = dict(self.brain.record_seqs)
        rows = []
        for kind, text, item in entries:
            if kind not in RecordKind.values:
                raise InvalidInput(f"Unknown brain collection {kind!r}.")
            seqs[kind] = seqs.get(kind, 0) + 1
            rows.append(
                Record(
                    brain=self.brain,
                    kind=kind,
                    seq=seqs[kind],
                    text=clip(text, "entry_chars"),
                    data=mj.clipped_item(kind, item),
                    created_at=at,
                )
            )
        Record.objects.bulk_create(rows)
        self.set(record_seqs=seqs)
        floors = dict(self.brain.record_floors)
        beyond = {
            kind: (floors.get(kind, 0), seqs[kind] - cap(kind))
            for kind in {row.kind for row in rows}
            if seqs[kind] - cap(kind) > floors.get(kind, 0)
        }
        if beyond:
            Record.objects.filter(pk__in=records_in_ranges(brain=self.brain, ranges=beyond).values("pk")).delete()
            self.set(record_floors={**floors, **{kind: high for kind, (_, high) in beyond.items()}})
        return rows

    def goal(self, *, text: str, status: str = Goal.Status.ACTIVE, item: Mapping[str, Any], at: datetime) -> Goal:
        """Add a goal. At the cap the oldest done goal makes room; with every goal active there
        is none to drop, and the goal is refused."""
        if Goal.objects.filter(brain=self.brain).count() >= cap("goal"):
            oldest_done = Goal.objects.filter(brain=self.brain, status=Goal.Status.DONE).order_by("created_at", "id")
            dropped = oldest_done.first()
            if dropped is None:
                raise Conflict(f"The agent has {cap('goal')} active goals, its limit: complete one first.")
            dropped.delete()
        done_at = at if status == Goal.Status.DONE else None
        return Goal.objects.create(
            brain=self.brain, text=text[:GOAL_CHARS], status=status, data=dict(item), created_at=at, done_at=done_at
        )

    def explored(self, *, kind: str, key: str, summary: str, at: datetime, folder: bool = False) -> bool:
        """Mark a path or URL explored (again), and say whether it is new; the least recently
        explored beyond the cap goes."""
        if not key or len(key) > MAX_KEY_CHARS:
            raise InvalidInput(f"An explored {kind} must be 1 to {MAX_KEY_CHARS} characters.")
        count = "path_count" if kind == Explored.Kind.PATH else "url_count"
        summary = clip(summary, "entry_chars")
        fields = {"summary": summary, "at": at, "folder": folder}
        if Explored.objects.filter(brain=self.brain, kind=kind, key=key).update(**fields):
            return False
        created = Explored.objects.create(brain=self.brain, kind=kind, key=key, **fields)
        self._grow(count, +1)
        if getattr(self.brain, count) > cap(kind):
            others = Explored.objects.filter(brain=self.brain, kind=kind).exclude(pk=created.pk)
            Explored.objects.filter(pk__in=others.order_by("at", "id").values("pk")[:1]).delete()
            self._grow(count, -1)
        return True

    def folders_spent(self, paths: Sequence[str]) -> None:
        """Listed folders found with nothing left to explore: no longer looked in for what to
        explore next, until they are listed again."""
        if paths:
            listed = Explored.objects.filter(brain=self.brain, kind=Explored.Kind.PATH, key__in=paths, folder=True)
            listed.update(folder=False)

    def neuron(self, *, kind: str, label: str, at: datetime, strength: float = 1.0) -> Neuron:
        """Strengthen a neuron, or make it (see `neurons`)."""
        return self.neurons([(kind, label, strength)], at=at)[0]

    def neurons(self, wanted: Sequence[tuple[str, str, float]], *, at: datetime) -> list[Neuron]:
        """Strengthen neurons, or make them: (kind, label, strength) each, the neurons back in
        that order; a SELECT, an UPDATE and an INSERT, however many. The least recently used
        neurons beyond the cap (never `self`, nor one of these) go, with their synapses."""
        for kind, _, _ in wanted:
            if kind not in NEURON_KINDS:
                raise InvalidInput(f"A neuron's kind is one of {', '.join(NEURON_KINDS)}.")
        keys = [neuron_key(kind, label) for kind, label, _ in wanted]
        found = {neuron.key: neuron for neuron in Neuron.objects.filter(brain=self.brain, key__in=set(keys))}
        new = [
            (key, {"key": key, "kind": kind, "label": label[:512]}, by)
            for key, (kind, label, by) in zip(keys, wanted, strict=True)
        ]
        neurons, made = self._strengthen(Neuron, found, new, field="strength", maximum=STRENGTH_MAX, at=at)
        self._grow("neuron_count", made)
        excess = self.brain.neuron_count - cap("neuron")
        if excess > 0:
            others = Neuron.objects.filter(brain=self.brain).exclude(key=SELF).exclude(pk__in={n.pk for n in neurons})
            # The synapses go with the neurons (on delete cascade): Django deletes them by source
            # or target alone, which SQLite finds through the two ends' indexes. Filtered by brain
            # as well, SQLite chose the brain's index and scanned every synapse of the brain (0.5 s
            # at the 500,000 cap).
            _, deleted = Neuron.objects.filter(pk__in=others.order_by("last_used", "id").values("pk")[:excess]).delete()
            self._grow("synapse_count", -deleted.get(Synapse._meta.label, 0))
            self._grow("neuron_count", -deleted.get(Neuron._meta.label, 0))
        return neurons

    def connect(self, source: Neuron, target: Neuron, *, at: datetime, weight: float = 0.1) -> None:
        """Strengthen the link from `source` to `target`, or make it (see `connect_all`)."""
        self.connect_all([(source, target)], at=at, weight=weight)

    def connect_all(self, pairs: Sequence[tuple[Neuron, Neuron]], *, at: datetime, weight: float = 0.1) -> None:
        """Strengthen the link from each source to its target, or make it; a SELECT, an UPDATE
        and an INSERT, however many. The least recently used links beyond the cap go."""
        if not pairs:
            return
        wanted = [(source.pk, target.pk) for source, target in pairs]
        # Every link between the sources and the targets (a few more than wanted at most), found
        # through the (source, target) index.
        between = Synapse.objects.filter(source__in={s for s, _ in wanted}, target__in={t for _, t in wanted})
        found = {(synapse.source_id, synapse.target_id): synapse for synapse in between}
        found = {pair: found[pair] for pair in wanted if pair in found}
        new = [(pair, {"source_id": pair[0], "target_id": pair[1]}, weight) for pair in wanted]
        synapses, made = self._strengthen(Synapse, found, new, field="weight", maximum=WEIGHT_MAX, at=at)
        self._grow("synapse_count", made)
        excess = self.brain.synapse_count - cap("synapse")
        if excess > 0:
            others = Synapse.objects.filter(brain=self.brain).exclude(pk__in={s.pk for s in synapses})
            oldest = Synapse.objects.filter(pk__in=others.order_by("last_used", "id").values("pk")[:excess])
            self._grow("synapse_count", -oldest.delete()[0])

    def _strengthen(
        self,
        model: type[Strengthened],
        found: dict[Any, Strengthened],
        wanted: list[tuple[Any, dict[str, Any], float]],
        *,
        field: str,
        maximum: float,
        at: datetime,
    ) -> tuple[list[Strengthened], int]:
        """Add to `field` of each wanted row (up to `maximum`) and mark it used: (key, the new
        row's fields, how much) each; `found` holds the rows there are, by key. One UPDATE and one
        INSERT; the rows back in order, and how many were made."""
        added: dict[Any, float] = {}
        for key, _, by in wanted:
            added[key] = added.get(key, 0.0) + by
        rows, made = dict(found), []
        for key, fields, _ in wanted:
            if key not in rows:
                rows[key] = model(brain=self.brain, **fields, **{field: 0.0})
                made.append(rows[key])
        for key, row in rows.items():
            setattr(row, field, min(maximum, getattr(row, field) + added[key]))
            row.last_used = at
        if found:
            amounts = {added[key] for key in found}
            # One amount for all, as for a tick's links, needs no CASE to build and send.
            amount = (
                Value(amounts.pop())
                if len(amounts) == 1
                else Case(*(When(pk=row.pk, then=Value(added[key])) for key, row in found.items()))
            )
            grown = Least(F(field) + amount, Value(maximum), output_field=FloatField())
            model.objects.filter(pk__in=[row.pk for row in found.values()]).update(**{field: grown, "last_used": at})
        if made:
            # The made rows get their ids from the INSERT (PostgreSQL, SQLite 3.35 and later):
            # links to new neurons, and the cap's forgetting, need them.
            model.objects.bulk_create(made)
        return [rows[key] for key, _, _ in wanted], len(made)

    def _grow(self, field: str, by: int) -> None:
        setattr(self.brain, field, getattr(self.brain, field) + by)
        self.changed.add(field)

    def flush(self) -> None:
        if self.changed:
            self.brain.save(update_fields=[*sorted(self.changed), "updated_at"])
            self.changed.clear()


@contextmanager
def brain_writing(*, agent: Agent) -> Iterator[BrainWrite]:
    """One transaction of writes to the agent's brain, its row locked throughout."""
    with transaction.atomic():
        brain = Brain.objects.select_for_update().filter(pk=agent.pk).first()
        if brain is None:  # made here, once; every later write finds it with the lock
            brain_create(agent=agent)
            brain = Brain.objects.select_for_update().get(pk=agent.pk)
        writer = BrainWrite(brain)
        yield writer
        writer.flush()


def goal_create(*, agent: Agent, text: str) -> Goal:
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput("A goal needs text.")
    if len(text) > GOAL_CHARS:
        raise InvalidInput(f"A goal is at most {GOAL_CHARS} characters.")
    now = timezone.now()
    with brain_writing(agent=agent) as brain:
        goal = brain.goal(text=text.strip(), item=mj.goal_item(text=text.strip(), at=now), at=now)
        brain.record(kind=RecordKind.LOG, text=f"goal added: {goal.text}", item=_log("goal", goal.text, now), at=now)
    return goal


def goal_complete(*, agent: Agent, goal_id: int) -> Goal:
    now = timezone.now()
    with brain_writing(agent=agent) as brain:
        goal = Goal.objects.filter(brain=brain.brain, pk=goal_id).first()
        if goal is None:
            raise NotFound(f"Agent {agent.pk} has no goal {goal_id}.")
        if goal.status == Goal.Status.DONE:
            raise Conflict(f"Goal {goal_id} is already done.")
        Goal.objects.filter(pk=goal.pk).update(
            status=Goal.Status.DONE, done_at=now, data={**goal.data, "status": "done"}
        )
        brain.record(
            kind=RecordKind.LOG, text=f"goal done: {goal.text}", item=_log("goal_done", goal.text, now), at=now
        )
    goal.refresh_from_db()
    return goal


def _log(kind: str, message: str, at: datetime) -> dict[str, Any]:
    return mj.entry(RecordKind.LOG, message, at, type=kind)
