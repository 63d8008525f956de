"""Bounds on what one request may hold: its body's size, the time its body may take to arrive,
and the threads that wait.

Size. Django bounds a body by DATA_UPLOAD_MAX_MEMORY_SIZE only when something reads it whole (a
form, DRF's JSON parser). A view that takes no body reads none of it, but the server still
receives and drops whatever a client sends; and a dashboard form's body is read by the CSRF
check before the view runs. So every request is refused with 413 when it announces more than
its view may read: DATA_UPLOAD_MAX_MEMORY_SIZE, or the view's own larger limit for the few that
take big bodies (content, archives, memory.json, snapshots), which those views check precisely
themselves.

Time. Under gunicorn a thread reads a request's body while the view runs; a client that
announces a body and sends none of it holds the thread as long as it likes (forty such
connections on the login page held them all). BodyReadTimeout, in memsite.wsgi, reads a body
of up to DATA_UPLOAD_MAX_MEMORY_SIZE before Django sees the request, each read of the socket
bounded by MEMSITE_BODY_TIMEOUT_S, and answers 408 when one finds nothing. It frees the thread of
a stalled body; it does not bound a body that trickles in a byte at a time, nor bodies larger
than that (only the upload views take them, once the request is authenticated), nor the
threads an attacker takes by opening connections faster than they time out. The buffering
proxy in front of gunicorn does: this is the defence of a deployment without it.

Waiting. A search's `?wait` and chat (an LLM call inside the request) hold a thread for seconds.
At most MEMSITE_WAIT_SLOTS of them wait at once in a process (`wait_slots`), so the others
always serve the rest: past it a search answers at once, as without `?wait`, and chat answers
429 with Retry-After."""

import json
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from http import HTTPStatus
from typing import IO, Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse

from memsite.api import refuse_longer_than
from memsite.errors import InvalidInput, ServiceError, TooLarge

PLAIN_TEXT = "text/plain; charset=utf-8"


def _json_body() -> int:
    from memory.api.http import json_body_limit

    return json_body_limit()


def _archive() -> int:
    from memory.api.http import MULTIPART_SLACK_BYTES

    return settings.MEMSITE_ARCHIVE_MAX_BYTES + MULTIPART_SLACK_BYTES


# Views that read more than DATA_UPLOAD_MAX_MEMORY_SIZE may allow, by URL name, with the limit
# each enforces itself.
OWN_LIMITS: dict[str, Callable[[], int]] = {
    "memory-api:node-create": _json_body,
    "memory-api:node-detail": _json_body,
    "memory-api:node-move": _json_body,
    "memory-api:node-content": lambda: settings.MEMSITE_MAX_CONTENT_BYTES,
    "memory-api:project-import": _archive,
    "memory-api:search-start": _json_body,
    "memory-api:question-answer": _json_body,
    "memory:project_upload": _archive,
    "agents-api:memory-json": lambda: settings.MEMSITE_BRAIN_IMPORT_MAX_BYTES,
    "graphs-api:graph-snapshot": lambda: settings.MEMSITE_GRAPH_SNAPSHOT_MAX_BYTES,
}


def body_limit(view_name: str | None) -> int:
    own = OWN_LIMITS.get(view_name or "")
    return max(own(), settings.DATA_UPLOAD_MAX_MEMORY_SIZE) if own else settings.DATA_UPLOAD_MAX_MEMORY_SIZE


class RequestBodyLimitMiddleware:
    """Before CsrfViewMiddleware, which reads a form's body to find its token."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_view(self, request: HttpRequest, view_func, view_args, view_kwargs) -> HttpResponse | None:
        match = request.resolver_match
        try:
            refuse_longer_than(request, body_limit(match.view_name if match is not None else None), "request body")
            return None
        except InvalidInput:
            return None  # a Content-Length that is not a number: the view refuses it, or reads nothing
        except TooLarge as exc:
            message = exc.message
        if request.path.startswith("/api/"):
            return JsonResponse({"detail": message}, status=413)
        return HttpResponse(message, status=413, content_type=PLAIN_TEXT)


# -- the time a body may take --------------------------------------------------------------------

BODY_CHUNK_BYTES = 64 * 1024
BODY_SPOOL_BYTES = 1024 * 1024  # a buffered body past this goes to a temporary file


class BodyNotReceived(Exception):
    """A body that did not arrive whole, and the status and message it is refused with."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


def _announced_length(environ: dict[str, Any]) -> int:
    raw = environ.get("CONTENT_LENGTH") or ""
    return int(raw) if raw.isascii() and raw.isdigit() else 0


