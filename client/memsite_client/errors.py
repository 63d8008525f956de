"""The errors the client raises: one MemsiteError subclass per kind of refusal, each with the
API's message, the HTTP status, the whole JSON body and, for 429 and 503, Retry-After."""

from typing import Any

import httpx

from memsite_client.retry import retry_after_seconds


class MemsiteError(Exception):
    """Any refusal of the API, or a request that got no answer."""

    status: int | None = None

    def __init__(
        self, message: str, *, status: int | None = None, body: Any = None, retry_after: float | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status
        self.body = body
        self.retry_after = retry_after

    def __str__(self) -> str:
        return f"{self.status}: {self.message}" if self.status else self.message


class BadRequest(MemsiteError):
    status = 400


class Unauthorized(MemsiteError):
    status = 401


class Forbidden(MemsiteError):
    status = 403


class NotFound(MemsiteError):
    status = 404


class Conflict(MemsiteError):
    """A stale version (If-Match), a name a sibling has, a search that has already ended, ..."""

    status = 409


class TooLarge(MemsiteError):
    status = 413


class Unprocessable(MemsiteError):
    status = 422


class RateLimited(MemsiteError):
    """429: past the rate limit, a cap on work in flight or the daily LLM budget."""

    status = 429


class ServerError(MemsiteError):
    status = 500


class BadGateway(ServerError):
    """502: the LLM behind the request failed (chat)."""

    status = 502


class Unavailable(ServerError):
    """503: a backend the request needs (the task queue) does not answer; nothing changed."""

    status = 503


class ConnectionFailed(MemsiteError):
    """The request got no answer: the server is unreachable, or it took longer than the timeout."""


class WaitTimeout(MemsiteError):
    """A search or graph operation was still under way when the wait ran out; `result` is it
    as last read."""

    def __init__(self, message: str, *, result: Any) -> None:
        super().__init__(message)
        self.result = result


BY_STATUS: dict[int, type[MemsiteError]] = {
    error.status: error
    for error in (
        BadRequest,
        Unauthorized,
        Forbidden,
        NotFound,
        Conflict,
        TooLarge,
        Unprocessable,
        RateLimited,
        ServerError,
        BadGateway,
        Unavailable,
    )
}


def error_for(response: httpx.Response) -> MemsiteError:
    """The error a refusal stands for, with the message its body gives."""
    try:
        body = response.json()
    except ValueError:
        body = None
    kind = BY_STATUS.get(response.status_code) or (ServerError if response.status_code >= 500 else MemsiteError)
    message = message_of(body) or response.text.strip()[:500] or response.reason_phrase
    if response.is_redirect:  # not followed: a POST would arrive as a GET, or not at all
        message = f"The server redirects to {response.headers['Location']}: give the client that address."
    retry_after = retry_after_seconds(response.headers.get("Retry-After"))
    return kind(message, status=response.status_code, body=body, retry_after=retry_after)


def message_of(body: Any) -> str:
    """The API's message: its `detail`, or each field's errors as `field: message`."""
    if isinstance(body, dict) and isinstance(body.get("detail"), str):
        return body["detail"]
    return "; ".join(_messages(body, ""))


def _messages(value: Any, where: str) -> list[str]:
    if isinstance(value, dict):
        return [line for key, item in value.items() for line in _messages(item, f"{where}.{key}" if where else key)]
    if isinstance(value, list):
        return [line for item in value for line in _messages(item, where)]
    if value is None:
        return []
    return [f"{where}: {value}" if where else str(value)]
