"""What a member has in flight in a space and has spent there today, and what the whole space
has spent: the counts the quota checks decide on, each one indexed query. Work is a user's
when they asked for it: a search's `created_by`, a brain's `ticking_by` and `tick_queued_by`,
a tick run's `user`, a graph operation's `created_by`, a ledger row's `user`.
Explained in docs/memsite.md."""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Count, QuerySet, Sum
from django.db.models.functions import Coalesce
from django.utils import timezone

from memsite.quotas.logic import Budget, Spend, day_bounds
from memsite.spaces.logic import MEMBER_LIMITS, effective_limit
from memsite.spaces.models import ApiToken, Space
from memsite.spaces.selectors import token_family_ids, token_makers

_counters: dict[str, Callable[[int, int], int]] = {}


def register_in_flight(kind: str, counter: Callable[[int, int], int]) -> None:
    """`counter(user_id, space_id)` counts the user's work of `kind` in flight in the space (an
    app's, at its ready())."""
    _counters[kind] = counter


def searches_in_flight(*, user_id: int, space_id: int) -> int:
    return _counters["searches"](user_id, space_id)


def tick_queue_cutoff(now: datetime) -> datetime:
    """A tick queued before this has lost its message (a worker takes one within a lease's
    time, or the broker went away after the check): it is no longer counted, or waited for."""
    return now - timedelta(seconds=settings.MEMSITE_TICK_LEASE_S)


def ticks_in_flight(*, user_id: int, space_id: int, now: datetime | None = None) -> int:
    """Ticks queued for the user and not yet begun in the space, and the user's ticks running there."""
    from agents.brains.models import Brain, TickRun

    now = now or timezone.now()
    queued = Brain.objects.filter(
        tick_queued_by_id=user_id, agent__space_id=space_id, tick_queued_at__gt=tick_queue_cutoff(now)
    ).count()
    running = TickRun.objects.filter(
        user_id=user_id, brain__agent__space_id=space_id, status=TickRun.Status.RUNNING, brain__lease_until__gt=now
    ).count()
    return queued + running


def ticking_agents(*, user_id: int, space_id: int, excluding: int | None = None) -> int:
    """Agents of the space the user set ticking on a schedule (but `excluding`, whose interval changes)."""
    from agents.brains.models import Brain

    ticking = Brain.objects.filter(ticking=True, ticking_by_id=user_id, agent__space_id=space_id)
    return ticking.exclude(pk=excluding).count()


def graph_ops_in_flight(*, user_id: int, space_id: int) -> int:
    """Memorize and recall operations the user asked for in the space, queued (a running one
    stays queued until it ends)."""
    from agents.graphs.models import GraphOp

    return GraphOp.objects.filter(created_by_id=user_id, graph__space_id=space_id, status=GraphOp.Status.QUEUED).count()


def _spend(
    rows: QuerySet, *, calls_limit: int | None, tokens_limit: int | None, now: datetime | None, budget: Budget
) -> Spend:
    start, end = day_bounds(timezone.localtime(now or timezone.now()))
    totals = (
        rows.filter(created_at__gte=start)
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
        calls_limit=calls_limit,
        tokens_limit=tokens_limit,
        resets_at=end,
        budget=budget,
    )


def llm_spend_today(*, user_id: int, space: Space, now: datetime | None = None) -> Spend:
    """A member's ledger rows in the space since the start of today, against their daily
    budget there (the owner's, else the site's)."""
    from memsite.llm.models import LLMCall

    return _spend(
        LLMCall.objects.filter(user_id=user_id, space=space),
        calls_limit=effective_limit(space.member_llm_daily_calls, settings.MEMSITE_LLM_DAILY_CALLS),
        tokens_limit=effective_limit(space.member_llm_daily_tokens, settings.MEMSITE_LLM_DAILY_TOKENS),
        now=now,
        budget=Budget.MEMBER,
    )


def space_spend_today(*, space: Space, now: datetime | None = None) -> Spend:
    """The whole space's ledger rows today against the budget its owner set, if any (a limit
    of None bounds nothing)."""
    from memsite.llm.models import LLMCall

    return _spend(
        LLMCall.objects.filter(space=space),
        calls_limit=space.llm_daily_calls,
        tokens_limit=space.llm_daily_tokens,
        now=now,
        budget=Budget.SPACE,
    )


def token_spend_today(*, token: ApiToken, now: datetime | None = None) -> Spend:
    """The ledger rows today of the token and of every token minted from it, against its own
    budget, if it has one: the tokens it mints share it."""
    from memsite.llm.models import LLMCall

    return _spend(
        LLMCall.objects.filter(token_id__in=token_family_ids(token_id=token.pk)),
        calls_limit=token.llm_daily_calls,
        tokens_limit=token.llm_daily_tokens,
        now=now,
        budget=Budget.TOKEN,
    )


def _bounded(token: ApiToken | None) -> bool:
    return token is not None and (token.llm_daily_calls is not None or token.llm_daily_tokens is not None)


def spends_today(
    *, user_id: int | None, space: Space, token: ApiToken | None = None, now: datetime | None = None
) -> list[Spend]:
    """The budgets new LLM work in the space counts against: the member's, for a user's work,
    the whole space's, and those of the asking token and of the tokens that minted it, each
    that has one of its own."""
    now = now or timezone.now()
    member = [llm_spend_today(user_id=user_id, space=space, now=now)] if user_id is not None else []
    tokens = [token, *token_makers(token=token)] if token is not None else []
    own = [token_spend_today(token=bounded, now=now) for bounded in tokens if _bounded(bounded)]
    return [*member, space_spend_today(space=space, now=now), *own]


@dataclass(frozen=True)
class InFlight:
    count: int
    cap: int


@dataclass(frozen=True)
class UserUsage:
    """What GET /api/usage/ and the ledger page show a member: today's spend in the space and
    the work in flight there, each against its cap, and the whole space's spend against its own
    budget, if it has one."""

    spend: Spend
    space_spend: Spend
    token_spend: Spend | None
    searches: InFlight
    ticks: InFlight
    ticking_agents: InFlight
    graph_ops: InFlight


def member_cap(space: Space, field: str) -> int:
    """A member's cap in the space: the owner's setting `field`, else the site's."""
    return effective_limit(getattr(space, field), getattr(settings, MEMBER_LIMITS[field]))


def user_usage(*, user_id: int, space: Space, token: ApiToken | None = None) -> UserUsage:
    now = timezone.now()
    ids = {"user_id": user_id, "space_id": space.pk}
    return UserUsage(
        spend=llm_spend_today(user_id=user_id, space=space, now=now),
        space_spend=space_spend_today(space=space, now=now),
        token_spend=token_spend_today(token=token, now=now) if token is not None else None,
        searches=InFlight(searches_in_flight(**ids), member_cap(space, "quota_searches")),
        ticks=InFlight(ticks_in_flight(**ids, now=now), member_cap(space, "quota_ticks")),
        ticking_agents=InFlight(ticking_agents(**ids), member_cap(space, "quota_ticking_agents")),
        graph_ops=InFlight(graph_ops_in_flight(**ids), member_cap(space, "quota_graph_ops")),
    )
