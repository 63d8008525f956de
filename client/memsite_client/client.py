"""MemsiteClient and AsyncMemsiteClient: each verb is a flow of memsite_client.flows, carried
out by the client's own transport (httpx's Client or AsyncClient) and sleep."""

import asyncio
import functools
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterator
from types import TracebackType
from typing import Any, Concatenate, ParamSpec, Self, TypeVar

import httpx

from memsite_client.errors import ConnectionFailed
from memsite_client.flows import Flows
from memsite_client.flows.base import Call, Flow, Listing, Pause, Policy, Step
from memsite_client.retry import RetryPolicy

P = ParamSpec("P")
T = TypeVar("T")
SPACE_HEADER = "X-Memsite-Space"
USER_AGENT = "memsite-client/0.1.0"


def api_root(base_url: str) -> str:
    """The API's root from the site's address, given with or without `/api`."""
    site = base_url.rstrip("/")
    return (site.removesuffix("/api") if site.endswith("/api") else site) + "/api/"


def http_options(base_url: str, token: str, space: str | None, timeout: float) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json", "User-Agent": USER_AGENT}
    if space is not None:
        headers[SPACE_HEADER] = space
    return {"base_url": api_root(base_url), "headers": headers, "timeout": timeout}


def request_for(http: httpx.Client | httpx.AsyncClient, call: Call, timeout: float) -> httpx.Request:
    """The request for `call`; one the server holds on purpose may take that much longer."""
    return http.build_request(
        call.method,
        call.path,
        params=call.params,
        json=call.json,
        content=call.content,
        headers=call.headers,
        timeout=timeout + call.hold_s,
    )


class _Client:
    """What both clients hold: the flows (with the retry policy and the clock) and the timeout."""

    def __init__(
        self, *, timeout: float, retries: int, max_retry_wait: float, clock: Callable[[], float] | None
    ) -> None:
        self._flows = Flows(Policy(RetryPolicy(retries, max_retry_wait), clock or time.monotonic))
        self._timeout = timeout


# -- sync --------------------------------------------------------------------------------------


def _verb(flow: Callable[Concatenate[Flows, P], Flow[T]]) -> Callable[Concatenate["MemsiteClient", P], T]:
    @functools.wraps(flow)
    def verb(self: "MemsiteClient", *args: P.args, **kwargs: P.kwargs) -> T:
        return self._run(flow(self._flows, *args, **kwargs))

    return verb


def _pages(
    listing: Callable[Concatenate[Flows, P], Listing[T]],
) -> Callable[Concatenate["MemsiteClient", P], Iterator[T]]:
    @functools.wraps(listing)
    def verb(self: "MemsiteClient", *args: P.args, **kwargs: P.kwargs) -> Iterator[T]:
        return self._iterate(listing(self._flows, *args, **kwargs))

    return verb


class MemsiteClient(_Client):
    """memsite's API, synchronously. `space`: the space's slug, for a session-less token that
    acts in its own space anyway, or to check that it does. `transport` and `sleep` are for
    tests (httpx.MockTransport, a sleep that records)."""

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        space: str | None = None,
        timeout: float = 60.0,
        retries: int = 3,
        max_retry_wait: float = 60.0,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] | None = None,
    ) -> None:
        super().__init__(timeout=timeout, retries=retries, max_retry_wait=max_retry_wait, clock=clock)
        self._http = httpx.Client(transport=transport, **http_options(base_url, token, space, timeout))
        self._sleep = sleep

    def _run(self, flow: Flow[T]) -> T:
        reply: Any = None
        try:
            while True:
                reply = self._carry_out(flow.send(reply))
        except StopIteration as done:
            return done.value

    def _carry_out(self, step: Step) -> httpx.Response | None:
        if isinstance(step, Pause):
            self._sleep(step.seconds)
            return None
        try:
            return self._http.send(request_for(self._http, step, self._timeout))
        except httpx.TransportError as exc:
            raise ConnectionFailed(f"{step.method} {step.path}: {exc!r}") from exc

    def _iterate(self, listing: Listing[T]) -> Iterator[T]:
        call: Call | None = self._run(listing.start)
        while call is not None:
            page = self._run(listing.page(call))
            yield from page.results
            call = listing.after(page, call)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    get = _verb(Flows.get)
    roots = _verb(Flows.roots)
    children = _pages(Flows.children)
    list = _pages(Flows.children)
    read = _verb(Flows.read)
    read_bytes = _verb(Flows.read_bytes)
    create = _verb(Flows.create)
    folder = _verb(Flows.folder)
    write = _verb(Flows.write)
    add = _verb(Flows.write)
    update = _verb(Flows.update)
    move = _verb(Flows.move)
    delete = _verb(Flows.delete)
    retrieve = _verb(Flows.retrieve)
    search = _verb(Flows.retrieve)
    ask = _verb(Flows.ask)
    get_search = _verb(Flows.get_search)
    cancel_search = _verb(Flows.cancel_search)
    questions = _pages(Flows.questions)
    answer = _verb(Flows.answer)
    create_agent = _verb(Flows.create_agent)
    get_agent = _verb(Flows.get_agent)
    add_message = _verb(Flows.add_message)
    messages = _pages(Flows.messages)
    context = _verb(Flows.context)
    brain = _verb(Flows.brain)
    chat = _verb(Flows.chat)
    create_graph = _verb(Flows.create_graph)
    memorize = _verb(Flows.memorize)
    recall = _verb(Flows.recall)
    graph_context = _verb(Flows.graph_context)
    graph_ops = _pages(Flows.graph_ops)


