"""Counts that hold under concurrency: the API's rate limit per user, and failed logins; and
who a request counts against.
Explained in docs/memsite.md."""

import hashlib
import logging
import math
import time
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest
from redis.exceptions import RedisError
from rest_framework.request import Request
from rest_framework.throttling import BaseThrottle

logger = logging.getLogger(__name__)

PERIOD_SECONDS = {
    "s": 1,
    "sec": 1,
    "second": 1,
    "m": 60,
    "min": 60,
    "minute": 60,
    "h": 3600,
    "hour": 3600,
    "d": 86400,
    "day": 86400,
}


@dataclass(frozen=True)
class Window:
    """At most `limit` hits per key in each span of `seconds`, spans counted from the epoch."""

    limit: int
    seconds: int

    @classmethod
    def from_rate(cls, rate: str) -> "Window":
        """`1200/min` and the like (settings check the form)."""
        count, period = rate.split("/")
        return cls(limit=int(count), seconds=PERIOD_SECONDS[period])

    def entry(self, key: str, now: float) -> str:
        return f"{key}:{int(now // self.seconds)}"

    def seconds_left(self, now: float) -> int:
        """Until the current window ends, rounded up: what Retry-After says."""
        return max(1, math.ceil(self.seconds - now % self.seconds))


@dataclass(frozen=True)
class Hit:
    """One request counted: whether it is within the limit, when the window ends, the entry
    it was counted in (None when the cache did not answer), for `hit_release`, and the entry's
    count with it (0 when the cache did not answer)."""

    allowed: bool
    retry_after_s: int
    entry: str | None
    count: int = 0


def key_part(value: str) -> str:
    """A client's text (a username, an address) as part of a cache key: short, and with nothing
    a cache backend would warn about."""
    return hashlib.sha256(value.encode()).hexdigest()[:32]


def _increment(entry: str, timeout: int) -> int:
    """The entry's count with this hit. Incremented first, so a window's later hits take one
    round trip (two with RedisCache's existence check); of the hits that find no entry, `add`
    lets exactly one make it, and the others count on it."""
    try:
        return cache.incr(entry)
    except ValueError:
        pass
    if cache.add(entry, 1, timeout=timeout):
        return 1
    return cache.incr(entry)


def window_hit(*, key: str, window: Window, now: float) -> Hit:
    """Counts one hit on `key` in the window at `now`."""
    entry = window.entry(key, now)
    try:
        count = _increment(entry, 2 * window.seconds)
    except (RedisError, OSError, ValueError) as exc:
        # ValueError: an entry evicted between `add` and `incr` (locmem culls at MAX_ENTRIES).
        logger.warning("A limit on %s was not counted, the cache did not answer: %s", key, exc)
        return Hit(allowed=True, retry_after_s=0, entry=None)
    return Hit(allowed=count <= window.limit, retry_after_s=window.seconds_left(now), entry=entry, count=count)


def hit_release(hit: Hit) -> None:
    """Takes a hit back: it turned out not to count (a login that succeeded)."""
    if hit.entry is None:
        return
    try:
        cache.decr(hit.entry)
    except ValueError:
        pass  # the entry is gone, and its count with it
    except (RedisError, OSError) as exc:
        logger.warning("A hit on %s was not taken back, the cache did not answer: %s", hit.entry, exc)


def api_rate_hit(who: str, *, now: float) -> Hit:
    """One request of `who` (`user:<pk>`, `anon:<address>`) counted against MEMSITE_API_RATE:
    the API's and the MCP server's requests share the count."""
    return window_hit(key=f"throttle:{who}", window=Window.from_rate(settings.MEMSITE_API_RATE), now=now)


def caller_of(request: Request | HttpRequest) -> str:
    """Who a request counts against: `user:<pk>` for a user (a token's or a session's), else
    `anon:<address>`, the client's address as REST_FRAMEWORK's NUM_PROXIES has it read."""
    user = request.user
    if user and user.is_authenticated:
        return f"user:{user.pk}"
    # A WSGI server need not say the client's address: such anonymous requests share a count.
    # get_ident reads only META, which a Django request has as DRF's does.
    return f"anon:{key_part(BaseThrottle().get_ident(request) or '')}"  # type: ignore[arg-type]


class UserRequestThrottle(BaseThrottle):
    """MEMSITE_API_RATE requests per user (a swarm node's token or a dashboard session), or per
    client address for a request without one, counted in the default cache: Redis in
    production, so every web worker counts against one limit."""

    timer = staticmethod(time.time)  # the wall clock: see the module's docstring

    def __init__(self) -> None:
        self.retry_after_s = 0

    def allow_request(self, request: Request, view) -> bool:
        hit = api_rate_hit(caller_of(request), now=self.timer())
        self.retry_after_s = hit.retry_after_s
        return hit.allowed

    def wait(self) -> int:
        return self.retry_after_s
