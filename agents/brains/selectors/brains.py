"""Reads of agents' brains (seed 002), for the API and the dashboard: each costs the same however
large the brain has grown (keyset pages; nothing counts a whole collection). An agent whose brain
has not been made yet reads as an empty one at rest. Explained in docs/brains.md."""

from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import F, Model, QuerySet, Window
from django.db.models.functions import RowNumber
from django.utils import timezone

from agents.brains.logic import affect
from agents.brains.logic.affect import AffectPoint
from agents.brains.models import Brain, Explored, Goal, Neuron, Record, RecordKind, Synapse, TickRun
from agents.context.models import Agent

# A neuron's links shown on the dashboard, each way.
LINKS_PER_NEURON = 5


@dataclass(frozen=True)
class BrainCollection:
    """A collection of a brain as the API lists it: `ordering` is newest first and unique
    within the brain, so that a page ends at a key the next page starts after."""

    name: str  # as in URLs: "inner-thoughts"
    label: str
    model: type[Model]
    ordering: str
    kind: str = ""  # the Record or Explored kind it holds

    @property
    def key(self) -> str:
        return self.ordering.lstrip("-")


def _records(kind: RecordKind, name: str) -> BrainCollection:
    return BrainCollection(name=name, label=str(kind.label), model=Record, ordering="-seq", kind=kind.value)


BRAIN_COLLECTIONS: dict[str, BrainCollection] = {
    collection.name: collection
    for collection in (
        _records(RecordKind.THOUGHT, "thoughts"),
        _records(RecordKind.INNER_THOUGHT, "inner-thoughts"),
        _records(RecordKind.EPISODE, "episodes"),
        _records(RecordKind.FACT, "facts"),
        _records(RecordKind.SELF_INSTRUCTION, "self-instructions"),
        _records(RecordKind.LOG, "logs"),
        BrainCollection("explored-paths", "explored paths", Explored, "-id", Explored.Kind.PATH),
        BrainCollection("explored-urls", "explored URLs", Explored, "-id", Explored.Kind.URL),
        BrainCollection("neurons", "neurons", Neuron, "-id"),
        BrainCollection("synapses", "synapses", Synapse, "-id"),
        BrainCollection("ticks", "ticks", TickRun, "-number"),
    )
}
# The counts the brain's state gives: one per collection, named as in Python (and goals).
RECORD_COUNTS = {c.kind: c.name.replace("-", "_") for c in BRAIN_COLLECTIONS.values() if c.model is Record}
KEYED_COUNTS = ("explored_paths", "explored_urls", "neurons", "synapses", "ticks")


@dataclass(frozen=True)
class BrainPlan:
    steps: list[str]
    current: int | None  # the index of the step being worked on; None once every step is done

    @property
    def current_step(self) -> str | None:
        return self.steps[self.current] if self.current is not None else None


@dataclass(frozen=True)
class BrainTicking:
    ticking: bool  # beat starts a tick every interval
    interval_s: int
    next_tick_at: datetime | None
    tick_count: int
    running: TickRun | None  # the tick under way, if any
    last: TickRun | None  # the newest tick that has ended

    @property
    def idle(self) -> bool:
        """Not ticking and no tick under way: nothing changes unless someone asks for a tick."""
        return not self.ticking and self.running is None


@dataclass(frozen=True)
class BrainState:
    brain: Brain
    exists: bool  # False: the agent has no brain yet; this one is the empty brain it would get
    counts: dict[str, int]
    newest: dict[str, int]  # the newest seq of each list collection with entries
    goals: list[Goal]
    plan: BrainPlan
    ticking: BrainTicking


@dataclass(frozen=True)
class NeuronLinks:
    neuron: Neuron
    outgoing: list[Synapse] = field(default_factory=list)  # strongest first, with their targets
    incoming: list[Synapse] = field(default_factory=list)  # strongest first, with their sources


def brain_or_empty(*, agent: Agent) -> tuple[Brain, bool]:
    """The agent's brain, and whether it exists; without one, the empty brain it would get
    (not saved)."""
    brain = Brain.objects.filter(pk=agent.pk).first()
    if brain is not None:
        return brain, True
    return Brain(agent=agent, emotions=dict(affect.CALM_EMOTIONS), hormones=dict(affect.BASELINE_HORMONES)), False


def brain_plan(*, brain: Brain) -> BrainPlan:
    steps = [step if isinstance(step, str) else str(step) for step in (brain.plan or [])]
    current = brain.plan_step if 0 <= brain.plan_step < len(steps) else None
    return BrainPlan(steps=steps, current=current)


def brain_record_spans(*, brain: Brain) -> dict[str, tuple[int, int]]:
    """The first and last seq of each list collection that has entries, from the brain's row:
    a collection holds the seqs above its floor up to its last, without gaps."""
    floors = brain.record_floors
    return {
        kind: (floors.get(kind, 0) + 1, last) for kind, last in brain.record_seqs.items() if last > floors.get(kind, 0)
    }


def brain_counts(*, brain: Brain) -> dict[str, int]:
    """Entries per collection: the list collections' from the span of their seqs (see
    `brain_record_spans`), the keyed ones from the brain's row."""
    spans = brain_record_spans(brain=brain)
    counts = {name: spans[kind][1] - spans[kind][0] + 1 if kind in spans else 0 for kind, name in RECORD_COUNTS.items()}
    # Tick runs are capped (a thousand by default) and read through the (brain, number) index.
    counts["ticks"] = TickRun.objects.filter(brain_id=brain.pk).count()
    counts.update(
        explored_paths=brain.path_count,
        explored_urls=brain.url_count,
        neurons=brain.neuron_count,
        synapses=brain.synapse_count,
    )
    return counts


