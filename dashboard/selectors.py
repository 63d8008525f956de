"""Reads for the home page and the navigation: each a fixed number of queries, whatever the
size of the space's memory, its searches or its ledger."""

from dataclasses import dataclass
from decimal import Decimal

from django.db.models import Count, QuerySet
from django.db.models.functions import Substr
from django.utils import timezone

from agents.brains.models import Brain
from memory import selectors as memory_selectors
from memory.models import Node, Search, SearchQuestion
from memsite.llm import selectors as llm_selectors
from memsite.spaces.models import Space

SEARCHES_SHOWN = 10
QUESTIONS_SHOWN = 5
AGENTS_SHOWN = 20


@dataclass(frozen=True)
class Tally:
    """A name and how many rows have it: a top-level folder's nodes, or a type's."""

    name: str
    count: int
    node_id: str = ""


@dataclass(frozen=True)
class MemoryCounts:
    total: int
    folders: list[Tally]
    types: list[Tally]


@dataclass(frozen=True)
class LedgerToday:
    calls: int
    tokens: int
    cost_usd: Decimal


def memory_counts(*, space: Space) -> MemoryCounts:
    """The space's nodes under each top-level folder (the folder itself counted) and of each
    type: three queries, the two counts grouped in the database."""
    roots = list(memory_selectors.node_roots(space=space).values_list("pk", "name", "path"))
    root_key = Substr("path", 1, Node.steplen)
    nodes = Node.objects.filter(space=space).order_by()  # no ordering column in the GROUP BY
    per_root = dict(nodes.annotate(root=root_key).values("root").annotate(n=Count("pk")).values_list("root", "n"))
    per_type = nodes.values("type").annotate(n=Count("pk")).order_by("-n", "type")
    folders = [Tally(name=name, count=per_root.get(path, 0), node_id=pk) for pk, name, path in roots]
    types = [Tally(name=row["type"], count=row["n"]) for row in per_type]
    return MemoryCounts(total=sum(per_root.values()), folders=folders, types=types)


def _searches(space: Space) -> QuerySet[Search]:
    return memory_selectors.search_list(space=space).defer("state", "result", "context")  # a walk's state runs long


def searches_running(*, space: Space) -> QuerySet[Search]:
    """The space's searches queued, running or waiting for the user, newest first."""
    return _searches(space).filter(status__in=Search.ACTIVE)[:SEARCHES_SHOWN]


def searches_recent(*, space: Space) -> QuerySet[Search]:
    """The space's searches that ended, newest first."""
    return _searches(space).exclude(status__in=Search.ACTIVE)[:SEARCHES_SHOWN]


def questions_waiting_count(*, space: Space) -> int:
    """The space's questions waiting for the user: the navigation's badge, one COUNT."""
    return memory_selectors.search_questions_pending(space=space).order_by().count()


def questions_waiting(*, space: Space) -> list[SearchQuestion]:
    # The page shows the search's id only: not its state, result and context, which run long.
    return list(memory_selectors.search_questions_pending(space=space).select_related(None)[:QUESTIONS_SHOWN])


def ledger_today(*, space: Space) -> LedgerToday:
    """The space's LLM calls since the start of today (local time), their tokens and cost."""
    today = llm_selectors.LedgerFilter(date_from=timezone.localdate())
    total = llm_selectors.llm_call_totals(calls=llm_selectors.llm_call_list(space=space, filters=today))
    return LedgerToday(calls=total.calls, tokens=total.tokens, cost_usd=total.cost_usd)


def agents_ticking(*, space: Space) -> QuerySet[Brain]:
    """The space's brains ticking on a schedule, the next due first, with their agent and the
    member who set each ticking (whose work, in "Your work today", its ticks are)."""
    ticking = Brain.objects.filter(ticking=True, agent__space=space).select_related("agent", "ticking_by")
    fields = ("agent__name", "ticking_by", "ticking_by__username", "tick_interval_s", "next_tick_at", "tick_count")
    return ticking.only(*fields).order_by("next_tick_at")[:AGENTS_SHOWN]
