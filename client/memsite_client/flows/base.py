"""The steps every operation is made of, without I/O: a flow is a generator that yields a Call
(an HTTP request to make) or a Pause (seconds to sleep) and is sent back the response (or
None); it returns the operation's result. The sync and async clients only carry the steps out."""

import time
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Generic, TypeVar
from urllib.parse import parse_qsl, urlsplit

import httpx
from pydantic import TypeAdapter, ValidationError

from memsite_client.errors import MemsiteError, WaitTimeout, error_for
from memsite_client.models import Page
from memsite_client.retry import RetryPolicy, retry_after_seconds, retry_pause

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class Call:
    """One HTTP request, its path relative to the API's root (`nodes/roots/`)."""

    method: str
    path: str
    params: Mapping[str, str | int] | None = None
    json: Any = None
    content: bytes | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    hold_s: float = 0  # how long the server may hold the request on purpose (a search's ?wait)


@dataclass(frozen=True)
class Pause:
    seconds: float


Step = Call | Pause
Flow = Generator[Step, Any, T]


@dataclass(frozen=True)
class Policy:
    """How flows retry and wait; `clock` is injected by tests together with the sleep."""

    retry: RetryPolicy = RetryPolicy()
    clock: Callable[[], float] = time.monotonic


def fields(**values: Any) -> dict[str, Any]:
    """A JSON body's fields, the absent (None) ones left out so that the server's defaults apply."""
    return {name: value for name, value in values.items() if value is not None}


def params(**values: str | int | None) -> dict[str, str | int]:
    """Query parameters, the absent ones left out."""
    return fields(**values)


def done(value: T) -> Flow[T]:
    """A flow that makes no request: `value` at once."""
    return value
    yield  # unreached: the yield makes this a generator, as every flow is


def exchange(call: Call, policy: Policy) -> Flow[httpx.Response]:
    """The response to `call`, sent again after 429 and 503 as the policy allows; any other
    refusal, or one that stands, is raised as its MemsiteError."""
    attempt = 0
    while True:
        response: httpx.Response = yield call
        if response.is_success:
            return response
        retry_after = retry_after_seconds(response.headers.get("Retry-After"))
        pause = retry_pause(response.status_code, retry_after, attempt, policy.retry)
        if pause is None:
            raise error_for(response)
        yield Pause(pause)
        attempt += 1


_ADAPTERS: dict[Any, TypeAdapter[Any]] = {}  # one per kind parsed: building one costs a schema


def _adapter(kind: Any) -> TypeAdapter[Any]:
    adapter = _ADAPTERS.get(kind)
    if adapter is None:
        adapter = _ADAPTERS[kind] = TypeAdapter(kind)
    return adapter


def parsed(response: httpx.Response, kind: type[T]) -> T:
    """The response's JSON as `kind` (a model, or a type such as list[Node])."""
    try:
        value: T = _adapter(kind).validate_json(response.content)
    except ValidationError as exc:
        raise MemsiteError(f"The answer to {response.request.url} is not what the client expects: {exc}") from exc
    return value


def fetch(call: Call, kind: type[T], policy: Policy) -> Flow[T]:
    response = yield from exchange(call, policy)
    return parsed(response, kind)


def poll(
    read: Callable[[], Flow[R]], current: R, *, running: Callable[[R], bool], wait: float, every: float, policy: Policy
) -> Flow[R]:
    """`current` read again every `every` seconds while it is `running`, for `wait` seconds at most."""
    deadline = policy.clock() + wait
    while running(current):
        left = deadline - policy.clock()
        if left <= 0:
            raise WaitTimeout(f"Still under way after {wait:g} s: {current!r:.200}", result=current)
        yield Pause(min(every, left))
        current = yield from read()
    return current


@dataclass
class Listing(Generic[T]):
    """A paged list: `start` gives the first page's call (it may need requests of its own, such
    as resolving a path); each later page's call comes from the one before's `next` link."""

    start: Flow[Call]
    kind: type[Page[T]]  # Page[Node], ...
    policy: Policy

    def page(self, call: Call) -> Flow[Page[T]]:
        return fetch(call, self.kind, self.policy)

    @staticmethod
    def after(page: Page[Any], call: Call) -> Call | None:
        """The next page's call, with the cursor of `next` sent to the same path: the link's host
        is the server's idea of itself, which a proxy may hide, and the token goes nowhere else."""
        if page.next is None:
            return None
        return replace(call, params=dict(parse_qsl(urlsplit(page.next).query)))
