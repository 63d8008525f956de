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

    USER = "daily_llm_budget"  # the site's, for a user's work in every space
    MEMBER = "member_daily_llm_budget"  # the one an owner set for each member of the space
    SPACE = "space_daily_llm_budget"
    TOKEN = "token_daily_llm_budget"
    SYSTEM = "system_daily_llm_budget"  # memsite's own upkeep in the space
    OFFLINE = "offline_daily_llm_cap"  # the offline provider's calls: free, but a loop is still bounded


# What a refusal calls the budget (to whoever asked), and what a record of the system calls it.
_WHOSE = {
    Budget.USER: "Your daily LLM budget",
    Budget.MEMBER: "Your daily LLM budget in this space",
    Budget.SPACE: "The space's daily LLM budget",
    Budget.TOKEN: "This token's daily LLM budget",
    Budget.SYSTEM: "memsite's own daily LLM budget in this space",
    Budget.OFFLINE: "The daily cap on offline LLM calls",
}
_NAMED = {
    **_WHOSE,
    Budget.USER: "The daily LLM budget",
    Budget.MEMBER: "The member's daily LLM budget in the space",
    Budget.TOKEN: "The token's daily LLM budget",
}


@dataclass(frozen=True)
class Spend:
    """LLM spend today against a daily budget (`budget` says whose): a user's in every space, a
    member's in one, the whole space's, one token's, or memsite's own in a space. Each may bound
    calls, tokens or both (None: not bounded)."""

    calls: int
    tokens: int
    calls_limit: int | None
    tokens_limit: int | None
    resets_at: datetime
    budget: Budget = Budget.USER

    @property
    def spent(self) -> bool:
        return any(limit is not None and used >= limit for used, limit in self._pairs())

    @property
    def whose(self) -> str:
        """The budget, as a refusal names it to whoever asked: "Your daily LLM budget"."""
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
        f"{spend.whose} is spent: {spend.describe()}.",
        data={"quota": spend.budget.value, **spend.as_data()},
        retry_after_s=int((spend.resets_at - now).total_seconds()) + 1,
    )
