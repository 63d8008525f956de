"""When to send a refused request again: 429 and 503 mean nothing was done, so any request,
a POST included, may be sent again after the server's Retry-After; a bounded number of
times, and never after a longer wait than the client allows."""

from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

RETRY_STATUSES = frozenset({429, 503})


@dataclass(frozen=True)
class RetryPolicy:
    retries: int = 3  # sends after the first
    max_wait: float = 60.0  # a longer Retry-After (a daily budget spent) is raised at once


def retry_after_seconds(value: str | None, now: datetime | None = None) -> float | None:
    """Retry-After as seconds: a number of seconds, or an HTTP date; None when absent or unreadable."""
    if value is None or not value.strip():
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max((when - (now or datetime.now(UTC))).total_seconds(), 0.0)


def retry_pause(status: int, retry_after: float | None, attempt: int, policy: RetryPolicy) -> float | None:
    """Seconds to pause before sending again after refusal number `attempt` (0 for the first
    send), or None when the refusal stands: not a 429 or 503, no retries left, or a wait longer
    than the policy allows. Without Retry-After, 1, 2, 4, ... seconds."""
    if status not in RETRY_STATUSES or attempt >= policy.retries:
        return None
    pause = retry_after if retry_after is not None else float(2**attempt)
    return pause if pause <= policy.max_wait else None
