"""One bound on every request's body, checked from its Content-Length before anything reads it.

Django bounds a body by DATA_UPLOAD_MAX_MEMORY_SIZE only when something reads it whole (a form,
DRF's JSON parser). A view that takes no body reads none of it, but the server still receives
and drops whatever a client sends; and a dashboard form's body is read by the CSRF check before
the view runs. So every request is refused with 413 when it announces more than its view may
read: DATA_UPLOAD_MAX_MEMORY_SIZE, or the view's own larger limit for the few that take big
bodies (content, archives, memory.json, snapshots), which those views check precisely
themselves."""

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse

from memsite.api import refuse_longer_than
from memsite.errors import InvalidInput, TooLarge

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
