"""What a principal's user has in flight in a space and has spent today, what the whole space and
memsite's own upkeep there have spent: the counts the quota checks decide on. Work in flight is
counted by the apps that do it (registered at their ready()); spend from the ledger, a user's in
every space, deleted ones included, so that no new space starts a new allowance.
Explained in docs/memsite.md."""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db.models import Count, QuerySet, Sum
from django.db.models.functions import Coalesce
from django.utils import timezone

from memsite.llm.config import OFFLINE
from memsite.quotas.logic import Budget, Spend, day_bounds
from memsite.spaces.logic import MEMBER_LIMITS, effective_limit
from memsite.spaces.models import ApiToken, Space
from memsite.spaces.principals import Principal
from memsite.spaces.selectors import token_family_ids, token_makers

# Each kind of work in flight, with the Space field of the member cap on it (MEMBER_LIMITS names
# the site's setting behind each).
CAPS = {
    "searches": "quota_searches",
    "ticks": "quota_ticks",
    "ticking_agents": "quota_ticking_agents",
    "graph_ops": "quota_graph_ops",
}
_counters: dict[str, Callable[..., int]] = {}


def register_in_flight(kind: str, counter: Callable[..., int]) -> None:
    """`counter(by=principal, **options)` counts the work of `kind` (one of CAPS) the principal's
    user has in flight in its space: an app's, at its ready()."""
    if kind not in CAPS:
        raise ValueError(f"No cap on work of kind {kind!r}; the kinds are {', '.join(CAPS)}.")
    _counters[kind] = counter


def in_flight(kind: str, *, by: Principal, **options: object) -> int:
    """The user's work of `kind` in flight in `by`'s space; `options` go to its app's counter
    (the ticking agents' `excluding`)."""
    return _counters[kind](by=by, **options)


def _served_calls() -> QuerySet:
    """The ledger's calls a model served, which the daily budgets count: the offline provider's
    cost nothing, and only its own cap counts them."""
    from memsite.llm.models import LLMCall

    return LLMCall.objects.exclude(provider=OFFLINE)


def _spend(
    rows: QuerySet, *, calls_limit: int | None, tokens_limit: int | None, now: datetime | None, budget: Budget
) -> Spend:
    """Today's `rows` against a budget."""
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


def user_spend_today(*, by: Principal, now: datetime | None = None) -> Spend:
    """The user's ledger rows since the start of today in every space (those of deleted spaces
    too), against the site's daily budget for a user."""
    return _spend(
        _served_calls().filter(user=by.user),
        calls_limit=settings.MEMSITE_LLM_DAILY_CALLS,
        tokens_limit=settings.MEMSITE_LLM_DAILY_TOKENS,
        now=now,
        budget=Budget.USER,
    )


def member_spend_today(*, by: Principal, now: datetime | None = None) -> Spend:
    """The user's ledger rows today in `by`'s space, against the budget the space's owner set
    for each member (None bounds nothing: the site's budget for the user still does)."""
    return _spend(
        _served_calls().filter(user=by.user, space=by.space),
        calls_limit=by.space.member_llm_daily_calls,
        tokens_limit=by.space.member_llm_daily_tokens,
        now=now,
        budget=Budget.MEMBER,
    )


def space_spend_today(*, space: Space, now: datetime | None = None) -> Spend:
    """The whole space's ledger rows today against the budget its owner set, if any (a limit
    of None bounds nothing)."""
    return _spend(
        _served_calls().filter(space=space),
        calls_limit=space.llm_daily_calls,
        tokens_limit=space.llm_daily_tokens,
        now=now,
        budget=Budget.SPACE,
    )


def system_spend_today(*, space: Space, now: datetime | None = None) -> Spend:
    """memsite's own rows in the space today (its upkeep: descriptions, summaries, embeddings),
    against the site's daily budget for that upkeep in a space."""
    from memsite.llm.models import LLMCall

    return _spend(
        _served_calls().filter(space=space, acted_as=LLMCall.ActedAs.SYSTEM),
        calls_limit=settings.MEMSITE_SYSTEM_LLM_DAILY_CALLS,
        tokens_limit=settings.MEMSITE_SYSTEM_LLM_DAILY_TOKENS,
        now=now,
        budget=Budget.SYSTEM,
    )


