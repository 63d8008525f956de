"""The MCP server's ASGI app: streamable HTTP at POST /mcp, stateless and answering in JSON,
behind TokenGate, which holds it to the API's rules: tokens (never sessions), the rate limit
and the bounds on a body. Explained in docs/mcp.md."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import anyio
from django.conf import settings
from django.http.request import split_domain_port, validate_host
from django.utils import timezone
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memsite.api import header_length, refuse_many_values, refuse_over
from memsite.errors import InvalidInput, ServiceError
from memsite.spaces.api.authentication import header_key
from memsite.spaces.logic import last_use_due
from memsite.spaces.principals import Principal
from memsite.spaces.services import TokenRefused, token_authenticate, token_use_note
from memsite.throttles import UserRequestThrottle, api_rate_hit
from tools.mcp.context import PRINCIPAL, THREADS, in_thread
from tools.mcp.server import build_server, refusal_of

PATH = "/mcp"
NO_TOKEN = "Send an API token: `Authorization: Token <key>` or `Bearer <key>`. Sessions are not accepted here."


def application() -> Starlette:
    manager = StreamableHTTPSessionManager(
        build_server(),
        json_response=True,  # one JSON answer a request: the server sends nothing unasked
        stateless=True,  # any process, or any restart, answers any request
        max_request_body_size=settings.DATA_UPLOAD_MAX_MEMORY_SIZE,
    )

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[dict[str, Any]]:
        async with manager.run():
            yield {THREADS: anyio.CapacityLimiter(settings.MEMSITE_MCP_THREADS)}

    # POST only: a GET would open a stream for messages the server never sends unasked.
    return Starlette(routes=[Route(PATH, TokenGate(manager.handle_request), methods=["POST"])], lifespan=lifespan)


class RateLimited(ServiceError):
    status = 429

    def __init__(self, retry_after_s: int):
        super().__init__(f"Request was throttled. Expected available in {retry_after_s} seconds.")
        self.retry_after_s = retry_after_s


class TokenGate:
    """In front of the MCP transport, in the API's order: the Host one of ALLOWED_HOSTS, the
    Content-Length within DATA_UPLOAD_MAX_MEMORY_SIZE, a token that acts as someone, within
    MEMSITE_API_RATE, then the body read whole (within the bound, and of at most the API's JSON
    values). A refusal is the API's JSON with its status; the principal goes in the scope."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = Headers(scope=scope)
        try:
            _host_check(headers)
            refuse_over(header_length(headers.get("content-length") or "0"), _limit(), "request body")
            authorization = headers.get("authorization", "").encode("latin-1")
            principal = await in_thread(scope, partial(_admit, authorization))
            body = await _body(receive)
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

        await self.app({**scope, PRINCIPAL: principal}, _replay(body, receive), noting_use)


def _limit() -> int:
    return settings.DATA_UPLOAD_MAX_MEMORY_SIZE


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
    hit = api_rate_hit(f"user:{principal.user.pk}", now=UserRequestThrottle.timer())  # type: ignore[attr-defined]
    if not hit.allowed:
        raise RateLimited(hit.retry_after_s)
    return principal


async def _body(receive: Receive) -> bytes | None:
    """The whole body, within the bound even when it comes without a Content-Length; None when
    the client leaves first."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        refuse_over(size, _limit(), "request body")
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    body = b"".join(chunks)
    refuse_many_values(body)
    return body


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
