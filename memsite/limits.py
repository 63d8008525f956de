"""Bounds on what one request may hold: its body's size and fields, the time its body may take
to arrive, and the threads that wait.
Explained in docs/memsite.md."""

import json
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from http import HTTPStatus
from io import BytesIO
from typing import IO, Any

from django.conf import settings
from django.core.handlers.wsgi import get_path_info
from django.http import HttpRequest, HttpResponse, JsonResponse, UnreadablePostError
from django.urls import Resolver404, URLPattern, URLResolver, get_resolver
from django.utils.datastructures import MultiValueDict

from memsite.api import refuse_longer_than
from memsite.errors import InvalidInput, ServiceError
from memsite.form_bodies import FORM_CONTENT_TYPE, form_fields

PLAIN_TEXT = "text/plain; charset=utf-8"


Limit = Callable[[], int]


def max_body_bytes(limit: Limit):
    """Declares that a view (a function, or an APIView or View class) takes bodies of up to
    `limit()` bytes rather than DATA_UPLOAD_MAX_MEMORY_SIZE. A form's is read and parsed within
    it (RequestBodyLimitMiddleware); a view that reads its body itself checks it too."""

    def declare(view):
        view.max_body_bytes = staticmethod(limit) if isinstance(view, type) else limit
        return view

    return declare


def declared_limit(view: Callable) -> Limit | None:
    """The limit a resolved view declares: on the function, or on the class that DRF's
    `as_view()` keeps as `cls` and Django's as `view_class`."""
    for holder in (view, getattr(view, "cls", None), getattr(view, "view_class", None)):
        limit = getattr(holder, "max_body_bytes", None)
        if limit is not None:
            return limit
    return None


def _bytes(own: Limit | None) -> int:
    return own() if own else settings.DATA_UPLOAD_MAX_MEMORY_SIZE


def body_limit_at(path: str) -> int:
    """The largest body the view at `path` takes (DATA_UPLOAD_MAX_MEMORY_SIZE where none is)."""
    try:
        view = get_resolver().resolve(path).func
    except Resolver404:
        return settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    return _bytes(declared_limit(view))


def _named_views(patterns: list, prefix: str = "") -> Iterator[tuple[str, Callable]]:
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            namespace = f"{prefix}{pattern.namespace}:" if pattern.namespace else prefix
            yield from _named_views(pattern.url_patterns, namespace)
        elif isinstance(pattern, URLPattern) and pattern.name:
            yield prefix + pattern.name, pattern.callback


def declared_limits() -> dict[str, int]:
    """The largest body each view that declares a limit of its own may be sent, by URL name,
    read from the URLconf (what the proxy's body size must admit where it serves that view)."""
    views = _named_views(get_resolver().url_patterns)
    return {name: _bytes(limit) for name, view in views if (limit := declared_limit(view)) is not None}


class RequestBodyLimitMiddleware:
    """Before CsrfViewMiddleware, which reads a form's body to find its token: a body over its
    view's limit is refused from its Content-Length, and a form's is read and parsed here, within
    that limit rather than DATA_UPLOAD_MAX_MEMORY_SIZE, and in bounded memory."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_view(self, request: HttpRequest, view_func, view_args, view_kwargs) -> HttpResponse | None:
        limit = _bytes(declared_limit(view_func))
        try:
            refuse_longer_than(request, limit, "request body")
        except InvalidInput:
            return None  # a Content-Length that is not a number: the view refuses it, or reads nothing
        except ServiceError as refused:
            return _refused(request, refused)
        if request.method == "POST" and request.content_type == FORM_CONTENT_TYPE and _utf8(request):
            try:
                _parse_form(request)
            except ServiceError as refused:
                return _refused(request, refused)
        return None


def _utf8(request: HttpRequest) -> bool:
    """Whether the form may be parsed: Django refuses one that names another charset itself."""
    return request.encoding is None or request.encoding.lower() == "utf-8"


def _parse_form(request: HttpRequest) -> None:
    """Reads the form (its Content-Length is checked already) and sets what Django would have
    parsed from it, so that request.POST never goes through Python's parse_qsl."""
    try:
        body = request.read()
    except UnreadablePostError:
        raise InvalidInput("The request body could not be read: the connection broke off.") from None
    # As HttpRequest.body keeps a body it has read; request.body then skips Django's size check,
    # which knows only DATA_UPLOAD_MAX_MEMORY_SIZE and not the view's own limit.
    request._body = body
    request._stream = BytesIO(body)
    # Both, as Django sets them: request.FILES without `_files` would parse the body again.
    request._post = form_fields(body, max_fields=settings.DATA_UPLOAD_MAX_NUMBER_FIELDS)  # type: ignore[attr-defined]
    request._files = MultiValueDict()  # type: ignore[attr-defined]


def _refused(request: HttpRequest, refused: ServiceError) -> HttpResponse:
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": refused.message}, status=refused.status)
    return HttpResponse(refused.message, status=refused.status, content_type=PLAIN_TEXT)


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
    """WSGI middleware (memsite.wsgi): under gunicorn, a body within what its view takes is read
    first, each read of the socket bounded by MEMSITE_BODY_TIMEOUT_S; one that stalls is a 408
    before Django runs. Elsewhere (the development server, the test client) it does nothing."""

    def __init__(self, application: Callable):
        self.application = application

    def __call__(self, environ: dict[str, Any], start_response: Callable) -> Iterable[bytes]:
        sock = environ.get("gunicorn.socket")
        length = _announced_length(environ)
        # A larger body is refused from its Content-Length (RequestBodyLimitMiddleware), unread.
        if sock is not None and 0 < length <= body_limit_at(get_path_info(environ)):
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
            release, self._release = self._release, None
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
