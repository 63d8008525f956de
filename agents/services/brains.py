"""Writing to brains. Every write goes through `brain_writing`, which locks the brain's row for
one transaction and hands out a `BrainWrite`: appends and upserts that keep every cap, each at
the same cost whatever the collection's size. Ticks, chat, goals and memory.json imports all
write this way, so they never interleave on one brain."""

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from agents.brain import affect
from agents.brain.caps import cap, clip
from agents.brain.memory_json import clipped_item
from agents.models import Agent, Brain, Explored, Goal, Neuron, Record, RecordKind, Synapse
from memsite.errors import Conflict, InvalidInput, NotFound

SELF = "self"
NEURON_KINDS = ("self", "path", "url", "concept")
MAX_KEY_CHARS = Explored._meta.get_field("key").max_length
GOAL_CHARS = Goal._meta.get_field("text").max_length
STRENGTH_MAX = 100.0
WEIGHT_MAX = 10.0


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

    def record(self, *, kind: str, text: str, item: Mapping[str, Any], at: datetime) -> Record:
        """Append to a list collection; the oldest beyond the cap goes. `item` is the entry
        as memory.json has it."""
        if kind not in RecordKind.values:
            raise InvalidInput(f"Unknown brain collection {kind!r}.")
        last = (
            Record.objects.filter(brain=self.brain, kind=kind).order_by("-seq").values_list("seq", flat=True).first()
            or 0
        )
        record = Record.objects.create(
            brain=self.brain,
            kind=kind,
            seq=last + 1,
            text=clip(text, "entry_chars"),
            data=clipped_item(kind, item),
            created_at=at,
        )
        Record.objects.filter(brain=self.brain, kind=kind, seq__lte=last + 1 - cap(kind)).delete()
        return record

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

    def explored(self, *, kind: str, key: str, summary: str, at: datetime) -> Explored:
        """Mark a path or URL explored (again); the least recently explored beyond the cap goes."""
        if not key or len(key) > MAX_KEY_CHARS:
            raise InvalidInput(f"An explored {kind} must be 1 to {MAX_KEY_CHARS} characters.")
        count = "path_count" if kind == Explored.Kind.PATH else "url_count"
        summary = clip(summary, "entry_chars")
        updated = Explored.objects.filter(brain=self.brain, kind=kind, key=key).update(summary=summary, at=at)
        if not updated:
            created = Explored.objects.create(brain=self.brain, kind=kind, key=key, summary=summary, at=at)
            self._grow(count, +1)
            if getattr(self.brain, count) > cap(kind):
                others = Explored.objects.filter(brain=self.brain, kind=kind).exclude(pk=created.pk)
                oldest = others.order_by("at", "id").first()
                oldest.delete()
                self._grow(count, -1)
        return Explored.objects.get(brain=self.brain, kind=kind, key=key)

    def neuron(
        self, *, kind: str, label: str, at: datetime, strength: float = 1.0, item: Mapping[str, Any] | None = None
    ) -> Neuron:
        """Strengthen a neuron, or make it; the least recently used one (never `self`) beyond
        the cap goes, with its synapses."""
        if kind not in NEURON_KINDS:
            raise InvalidInput(f"A neuron's kind is one of {', '.join(NEURON_KINDS)}.")
        key = neuron_key(kind, label)
        neuron = Neuron.objects.filter(brain=self.brain, key=key).first()
        if neuron is not None:
            neuron.strength = min(STRENGTH_MAX, neuron.strength + strength)
            neuron.last_used = at
            neuron.save(update_fields=["strength", "last_used"])
            return neuron
        neuron = Neuron.objects.create(
            brain=self.brain, key=key, kind=kind, label=label[:512], strength=strength, last_used=at, data=dict(item or {})
        )
        self._grow("neuron_count", +1)
        if self.brain.neuron_count > cap("neuron"):
            oldest = Neuron.objects.filter(brain=self.brain).exclude(key=SELF).exclude(pk=neuron.pk)
            self._forget(oldest.order_by("last_used", "id").first())
        return neuron

    def connect(self, source: Neuron, target: Neuron, *, at: datetime, weight: float = 0.1) -> Synapse:
        """Strengthen the link from `source` to `target`, or make it; the least recently used
        link beyond the cap goes."""
        synapse = Synapse.objects.filter(source=source, target=target).first()
        if synapse is not None:
            synapse.weight = min(WEIGHT_MAX, synapse.weight + weight)
            synapse.last_used = at
            synapse.save(update_fields=["weight", "last_used"])
            return synapse
        synapse = Synapse.objects.create(brain=self.brain, source=source, target=target, weight=weight, last_used=at)
        self._grow("synapse_count", +1)
        if self.brain.synapse_count > cap("synapse"):
            Synapse.objects.filter(brain=self.brain).exclude(pk=synapse.pk).order_by("last_used", "id").first().delete()
            self._grow("synapse_count", -1)
        return synapse

    def _forget(self, neuron: Neuron) -> None:
        # The synapses go with the neuron (on delete cascade): Django deletes them by source or
        # target alone, which SQLite finds through the two ends' indexes. Filtered by brain as
        # well, SQLite chose the brain's index and scanned every synapse of the brain (0.5 s at
        # the 500,000 cap).
        _, deleted = neuron.delete()
        self._grow("synapse_count", -deleted.get(Synapse._meta.label, 0))
        self._grow("neuron_count", -1)

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
        goal = brain.goal(text=text.strip(), item={"text": text.strip(), "status": "active"}, at=now)
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
        Goal.objects.filter(pk=goal.pk).update(status=Goal.Status.DONE, done_at=now, data={**goal.data, "status": "done"})
        brain.record(kind=RecordKind.LOG, text=f"goal done: {goal.text}", item=_log("goal_done", goal.text, now), at=now)
    goal.refresh_from_db()
    return goal


def _log(kind: str, message: str, at: datetime) -> dict[str, Any]:
    return {"type": kind, "message": message, "at": at.isoformat()}