def token_spend_today(*, token: ApiToken, now: datetime | None = None) -> Spend:
    """The ledger rows today of the token and of every token minted from it, against its own
    budget, if it has one: the tokens it mints share it."""
    return _spend(
        _served_calls().filter(token_id__in=token_family_ids(token_id=token.pk)),
        calls_limit=token.llm_daily_calls,
        tokens_limit=token.llm_daily_tokens,
        now=now,
        budget=Budget.TOKEN,
    )


def offline_spend_today(*, by: Principal, now: datetime | None = None) -> Spend:
    """The offline provider's calls today for `by`: a user's in every space, or memsite's own in
    the space, against a cap generous enough for any real work and there to stop a runaway loop."""
    from memsite.llm.models import LLMCall

    offline = LLMCall.objects.filter(provider=OFFLINE)
    rows = (
        offline.filter(space=by.space, acted_as=LLMCall.ActedAs.SYSTEM)
        if by.is_system
        else offline.filter(user=by.user)
    )
    return _spend(
        rows, calls_limit=settings.MEMSITE_OFFLINE_LLM_DAILY_CALLS, tokens_limit=None, now=now, budget=Budget.OFFLINE
    )


def _bounded(calls: int | None, tokens: int | None) -> bool:
    """Whether a budget of `calls` and `tokens` bounds anything: one that does not is never
    spent, so its rows need not be counted."""
    return calls is not None or tokens is not None


def spends_today(*, by: Principal, now: datetime | None = None, provider: str | None = None) -> list[Spend]:
    """The budgets new LLM work of `by` counts against. A call that `provider` serves counts
    against those of its kind alone: an offline call against the cap on offline calls, any
    other against the budgets of calls a model served. Without `provider`, the budgets of both
    kinds, for work whose calls either may serve (its completions and its embeddings may go to
    different providers)."""
    now = now or timezone.now()
    if provider == OFFLINE:
        return [offline_spend_today(by=by, now=now)]
    served = _served_spends(by, now)
    return served if provider is not None else [*served, offline_spend_today(by=by, now=now)]


def _served_spends(by: Principal, now: datetime) -> list[Spend]:
    """The budgets of calls a model served that `by`'s work counts against: for a user's, the
    user's in every space, their own in the space when its owner set one, the whole space's,
    and those of the asking token and of the tokens that minted it, each that has one of its
    own; for memsite's own upkeep, its budget in the space and the whole space's."""
    space = by.space
    whole = [space_spend_today(space=space, now=now)] if _bounded(space.llm_daily_calls, space.llm_daily_tokens) else []
    if by.is_system:
        return [system_spend_today(space=space, now=now), *whole]
    member_bounded = _bounded(space.member_llm_daily_calls, space.member_llm_daily_tokens)
    member = [member_spend_today(by=by, now=now)] if member_bounded else []
    tokens = [by.token, *token_makers(token=by.token)] if by.token is not None else []
    own = [
        token_spend_today(token=token, now=now)
        for token in tokens
        if _bounded(token.llm_daily_calls, token.llm_daily_tokens)
    ]
    return [user_spend_today(by=by, now=now), *member, *whole, *own]


@dataclass(frozen=True)
class InFlight:
    count: int
    cap: int


@dataclass(frozen=True)
class UserUsage:
    """What GET /api/usage/ and the ledger page show a member: today's spend in every space and
    in this one, the work in flight here, each against its cap, and the whole space's spend
    against its own budget, if it has one."""

    spend: Spend
    member_spend: Spend
    space_spend: Spend
    token_spend: Spend | None
    offline_spend: Spend
    searches: InFlight
    ticks: InFlight
    ticking_agents: InFlight
    graph_ops: InFlight


def member_cap(space: Space, field: str) -> int:
    """A member's cap in the space: the owner's setting `field`, else the site's."""
    return effective_limit(getattr(space, field), getattr(settings, MEMBER_LIMITS[field]))


def user_usage(*, by: Principal) -> UserUsage:
    """The usage of `by`'s user (and token, if it is one) in its space."""
    now = timezone.now()
    counts = {kind: InFlight(in_flight(kind, by=by), member_cap(by.space, field)) for kind, field in CAPS.items()}
    return UserUsage(
        spend=user_spend_today(by=by, now=now),
        member_spend=member_spend_today(by=by, now=now),
        space_spend=space_spend_today(space=by.space, now=now),
        token_spend=token_spend_today(token=by.token, now=now) if by.token is not None else None,
        offline_spend=offline_spend_today(by=by, now=now),
        **counts,
    )
