"""API plumbing shared by every app: service errors become JSON responses with their status,
every error body bounded in size; JSON that nests too deeply is a 400; request bodies are
bounded by their Content-Length. The rate limit is memsite.throttles'."""

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import HttpRequest
from rest_framework import exceptions, parsers
from rest_framework.request import Request
from rest_framework.response import Response

from memsite.errors import InvalidInput, LengthRequired, ServiceError, TooLarge, bounded


def exception_handler(exc: Exception, context: dict) -> Response | None:
    """Every API refusal as JSON with its status, its body bounded (memsite.errors.bounded)."""
    if isinstance(exc, RequestDataTooBig):
        # Django's bound on a body it reads whole (DATA_UPLOAD_MAX_MEMORY_SIZE), met while parsing
        # JSON or a form: a 413 in JSON like every other refusal, not Django's HTML 400.
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        exc = TooLarge(f"The request body is {content_length(context['request'])} bytes; the limit is {limit} bytes.")
    elif isinstance(exc, (TooManyFieldsSent, TooManyFilesSent)):
        exc = InvalidInput(str(exc))
    if isinstance(exc, ServiceError):
        response = Response(bounded({"detail": exc.message, **exc.data}), status=exc.status)
        if retry_after := getattr(exc, "retry_after_s", None):
            response["Retry-After"] = str(retry_after)
        return response
    if isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(detail=exc.message_dict if hasattr(exc, "error_dict") else exc.messages)
    # Imported here: rest_framework.views reads DEFAULT_PARSER_CLASSES when it is imported, which
    # names this module's JSONParser; imported above, whichever module imported this one first
    # would find it half-made.
    from rest_framework.views import exception_handler as drf_exception_handler

    response = drf_exception_handler(exc, context)
    if response is not None:
        response.data = bounded(response.data)
    return response


class JSONParser(parsers.JSONParser):
    """The API's JSON parser (DEFAULT_PARSER_CLASSES): a document nested deeper than Python's
    parser can follow is a 400, not a crash."""

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise exceptions.ParseError("JSON parse error - the document is nested too deeply.") from None


def content_length(request: Request | HttpRequest) -> int:
    raw = request.META.get("CONTENT_LENGTH") or "0"
    if not raw.isascii() or not raw.isdigit():
        raise InvalidInput(f"The Content-Length header {raw!r} is not a number.")
    return int(raw)


def refuse_longer_than(request: Request | HttpRequest, limit: int, what: str) -> None:
    """413 from the Content-Length header alone, before any of the body is read."""
    length = content_length(request)
    if length > limit:
        raise TooLarge(f"The {what} is {length} bytes; the limit is {limit} bytes.")


def read_body(request: Request, *, what: str, limit: int, allow_empty: bool = False) -> bytes:
    """The request body as bytes, whatever its content type (or none), within `limit`. Read from
    the stream rather than `request.data`, so that an unparsed body never reads as no document,
    and so that `limit` rather than DATA_UPLOAD_MAX_MEMORY_SIZE bounds it. A body without a
    Content-Length (chunked) is refused: the WSGI server hands it over as empty, and taking
    that for the document would wipe what it replaces."""
    if not request.META.get("CONTENT_LENGTH") or "chunked" in request.headers.get("Transfer-Encoding", "").lower():
        raise LengthRequired(f"Send the {what} with a Content-Length header; chunked uploads are not accepted.")
    refuse_longer_than(request, limit, what)
    length = content_length(request)
    body = request.stream.read(length) if length else b""
    if not body and not allow_empty:
        raise InvalidInput(f"Send the {what} as the request body.")
    return body

