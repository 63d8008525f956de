"""The rules of fair background work, as pure decisions: is one more piece of work within a
user's cap, is the day's LLM budget spent, and when does the day end. No ORM, no settings:
`memsite.quotas.checks` counts, asks these, and raises what they decide."""

from dataclasses import dataclass
from datetime import datetime, time, timedelta
from enum import StrEnum

from memsite.errors import ServiceError

# What a client waits before asking again when work in flight fills a cap: about one step of
# a search or one tick. A budget's wait is the rest of the day.
IN_FLIGHT_RETRY_S = 10


class QuotaExceeded(ServiceError):
    """Past one of the user's caps or budgets: 429, nothing started or changed. `data` holds
    the numbers (the API answers them next to the message); Retry-After says when to ask
    again."""

    status = 429

    def __init__(self, message: str, *, data: dict, retry_after_s: int):
        super().__init__(message, data=data)
        self.retry_after_s = max(1, retry_after_s)


class Budget(StrEnum):
    """Whose daily LLM budget a spend counts against; the value names it in a refusal's data."""

    MEMBER = "daily_llm_budget"
    SPACE = "space_daily_llm_budget"
    TOKEN = "token_daily_llm_budget"


_WHOSE = {Budget.MEMBER: "Your", Budget.SPACE: "The space's", Budget.TOKEN: "This token's"}
_NAMED = {Budget.MEMBER: "The", Budget.SPACE: "The space's", Budget.TOKEN: "The token's"}


@dataclass(frozen=True)
class Spend:
    """LLM spend today against a daily budget (`budget` says whose): a member's in a space, the
    whole space's, or one token's. Each may bound calls, tokens or both (None: not bounded)."""

    calls: int
    tokens: int
    calls_limit: int | None
    tokens_limit: int | None
    resets_at: datetime
    budget: Budget = Budget.MEMBER

    @property
    def spent(self) -> bool:
        return any(limit is not None and used >= limit for used, limit in self._pairs())

    @property
    def whose(self) -> str:
        return _WHOSE[self.budget]

    @property
    def named(self) -> str:
        """`whose` for a record the system keeps (a ledger row, a search's error)."""
        return _NAMED[self.budget]

    def _pairs(self) -> tuple[tuple[int, int | None], tuple[int, int | None]]:
        return (self.calls, self.calls_limit), (self.tokens, self.tokens_limit)

    def describe(self) -> str:
        parts = [
            f"{used:,} of {limit:,} {unit}"
            for (used, limit), unit in zip(self._pairs(), ("LLM calls", "tokens"), strict=True)
            if limit is not None
        ]
        return f"{' and '.join(parts)} today; the budget resets at {self.resets_at.isoformat()}"

    def as_data(self) -> dict:
        return {
            "calls": self.calls,
            "calls_limit": self.calls_limit,
            "tokens": self.tokens,
            "tokens_limit": self.tokens_limit,
            "resets_at": self.resets_at.isoformat(),
        }


def day_bounds(now: datetime) -> tuple[datetime, datetime]:
    """The start of `now`'s day and the start of the next, in `now`'s time zone."""
    start = datetime.combine(now.date(), time.min, tzinfo=now.tzinfo)
    return start, start + timedelta(days=1)


def in_flight_refusal(*, what: str, in_flight: int, cap: int, setting: str) -> QuotaExceeded | None:
    """The refusal of one more `what` when `in_flight` of them already fill `cap`, else None."""
    if in_flight < cap:
        return None
    return QuotaExceeded(
        f"You have {in_flight} {what} in flight; the cap is {cap} ({setting}). "
        "Wait for one to end, or cancel one, and try again.",
        data={"quota": setting, "cap": cap, "in_flight": in_flight},
        retry_after_s=IN_FLIGHT_RETRY_S,
    )


def budget_refusal(spend: Spend, *, now: datetime) -> QuotaExceeded | None:
    """The refusal of new LLM work once the day's budget is spent, else None."""
    if not spend.spent:
        return None
    return QuotaExceeded(
        f"{spend.whose} daily LLM budget is spent: {spend.describe()}.",
        data={"quota": spend.budget.value, **spend.as_data()},
        retry_after_s=int((spend.resets_at - now).total_seconds()) + 1,
    )