def _read_within(stream: IO[bytes], sock: Any, length: int, timeout_s: int) -> IO[bytes]:
    """The body's `length` bytes, in a file, each read of `sock` waiting at most `timeout_s`.
    A refused body's file is dropped with the refusal (and a spooled file deleted with it)."""
    body = tempfile.SpooledTemporaryFile(max_size=BODY_SPOOL_BYTES)
    prior = sock.gettimeout()
    sock.settimeout(timeout_s)
    try:
        left = length
        while left:
            chunk = stream.read(min(left, BODY_CHUNK_BYTES))
            if not chunk:
                raise BodyNotReceived(400, f"The request body ended {left} bytes short of its Content-Length.")
            body.write(chunk)
            left -= len(chunk)
    except TimeoutError:
        raise BodyNotReceived(408, f"The request body stopped arriving: nothing came for {timeout_s} s.") from None
    finally:
        # gunicorn writes the response, and waits for the next request, with its own timeout.
        sock.settimeout(prior)
    body.seek(0)
    return body


def _refusal(environ: dict[str, Any], start_response: Callable, status: int, message: str) -> Iterable[bytes]:
    if environ.get("PATH_INFO", "").startswith("/api/"):
        content, content_type = json.dumps({"detail": message}).encode(), "application/json"
    else:
        content, content_type = message.encode(), PLAIN_TEXT
    headers = [("Content-Type", content_type), ("Content-Length", str(len(content)))]
    start_response(f"{status} {HTTPStatus(status).phrase}", headers)
    return [content]


class BodyReadTimeout:
    """WSGI middleware (memsite.wsgi): under gunicorn, a body Django may read whole is read
    first, each read of the socket bounded by MEMSITE_BODY_TIMEOUT_S; one that stalls is a 408
    before Django runs. Elsewhere (the development server, the test client) it does nothing."""

    def __init__(self, application: Callable):
        self.application = application

    def __call__(self, environ: dict[str, Any], start_response: Callable) -> Iterable[bytes]:
        sock = environ.get("gunicorn.socket")
        length = _announced_length(environ)
        # A larger body is refused from its Content-Length (RequestBodyLimitMiddleware) or read
        # by an upload view after it has authenticated the request.
        if sock is not None and 0 < length <= settings.DATA_UPLOAD_MAX_MEMORY_SIZE:
            try:
                environ["wsgi.input"] = _read_within(
                    environ["wsgi.input"], sock, length, settings.MEMSITE_BODY_TIMEOUT_S
                )
            except BodyNotReceived as refused:
                return _refusal(environ, start_response, refused.status, refused.message)
        return self.application(environ, start_response)


# -- requests that wait --------------------------------------------------------------------------


class Busy(ServiceError):
    """Every slot for waiting requests is taken; the request did nothing."""

    status = 429
    retry_after_s = 5  # sent as Retry-After


class WaitSlots:
    """A process's slots for requests that wait: taken without blocking, so a request that finds
    none answers at once instead of queueing for a thread."""

    def __init__(self, size: int):
        self.size = size
        self._free = threading.BoundedSemaphore(size)

    @contextmanager
    def hold(self) -> Iterator[bool]:
        """Whether a slot was free; it is held until the block ends."""
        taken = self._free.acquire(blocking=False)
        try:
            yield taken
        finally:
            if taken:
                self._free.release()

    @contextmanager
    def hold_or_busy(self) -> Iterator[None]:
        """A slot held until the block ends, or Busy (429) when there is none."""
        with self.hold() as taken:
            if not taken:
                raise self._busy()
            yield

    def streaming(self, chunks: Iterator[bytes]) -> "HeldStream":
        """`chunks` for a streamed response, holding a slot until the response is closed; Busy
        (429) when there is none. A long download holds its thread as a wait does."""
        if not self._free.acquire(blocking=False):
            raise self._busy()
        return HeldStream(chunks, self._free.release)

    def _busy(self) -> Busy:
        return Busy(
            f"Busy: {self.size} long requests (waits, chats, downloads) are already under way here. "
            f"Try again in {Busy.retry_after_s} seconds."
        )


class HeldStream:
    """A streamed response's chunks and the slot they hold: the server closes the response when
    it is sent or dropped, and that gives the slot back (a generator's `finally` would not run
    for a response that never started)."""

    def __init__(self, chunks: Iterator[bytes], release: Callable[[], None]):
        self._chunks = chunks
        self._release: Callable[[], None] | None = release

    def __iter__(self) -> Iterator[bytes]:
        return self._chunks

    def close(self) -> None:
        if self._release is not None:
            self._release, release = None, self._release
            getattr(self._chunks, "close", lambda: None)()
            release()


_wait_slots: WaitSlots | None = None
_wait_slots_lock = threading.Lock()


def wait_slots() -> WaitSlots:
    """This process's slots, as many as MEMSITE_WAIT_SLOTS when first used."""
    global _wait_slots
    with _wait_slots_lock:
        if _wait_slots is None:
            _wait_slots = WaitSlots(settings.MEMSITE_WAIT_SLOTS)
        return _wait_slots
