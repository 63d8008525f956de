"""The MCP server's ASGI app: streamable HTTP at POST /mcp, stateless and answering in JSON,
behind TokenGate, which holds it to the API's rules: tokens (never sessions), the rate limit
and the bounds on a body, and bounds the bytes of bodies the process holds at once. Explained in docs/mcp.md."""

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import anyio
import anyio.to_thread
from django.conf import settings
from django.http.request import split_domain_port, validate_host
from django.utils import timezone
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memsite.api import header_length, json_body_limit, refuse_deep_nesting, refuse_many_values, refuse_over
from memsite.concurrency import caller_slot
from memsite.errors import InvalidInput, ServiceError
from memsite.spaces.logic import Role, last_use_due, role_allows
from memsite.spaces.principals import Principal
from memsite.spaces.services import TokenRefused, header_key, token_authenticate, token_use_note
from memsite.throttles import UserRequestThrottle, api_rate_hit
from tools.mcp.context import PRINCIPAL, THREADS, in_thread
from tools.mcp.server import build_server, refusal_of

PATH = "/mcp"
# Every call but a write's takes a few kilobytes (a path, a query): a reader's bound, and the
# line between the two budgets, so that writes' large bodies never crowd out small calls.
SMALL_BODY_BYTES = 1024 * 1024
SMALL_BODIES_HELD_BYTES = 16 * SMALL_BODY_BYTES  # 256 calls at once, each held as MIN_HELD_BYTES at least
MIN_HELD_BYTES = 64 * 1024
NO_TOKEN = "Send an API token: `Authorization: Token <key>` or `Bearer <key>`. Sessions are not accepted here."


def application() -> Starlette:
    manager = StreamableHTTPSessionManager(
        build_server(),
        json_response=True,  # one JSON answer a request: the server sends nothing unasked
        stateless=True,  # any process, or any restart, answers any request
        max_request_body_size=json_body_limit(),
    )

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[dict[str, Any]]:
        async with manager.run():
            yield {THREADS: anyio.CapacityLimiter(settings.MEMSITE_MCP_THREADS)}

    gate = TokenGate(
        manager.handle_request,
        small=BodyBudget(lambda: SMALL_BODIES_HELD_BYTES),
        large=BodyBudget(large_bodies_held_bytes),
    )
    # POST only: a GET would open a stream for messages the server never sends unasked.
    return Starlette(routes=[Route(PATH, gate, methods=["POST"])], lifespan=lifespan)


class RateLimited(ServiceError):
    status = 429

    def __init__(self, retry_after_s: int):
        super().__init__(f"Request was throttled. Expected available in {retry_after_s} seconds.")
        self.retry_after_s = retry_after_s


class BodiesBusy(ServiceError):
    """The process holds as many bodies as it may; the request was not read."""

    status = 429
    retry_after_s = 1  # sent as Retry-After: the bodies held are answered in about that


class BodyTimedOut(ServiceError):
    status = 408


class BodyBudget:
    """The bytes of request bodies the process holds at once, from before a body is read until
    its answer is sent: each request holds its Content-Length (a chunked one, the most it may
    send), and at least MIN_HELD_BYTES, what handling one costs beside its body. Used on the
    event loop alone, so that taking and giving back need no lock."""

    def __init__(self, limit: Callable[[], int]) -> None:
        self.limit = limit
        self.held = 0

    def take(self, size: int) -> int:
        """The bytes taken for a body of `size`; BodiesBusy (429) when they are not free."""
        size = max(size, MIN_HELD_BYTES)
        limit = self.limit()
        if self.held + size > limit:
            raise BodiesBusy(
                f"Busy: this MCP server holds {self.held:,} bytes of request bodies, and may hold "
                f"{limit:,}. Try again in {BodiesBusy.retry_after_s} second."
            )
        self.held += size
        return size

    def give_back(self, size: int) -> None:
        self.held -= size


