"""Requests in flight per caller and process: at most MEMSITE_USER_CONCURRENCY at once, so that
one caller within every rate and size cap cannot hold all of a process's threads.
Explained in docs/memsite.md."""

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.html import format_html
from rest_framework.request import Request
from rest_framework.throttling import BaseThrottle

from memsite.errors import ServiceError
from memsite.limits import PLAIN_TEXT, HeldStream
from memsite.middleware import DATABASE_ERRORS, HTMX_FRAGMENT, database_unavailable
from memsite.throttles import caller_of

HELD = "_memsite_in_flight"  # the request's InFlightSlot, on the Django request


class TooManyInFlight(ServiceError):
    """The caller already has MEMSITE_USER_CONCURRENCY requests under way in this process."""

    status = 429
    retry_after_s = 1  # sent as Retry-After: a request of the caller's own ends soon


_counts: dict[str, int] = {}
_counts_lock = threading.Lock()


def in_flight(caller: str) -> int:
    """The caller's requests under way in this process."""
    with _counts_lock:
        return _counts.get(caller, 0)


def _take(caller: str, limit: int) -> bool:
    with _counts_lock:
        count = _counts.get(caller, 0)
        if count >= limit:
            return False
        _counts[caller] = count + 1
        return True


def _give_back(caller: str) -> None:
    with _counts_lock:
        count = _counts.pop(caller) - 1
        if count:
            _counts[caller] = count  # a caller with none under way has no entry: no address lingers


@dataclass
class InFlightSlot:
    """One of a caller's slots, given back once, however often `release` is called."""

    caller: str
    _held: bool = field(default=True, repr=False)

    def release(self) -> None:
        if self._held:
            self._held = False
            _give_back(self.caller)


def caller_slot(caller: str, limit: int) -> InFlightSlot:
    """One of `caller`'s `limit` slots in this process; TooManyInFlight (429) when none is free.
    Never waits, so the MCP server's event loop may take one too."""
    if not _take(caller, limit):
        raise TooManyInFlight(
            f"Too many requests at once: {limit} of yours are already under way here. "
            f"Wait for one to end, or try again in {TooManyInFlight.retry_after_s} second."
        )
    return InFlightSlot(caller)


def hold(request: HttpRequest, caller: str) -> None:
    """A slot of `caller` held for `request` until CallerConcurrencyMiddleware gives it back;
    TooManyInFlight (429) when the caller has none free. A request holds one slot at most."""
    if getattr(request, HELD, None) is None:
        setattr(request, HELD, caller_slot(caller, settings.MEMSITE_USER_CONCURRENCY))


def concurrency_exempt(view: Callable) -> Callable:
    """For a view never counted (the health check): it must answer while a caller is at its cap."""
    view.concurrency_exempt = True  # type: ignore[attr-defined]
    return view


def _is_api_view(view: Callable) -> bool:
    # DRF's as_view() keeps the class as `cls`, Django's only as `view_class`. Not checked with
    # issubclass: DRF imports this module, by DEFAULT_THROTTLE_CLASSES, while it makes APIView.
    return getattr(view, "cls", None) is not None


def _refusal(request: HttpRequest, refused: TooManyInFlight) -> HttpResponse:
    if request.path.startswith("/api/"):
        response: HttpResponse = JsonResponse(refused.body(), status=refused.status)
    elif request.headers.get("HX-Request") == "true":
        # Into the layout's banner, as an outage is: a poll or a panel refused keeps what it showed.
        response = HttpResponse(format_html(HTMX_FRAGMENT, refused.message), status=refused.status)
        response["HX-Reswap"] = "none"
    else:
        response = HttpResponse(refused.message, status=refused.status, content_type=PLAIN_TEXT)
    response["Retry-After"] = str(refused.retry_after_s)
    return response


class CallerConcurrencyMiddleware:
    """After AuthenticationMiddleware, which says who a session's caller is. A page takes its
    slot here, before the view; an API view takes it in CallerConcurrencyThrottle, once DRF has
    authenticated its token. Either way the slot is given back here: when the response is made,
    or for a streamed one when the server closes it."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            response = self.get_response(request)
        except BaseException:
            _release(request)
            raise
        slot: InFlightSlot | None = getattr(request, HELD, None)
        if slot is not None and response.streaming:
            response.streaming_content = HeldStream(response.streaming_content, slot.release)  # type: ignore[attr-defined]
        else:
            _release(request)
        return response

    def process_view(self, request: HttpRequest, view: Callable, args: tuple, kwargs: dict) -> HttpResponse | None:
        if getattr(view, "concurrency_exempt", False) or _is_api_view(view):
            return None
        try:
            hold(request, caller_of(request))  # reads the session
        except TooManyInFlight as refused:
            return _refusal(request, refused)
        except DATABASE_ERRORS as error:  # met before the view: DatabaseUnavailableMiddleware never sees it
            return database_unavailable(request, error)
        return None


def _release(request: HttpRequest) -> None:
    slot: InFlightSlot | None = getattr(request, HELD, None)
    if slot is not None:
        slot.release()


class CallerConcurrencyThrottle(BaseThrottle):
    """The API's side of CallerConcurrencyMiddleware (DEFAULT_THROTTLE_CLASSES): DRF runs
    throttles once the request is authenticated, so a token's caller is known here."""

    def allow_request(self, request: Request, view) -> bool:
        hold(request._request, caller_of(request))
        return True