def brain_goals(*, brain: Brain) -> list[Goal]:
    """The brain's goals (a score at most), active first, oldest first within each."""
    goals = Goal.objects.filter(brain_id=brain.pk).order_by("created_at", "id")
    return sorted(goals, key=lambda goal: goal.status != Goal.Status.ACTIVE)


def brain_ticking(*, brain: Brain) -> BrainTicking:
    """Whether the brain ticks, and its ticks under way and last ended. A run is under way while
    its tick holds the brain's lease; one left `running` by a worker that died is not."""
    ticks = TickRun.objects.filter(brain_id=brain.pk).defer("steps", "arguments", "outcome")
    running = None
    if brain.lease_until is not None and brain.lease_until > timezone.now():
        running = ticks.filter(status=TickRun.Status.RUNNING).order_by("-number").first()
    last = ticks.exclude(status=TickRun.Status.RUNNING).order_by("-number").first()
    return BrainTicking(
        ticking=brain.ticking,
        interval_s=brain.tick_interval_s,
        next_tick_at=brain.next_tick_at,
        tick_count=brain.tick_count,
        running=running,
        last=last,
    )


def brain_state(*, agent: Agent) -> BrainState:
    brain, exists = brain_or_empty(agent=agent)
    goals = brain_goals(brain=brain) if exists else []
    counts = brain_counts(brain=brain) if exists else dict.fromkeys([*RECORD_COUNTS.values(), *KEYED_COUNTS], 0)
    counts["goals"] = len(goals)
    return BrainState(
        brain=brain,
        exists=exists,
        counts=counts,
        newest={kind: last for kind, (_, last) in brain_record_spans(brain=brain).items()},
        goals=goals,
        plan=brain_plan(brain=brain),
        ticking=brain_ticking(brain=brain),
    )


def brain_collection_list(*, agent: Agent, name: str) -> QuerySet:
    """One of the brain's collections (BRAIN_COLLECTIONS), newest first: slice it, or page through
    it by its collection's key."""
    collection = BRAIN_COLLECTIONS[name]
    rows = collection.model._default_manager.filter(brain_id=agent.pk)
    if collection.kind:
        rows = rows.filter(kind=collection.kind)
    if collection.model is Synapse:
        ends = (f"{end}__{column}" for end in ("source", "target") for column in ("id", "key", "kind", "label"))
        rows = rows.select_related("source", "target").only("id", "weight", "last_used", *ends)
    return rows.order_by(collection.ordering)


def brain_records_newest(*, agent: Agent, kind: str, limit: int) -> list[Record]:
    """The newest `limit` entries of a list collection, newest first."""
    return list(Record.objects.filter(brain_id=agent.pk, kind=kind).order_by("-seq")[:limit])


def brain_records_texts(*, agent: Agent, records: set[tuple[str, int]]) -> dict[tuple[str, int], str]:
    """The texts of the entries given as (kind, seq) that the brain still keeps."""
    kinds, seqs = {kind for kind, _ in records}, {seq for _, seq in records}
    found = Record.objects.filter(brain_id=agent.pk, kind__in=kinds, seq__in=seqs).values_list("kind", "seq", "text")
    return {(kind, seq): text for kind, seq, text in found if (kind, seq) in records}


def neuron_strongest(*, agent: Agent, limit: int, links: int = LINKS_PER_NEURON) -> list[NeuronLinks]:
    """The `limit` strongest neurons, each with its `links` strongest synapses each way: three
    queries whatever the brain's size. Ranking a neuron's synapses reads all of that neuron's
    (through the pair and target indexes), so it costs what the listed neurons' degrees are."""
    neurons = list(Neuron.objects.filter(brain_id=agent.pk).order_by("-strength", "id")[:limit])
    if not neurons:
        return []
    ids = [neuron.pk for neuron in neurons]
    outgoing = _strongest_links(Synapse.objects.filter(source_id__in=ids), end="source", other="target", links=links)
    incoming = _strongest_links(Synapse.objects.filter(target_id__in=ids), end="target", other="source", links=links)
    return [
        NeuronLinks(neuron=neuron, outgoing=outgoing.get(neuron.pk, []), incoming=incoming.get(neuron.pk, []))
        for neuron in neurons
    ]


def _strongest_links(synapses: QuerySet[Synapse], *, end: str, other: str, links: int) -> dict[int, list[Synapse]]:
    ranked = (
        synapses.annotate(
            rank=Window(RowNumber(), partition_by=[F(f"{end}_id")], order_by=[F("weight").desc(), F("id").asc()])
        )
        .filter(rank__lte=links)
        .select_related(other)
        .only(
            "id",
            "weight",
            "last_used",
            "source",
            "target",
            *(f"{other}__{column}" for column in ("id", "key", "kind", "label")),
        )
    )
    by_neuron: dict[int, list[Synapse]] = {}
    for synapse in ranked:
        by_neuron.setdefault(getattr(synapse, f"{end}_id"), []).append(synapse)
    for found in by_neuron.values():
        found.sort(key=lambda synapse: (-synapse.weight, synapse.pk))
    return by_neuron


def brain_affect_history(*, agent: Agent, ticks: int) -> list[AffectPoint]:
    """The emotions and hormones the last `ticks` ended ticks left, oldest first."""
    rows = (
        TickRun.objects.filter(brain_id=agent.pk)
        .exclude(status=TickRun.Status.RUNNING)
        .order_by("-number")
        .values_list("number", "started_at", "emotions", "hormones")[:ticks]
    )
    return [
        AffectPoint(number=number, at=at, emotions=emotions or {}, hormones=hormones or {})
        for number, at, emotions, hormones in reversed(list(rows))
    ]
