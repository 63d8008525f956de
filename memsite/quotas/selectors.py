"""What a user has in flight and has spent today: the counts the quota checks decide on. Each
is one indexed query. Work is a user's when they asked for it: a search's `created_by`, a
brain's `ticking_by` and `tick_queued_by`, a tick run's `user`, a graph operation's
`created_by`, a ledger row's `user`.
Explained in docs/memsite.md."""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Count, Sum
from django.db.models.functions import Coalesce
from django.utils import timezone

from memsite.quotas.logic import Spend, day_bounds

_counters: dict[str, Callable[[int], int]] = {}


def register_in_flight(kind: str, counter: Callable[[int], int]) -> None:
    """`counter(user_id)` counts the user's work of `kind` in flight (an app's, at its ready())."""
    _counters[kind] = counter


def searches_in_flight(*, user_id: int) -> int:
    return _counters["searches"](user_id)


def tick_queue_cutoff(now: datetime) -> datetime:
    """A tick queued before this has lost its message (a worker takes one within a lease's
    time, or the broker went away after the check): it is no longer counted, or waited for."""
    return now - timedelta(seconds=settings.MEMSITE_TICK_LEASE_S)


def ticks_in_flight(*, user_id: int, now: datetime | None = None) -> int:
    """Ticks queued for the user and not yet begun, and the user's ticks running."""
    from agents.brains.models import Brain, TickRun

    now = now or timezone.now()
    queued = Brain.objects.filter(tick_queued_by_id=user_id, tick_queued_at__gt=tick_queue_cutoff(now)).count()
    running = TickRun.objects.filter(user_id=user_id, status=TickRun.Status.RUNNING, brain__lease_until__gt=now).count()
    return queued + running


def ticking_agents(*, user_id: int, excluding: int | None = None) -> int:
    """Agents the user set ticking on a schedule (but `excluding`, whose interval changes)."""
    from agents.brains.models import Brain

    return Brain.objects.filter(ticking=True, ticking_by_id=user_id).exclude(pk=excluding).count()


def graph_ops_in_flight(*, user_id: int) -> int:
    """Memorize and recall operations the user asked for, queued (a running one stays queued
    until it ends)."""
    from agents.graphs.models import GraphOp

    return GraphOp.objects.filter(created_by_id=user_id, status=GraphOp.Status.QUEUED).count()


def llm_spend_today(*, user_id: int, now: datetime | None = None) -> Spend:
    """The user's ledger rows since the start of today, against the daily budget."""
    from memsite.llm.models import LLMCall

    start, end = day_bounds(timezone.localtime(now or timezone.now()))
    totals = (
        LLMCall.objects.filter(user_id=user_id, created_at__gte=start)
        .order_by()
        .aggregate(
            calls=Count("id"),
            prompt=Coalesce(Sum("prompt_tokens"), 0),
            completion=Coalesce(Sum("completion_tokens"), 0),
        )
    )
    return Spend(
        calls=totals["calls"],
        tokens=totals["prompt"] + totals["completion"],
        calls_limit=settings.MEMSITE_LLM_DAILY_CALLS,
        tokens_limit=settings.MEMSITE_LLM_DAILY_TOKENS,
        resets_at=end,
    )


@dataclass(frozen=True)
class InFlight:
    count: int
    cap: int


@dataclass(frozen=True)
class UserUsage:
    """What GET /api/usage/ and the ledger page show a user: today's spend and the work in
    flight, each against its cap."""

    spend: Spend
    searches: InFlight
    ticks: InFlight
    ticking_agents: InFlight
    graph_ops: InFlight


def user_usage(*, user_id: int) -> UserUsage:
    now = timezone.now()
    return UserUsage(
        spend=llm_spend_today(user_id=user_id, now=now),
        searches=InFlight(searches_in_flight(user_id=user_id), settings.MEMSITE_QUOTA_SEARCHES),
        ticks=InFlight(ticks_in_flight(user_id=user_id, now=now), settings.MEMSITE_QUOTA_TICKS),
        ticking_agents=InFlight(ticking_agents(user_id=user_id), settings.MEMSITE_QUOTA_TICKING_AGENTS),
        graph_ops=InFlight(graph_ops_in_flight(user_id=user_id), settings.MEMSITE_QUOTA_GRAPH_OPS),
    )
