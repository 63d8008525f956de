"""The rules of fair background work, as pure decisions: is one more piece of work within a
user's cap, is the day's LLM budget spent, and when does the day end. No ORM, no settings:
`memsite.quotas.checks` counts, asks these, and raises what they decide."""

from dataclasses import dataclass
from datetime import datetime, time, timedelta

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


@dataclass(frozen=True)
class Spend:
    """LLM spend today against a daily budget: a member's in a space, or (`space_wide`) the
    whole space's, whose owner may bound calls, tokens or both (None: not bounded)."""

    calls: int
    tokens: int
    calls_limit: int | None
    tokens_limit: int | None
    resets_at: datetime
    space_wide: bool = False

    @property
    def spent(self) -> bool:
        return any(limit is not None and used >= limit for used, limit in self._pairs())

    @property
    def whose(self) -> str:
        return "The space's" if self.space_wide else "Your"

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
        data={"quota": "space_daily_llm_budget" if spend.space_wide else "daily_llm_budget", **spend.as_data()},
        retry_after_s=int((spend.resets_at - now).total_seconds()) + 1,
    )