# -- async -------------------------------------------------------------------------------------


def _averb(
    flow: Callable[Concatenate[Flows, P], Flow[T]],
) -> Callable[Concatenate["AsyncMemsiteClient", P], Coroutine[Any, Any, T]]:
    @functools.wraps(flow)
    async def verb(self: "AsyncMemsiteClient", *args: P.args, **kwargs: P.kwargs) -> T:
        return await self._run(flow(self._flows, *args, **kwargs))

    return verb


def _apages(
    listing: Callable[Concatenate[Flows, P], Listing[T]],
) -> Callable[Concatenate["AsyncMemsiteClient", P], AsyncIterator[T]]:
    @functools.wraps(listing)
    def verb(self: "AsyncMemsiteClient", *args: P.args, **kwargs: P.kwargs) -> AsyncIterator[T]:
        return self._iterate(listing(self._flows, *args, **kwargs))

    return verb


class AsyncMemsiteClient(_Client):
    """memsite's API with asyncio: the same verbs as MemsiteClient, awaited; lists are async
    iterators (`async for node in client.children(...)`)."""

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        space: str | None = None,
        timeout: float = 60.0,
        retries: int = 3,
        max_retry_wait: float = 60.0,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        clock: Callable[[], float] | None = None,
    ) -> None:
        super().__init__(timeout=timeout, retries=retries, max_retry_wait=max_retry_wait, clock=clock)
        self._http = httpx.AsyncClient(transport=transport, **http_options(base_url, token, space, timeout))
        self._sleep = sleep

    async def _run(self, flow: Flow[T]) -> T:
        reply: Any = None
        try:
            while True:
                reply = await self._carry_out(flow.send(reply))
        except StopIteration as done:
            return done.value

    async def _carry_out(self, step: Step) -> httpx.Response | None:
        if isinstance(step, Pause):
            await self._sleep(step.seconds)
            return None
        try:
            return await self._http.send(request_for(self._http, step, self._timeout))
        except httpx.TransportError as exc:
            raise ConnectionFailed(f"{step.method} {step.path}: {exc!r}") from exc

    async def _iterate(self, listing: Listing[T]) -> AsyncIterator[T]:
        call: Call | None = await self._run(listing.start)
        while call is not None:
            page = await self._run(listing.page(call))
            for item in page.results:
                yield item
            call = listing.after(page, call)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        await self.aclose()

    get = _averb(Flows.get)
    roots = _averb(Flows.roots)
    children = _apages(Flows.children)
    list = _apages(Flows.children)
    read = _averb(Flows.read)
    read_bytes = _averb(Flows.read_bytes)
    create = _averb(Flows.create)
    folder = _averb(Flows.folder)
    write = _averb(Flows.write)
    add = _averb(Flows.write)
    update = _averb(Flows.update)
    move = _averb(Flows.move)
    delete = _averb(Flows.delete)
    retrieve = _averb(Flows.retrieve)
    search = _averb(Flows.retrieve)
    ask = _averb(Flows.ask)
    get_search = _averb(Flows.get_search)
    cancel_search = _averb(Flows.cancel_search)
    questions = _apages(Flows.questions)
    answer = _averb(Flows.answer)
    create_agent = _averb(Flows.create_agent)
    get_agent = _averb(Flows.get_agent)
    add_message = _averb(Flows.add_message)
    messages = _apages(Flows.messages)
    context = _averb(Flows.context)
    brain = _averb(Flows.brain)
    chat = _averb(Flows.chat)
    create_graph = _averb(Flows.create_graph)
    memorize = _averb(Flows.memorize)
    recall = _averb(Flows.recall)
    graph_context = _averb(Flows.graph_context)
    graph_ops = _apages(Flows.graph_ops)