class TokenGate:
    """In front of the MCP transport, in the API's order: the Host one of ALLOWED_HOSTS, the
    Content-Length within what a call may send, a token that acts as someone, within
    MEMSITE_API_RATE, fewer than `caller_concurrency()` of the user's calls under way, room for
    the body in the process's BodyBudget for bodies of its size (small or large), then the body
    read whole
    (within the bound, each piece within MEMSITE_BODY_TIMEOUT_S, of at most the API's JSON
    values and nesting). A refusal is the API's JSON with its status; the principal goes in the
    scope."""

    def __init__(self, app: ASGIApp, *, small: BodyBudget, large: BodyBudget) -> None:
        self.app = app
        self.small = small  # for bodies of up to SMALL_BODY_BYTES
        self.large = large

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = Headers(scope=scope)
        try:
            _host_check(headers)
            announced = header_length(headers.get("content-length") or "0")
            refuse_over(announced, json_body_limit(), "request body")
            authorization = headers.get("authorization", "").encode("latin-1")
            principal = await in_thread(scope, partial(_admit, authorization))
            limit = body_limit(principal.role)
            refuse_over(announced, limit, "request body")
            size = limit if _chunked(headers) else announced
            budget = self.small if size <= SMALL_BODY_BYTES else self.large
            slot = caller_slot(f"user:{principal.user.pk}", caller_concurrency())
        except Exception as error:
            await _refusal(refusal_of(error, "An MCP request"))(scope, receive, send)
            return
        try:
            held = budget.take(size)
        except BodiesBusy as busy:
            slot.release()
            await _refusal(busy)(scope, receive, send)
            return
        try:
            await self._answer(scope, receive, send, principal, limit)
        finally:
            budget.give_back(held)
            slot.release()

    async def _answer(self, scope: Scope, receive: Receive, send: Send, principal: Principal, limit: int) -> None:
        """The body read, within `limit`, and handed to the transport as `principal`'s."""
        try:
            body = await _body(receive, limit)
        except Exception as error:
            await _refusal(refusal_of(error, "An MCP request"))(scope, receive, send)
            return
        if body is None:
            return  # the client left before sending its body

        async def noting_use(message: Message) -> None:
            # As the API does, before the answer leaves: a refused request writes nothing.
            token = principal.token
            if message["type"] == "http.response.start" and message["status"] < 400 and token is not None:
                if last_use_due(token.last_used_at, timezone.now()):
                    await in_thread(scope, partial(token_use_note, token=token))
            await send(message)

        replayed = _replay(body, receive)
        del body  # the transport reads its own copy: this one would double what the request holds
        await self.app({**scope, PRINCIPAL: principal}, replayed, noting_use)


def caller_concurrency() -> int:
    """The calls one user may have under way here at once: half the threads that run them, as a
    web process keeps half of its threads for everyone else."""
    return max(1, settings.MEMSITE_MCP_THREADS // 2)


def large_bodies_held_bytes() -> int:
    """MEMSITE_MCP_LARGE_BODIES of the largest bodies: read when a body is taken, as every bound."""
    return settings.MEMSITE_MCP_LARGE_BODIES * json_body_limit()


def body_limit(role: Role) -> int:
    """The largest body a principal of `role` may send: a call that writes may carry a node's
    content, as POST /api/tools/call/ takes it; a reader's calls carry none (every tool that
    takes a document, a transcript or questions writes)."""
    return json_body_limit() if role_allows(role, Role.EDITOR) else SMALL_BODY_BYTES


def _chunked(headers: Headers) -> bool:
    return "chunked" in headers.get("transfer-encoding", "").lower()


def _host_check(headers: Headers) -> None:
    domain, _port = split_domain_port(headers.get("host", ""))
    if not domain or not validate_host(domain, settings.ALLOWED_HOSTS):
        raise InvalidInput("Invalid Host header: add it to DJANGO_ALLOWED_HOSTS.")


def _admit(authorization: bytes) -> Principal:
    """The principal of the request's token, counted against the API's rate: TokenRefused
    (401) without one that acts as someone, RateLimited (429) past the rate."""
    key = header_key(authorization)
    if key is None:
        raise TokenRefused(NO_TOKEN)
    principal = token_authenticate(key=key)
    # The REST API's clock: both count the one rate.
    hit = api_rate_hit(f"user:{principal.user.pk}", now=UserRequestThrottle.timer())
    if not hit.allowed:
        raise RateLimited(hit.retry_after_s)
    return principal


async def _body(receive: Receive, limit: int) -> bytes | None:
    """The whole body, within `limit`, checked as the API checks JSON before it is parsed; None
    when the client leaves first."""
    body = await _received(receive, limit)
    if body is not None:
        # Off the event loop: a large body takes a while to scan, and others' requests go on.
        await anyio.to_thread.run_sync(_json_checked, body)
    return body


async def _received(receive: Receive, limit: int) -> bytes | None:
    """The whole body, within `limit` even when it comes without a Content-Length, each piece
    within MEMSITE_BODY_TIMEOUT_S as gunicorn reads the API's (else BodyTimedOut, 408), so that
    a client that stops sending frees what it holds of its BodyBudget; None when the client
    leaves first."""
    chunks: list[bytes] = []
    size = 0
    timeout_s = settings.MEMSITE_BODY_TIMEOUT_S
    while True:
        with anyio.move_on_after(timeout_s) as waiting:
            message = await receive()
        if waiting.cancelled_caught:
            raise BodyTimedOut(f"The request body stopped arriving: nothing came for {timeout_s} s.")
        if message["type"] != "http.request":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        refuse_over(size, limit, "request body")
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _json_checked(body: bytes) -> None:
    """The API's checks of a JSON body before it is parsed: its values counted, its nesting."""
    refuse_many_values(body)
    refuse_deep_nesting(body)


def _replay(body: bytes, receive: Receive) -> Receive:
    """The body, read already, for the app; then what the client sends next (its leaving)."""
    pending = [{"type": "http.request", "body": body, "more_body": False}]

    async def replayed() -> Message:
        return pending.pop() if pending else await receive()

    return replayed


def _refusal(refusal: ServiceError) -> JSONResponse:
    headers = {"Retry-After": str(refusal.retry_after_s)} if refusal.retry_after_s else {}
    if refusal.status == 401:
        headers["WWW-Authenticate"] = "Token"
    return JSONResponse(refusal.body(), status_code=refusal.status, headers=headers)
