"""Reads of a brain that a tick and chat make (seed 002's getters): the recent entries of its
collections, its active goals, what it has explored, its strongest associations, and its
tick runs."""

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TypedDict, cast

from django.db.models import Exists, OuterRef, QuerySet, Value
from django.db.models.functions import Concat, Length

from agents.brains.models import Brain, Explored, Goal, Neuron, Record, RecordKind, TickRun
from agents.context.models import Agent
from memory import selectors as memory_selectors

SELF = "self"


def records_in_ranges(*, brain: Brain, ranges: Mapping[str, tuple[int, int]]) -> QuerySet[Record]:
    """The brain's entries of each kind with `low < seq <= high`, as one UNION ALL of index
    range reads: with the ranges ORed, SQLite read every entry of the brain."""
    parts = [
        Record.objects.filter(brain=brain, kind=kind, seq__gt=low, seq__lte=high)
        for kind, (low, high) in ranges.items()
    ]
    if len(parts) < 2:
        return parts[0] if parts else Record.objects.none()
    return parts[0].union(*parts[1:], all=True)


def brain_records(*, brain: Brain, counts: Mapping[str, int]) -> dict[str, list[Record]]:
    """The newest entries of list collections, `count` of each kind, oldest first, in one query:
    a collection's entries are numbered without gaps up to the brain's last seq of its kind."""
    newest: dict[str, list[Record]] = {kind: [] for kind in counts}
    last = {kind: brain.record_seqs.get(kind, 0) for kind, count in counts.items() if count > 0}
    ranges = {kind: (last[kind] - counts[kind], last[kind]) for kind in last}
    for record in records_in_ranges(brain=brain, ranges=ranges).order_by("kind", "seq"):
        newest[record.kind].append(record)
    return newest


def brain_goals_active(*, brain: Brain) -> list[Goal]:
    """Active goals, oldest first: the first is the primary goal."""
    return list(Goal.objects.filter(brain=brain, status=Goal.Status.ACTIVE).order_by("created_at", "id"))


def brain_explored_recent(*, brain: Brain, kind: str | None, count: int) -> list[Explored]:
    """The paths or URLs (`kind`; both when None) the brain explored most lately, newest first."""
    explored = Explored.objects.filter(brain=brain)
    if kind is not None:
        explored = explored.filter(kind=kind)
    return list(explored.order_by("-at", "-id")[:count])


def brain_explored_folders(*, brain: Brain, count: int) -> list[str]:
    """The paths of the folders the brain listed most lately, newest first."""
    folders = Explored.objects.filter(brain=brain, folder=True).order_by("-at", "-id")
    return list(folders.values_list("key", flat=True)[:count])


def brain_unexplored(
    *, brain: Brain, folder_path: str, count: int, scan: int, max_path_chars: int, leave_out_char: str
) -> list:
    """Up to `count` of the first `scan` children (memory nodes) of the folder at `folder_path`,
    in order, whose paths the brain has not explored, leaving out paths with `leave_out_char` in
    them and paths longer than `max_path_chars`. One query: each child probes the explored index
    (NOT EXISTS)."""
    prefix = "" if folder_path == "/" else folder_path
    if leave_out_char in prefix:
        return []
    explored = Explored.objects.filter(
        brain=brain, kind=Explored.Kind.PATH, key=Concat(Value(f"{prefix}/"), OuterRef("name"))
    )
    children = (
        memory_selectors.node_children_first(space=brain.agent.space, path=folder_path, count=scan)
        .exclude(name__contains=leave_out_char)
        .alias(name_chars=Length("name"))
        .filter(name_chars__lte=max_path_chars - len(prefix) - 1)
        .exclude(Exists(explored))
    )
    return list(children[:count])


def brain_associations(*, brain: Brain, count: int) -> list[Neuron]:
    """The strongest neurons other than `self`."""
    return list(Neuron.objects.filter(brain=brain).exclude(key=SELF).order_by("-strength", "id")[:count])


@dataclass(frozen=True)
class BrainView:
    """What a tick reads before it decides, as seed 002's decideAction reads it."""

    brain: Brain
    goals: list[Goal]
    episodes: list[Record]
    facts: list[Record]
    self_instructions: list[Record]
    thoughts: list[Record]
    inner_thoughts: list[Record]
    paths: list[Explored]
    urls: list[Explored]
    associations: list[Neuron]

    @property
    def primary_goal(self) -> Goal | None:
        return self.goals[0] if self.goals else None

    @property
    def plan_step(self) -> str | None:
        plan = self.brain.plan or []
        step = self.brain.plan_step
        return plan[step] if 0 <= step < len(plan) else None


# The view's lists, by the collection each shows, and how many of the newest a tick reads.
VIEW_LISTS = {
    "episodes": RecordKind.EPISODE,
    "facts": RecordKind.FACT,
    "self_instructions": RecordKind.SELF_INSTRUCTION,
    "thoughts": RecordKind.THOUGHT,
    "inner_thoughts": RecordKind.INNER_THOUGHT,
}
TICK_LISTS = {"episodes": 5, "facts": 3, "self_instructions": 7, "thoughts": 5, "inner_thoughts": 3}


class NewestLists(TypedDict):
    """The newest entries of each of a brain view's lists (VIEW_LISTS), oldest first."""

    episodes: list[Record]
    facts: list[Record]
    self_instructions: list[Record]
    thoughts: list[Record]
    inner_thoughts: list[Record]


def _newest(brain: Brain, lists: Mapping[str, int]) -> NewestLists:
    unknown = set(lists) - set(VIEW_LISTS)
    if unknown:
        raise TypeError(
            f"A brain view has no list {', '.join(sorted(unknown))}; its lists are {', '.join(VIEW_LISTS)}."
        )
    counts = {**TICK_LISTS, **lists}
    records = brain_records(brain=brain, counts={VIEW_LISTS[name]: count for name, count in counts.items()})
    # TICK_LISTS names every list, so each of NewestLists' keys is there.
    return cast(NewestLists, {name: records[VIEW_LISTS[name]] for name in counts})


def brain_view(*, brain: Brain, paths: int = 5, urls: int = 3, associations: int = 5, **lists: int) -> BrainView:
    """The brain as a tick reads it: `lists` says how many of the newest entries of each list
    to read (`thoughts=10`), TICK_LISTS for the others."""
    return BrainView(
        brain=brain,
        goals=brain_goals_active(brain=brain),
        paths=brain_explored_recent(brain=brain, kind=Explored.Kind.PATH, count=paths),
        urls=brain_explored_recent(brain=brain, kind=Explored.Kind.URL, count=urls),
        associations=brain_associations(brain=brain, count=associations),
        **_newest(brain, lists),
    )


def brain_view_renewed(*, view: BrainView, brain: Brain, **lists: int) -> BrainView:
    """`view` after a write: `brain` is the brain's row as the write left it, and its active
    goals and the newest entries of its lists are read again, in two queries (`lists` as in
    `brain_view`). Its explored paths and URLs and associations stay as they were read."""
    return replace(view, brain=brain, goals=brain_goals_active(brain=brain), **_newest(brain, lists))


def tick_list(*, agent: Agent) -> QuerySet[TickRun]:
    """The agent's tick runs, newest first."""
    return TickRun.objects.filter(brain_id=agent.pk).order_by("-number")
