"""API plumbing shared by every app: service errors become JSON responses with their status,
every error body bounded in size; JSON that nests too deeply is a 400; request bodies are
bounded by their Content-Length. The rate limit is memsite.throttles'."""

import io
import json
import re

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import HttpRequest
from rest_framework import exceptions, parsers
from rest_framework.request import Request
from rest_framework.response import Response

from memsite.errors import InvalidInput, LengthRequired, ServiceError, TooLarge, bounded
from memsite.form_bodies import form_fields
from memsite.storable import deeper_than


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
        refusal = Response(exc.body(), status=exc.status)
        if exc.retry_after_s:
            refusal["Retry-After"] = str(exc.retry_after_s)
        return refusal
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


# Values (numbers, strings, lists, objects) an API request's JSON may hold. Parsed, each costs
# 30 to 200 bytes, so that a body of `[],[],...` grows twenty-fold; no request needs as many.
MAX_JSON_VALUES = 100_000
# A string, an empty list or object, or a comma or opening bracket: what a value follows. A
# string never closed runs to the end of the body: were it to fail instead, the scan would start
# again at each later quote, and a body of many `\"` would take minutes.
JSON_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)|[\[{]\s*[\]}]|[,\[{]', re.S)


def json_values_over(body: bytes, limit: int) -> bool:
    """Whether the JSON text `body` holds more than `limit` values (an object's keys are not
    counted). A value is the document, or follows a comma or the opening of a list or object
    that is not empty, outside strings. The tokens are read one at a time, and only until the
    count is past `limit`, so that counting costs no memory."""
    if body.count(b",") + body.count(b"[") + body.count(b"{") < limit:
        return False  # every value but the document follows one of these, in strings or not
    values = 1
    for token in JSON_TOKEN.finditer(body):
        start, end = token.span()
        values += end - start == 1  # a comma or an opening bracket, not a string or `[]`
        if values > limit:
            return True
    return values > limit


def refuse_many_values(body: bytes) -> None:
    """TooLarge (413) for a JSON document of more than MAX_JSON_VALUES values, before it is parsed."""
    if json_values_over(body, MAX_JSON_VALUES):
        raise TooLarge(f"The JSON document holds more than {MAX_JSON_VALUES:,} values.")


NESTED_TOO_DEEPLY = "JSON parse error - the document is nested too deeply."
# Levels of objects and lists a document read by refuse_deep_nesting may have: requests need a
# handful; Python's parser gives up somewhere below 1,000, where depends on the stack it is
# called from, so a bound far under that holds wherever the document is parsed next.
MAX_JSON_DEPTH = 100


def refuse_deep_nesting(body: bytes) -> None:
    """InvalidInput (400), as the API's parser answers, for a JSON document that nests more than
    MAX_JSON_DEPTH levels, before a parser that is not ours meets it. Parsed only when it holds
    that many opening brackets; a body that is no JSON is left for that parser to refuse."""
    if body.count(b"[") + body.count(b"{") <= MAX_JSON_DEPTH:
        return  # each level opens with one of these, in strings or not
    try:
        document = json.loads(body)
    except RecursionError:
        raise InvalidInput(NESTED_TOO_DEEPLY) from None
    except ValueError:
        return
    if deeper_than(document, MAX_JSON_DEPTH):
        raise InvalidInput(NESTED_TOO_DEEPLY)


class JSONParser(parsers.JSONParser):
    """The API's JSON parser (DEFAULT_PARSER_CLASSES): a document nested deeper than Python's
    parser can follow is a 400, not a crash; one of more than MAX_JSON_VALUES values is a 413
    before it is parsed."""

    def parse(self, stream, media_type=None, parser_context=None):
        body = stream.read()
        refuse_many_values(body)
        try:
            return super().parse(io.BytesIO(body), media_type, parser_context)
        except RecursionError:
            raise exceptions.ParseError(NESTED_TOO_DEEPLY) from None


def json_body_limit() -> int:
    """The largest sensible JSON request: content at the cap, every byte escaped as `\\uXXXX`,
    plus room for the other fields."""
    return 6 * settings.MEMSITE_MAX_CONTENT_BYTES + 1024 * 1024


class BoundedJSONParser(parsers.BaseParser):
    """JSON, refused with 413 from the Content-Length header when it could not be a valid request.

    Not a JSONParser subclass on purpose: DRF reads `request.body` for those before parsing, so
    Django's DATA_UPLOAD_MAX_MEMORY_SIZE (sized for raw content) would refuse a base64 upload near
    the content cap with a bare 400. Here the limit is ours and fits the largest valid request."""

    media_type = "application/json"
    renderer_class = JSONParser.renderer_class

    def parse(self, stream, media_type=None, parser_context=None):
        refuse_longer_than(parser_context["request"], json_body_limit(), "request body")
        return JSONParser().parse(stream, media_type, parser_context)


class FormParser(parsers.FormParser):
    """The API's form parser (DEFAULT_PARSER_CLASSES): Django's meaning, in bounded memory
    (memsite.form_bodies), with DATA_UPLOAD_MAX_NUMBER_FIELDS fields at most."""

    def parse(self, stream, media_type=None, parser_context=None):
        body = stream.read() if stream is not None else b""
        return form_fields(body, max_fields=settings.DATA_UPLOAD_MAX_NUMBER_FIELDS)


def content_length(request: Request | HttpRequest) -> int:
    return header_length(request.META.get("CONTENT_LENGTH") or "0")


def header_length(raw: str) -> int:
    """A Content-Length header's bytes; InvalidInput (400) for anything but digits."""
    if not raw.isascii() or not raw.isdigit():
        raise InvalidInput(f"The Content-Length header {raw!r} is not a number.")
    return int(raw)


def refuse_longer_than(request: Request | HttpRequest, limit: int, what: str) -> None:
    """413 from the Content-Length header alone, before any of the body is read."""
    refuse_over(content_length(request), limit, what)


def refuse_over(length: int, limit: int, what: str) -> None:
    """TooLarge (413), saying both sizes, when `length` bytes are over `limit`."""
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
