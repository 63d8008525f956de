"""Form bodies (application/x-www-form-urlencoded) parsed with Django's meaning, in memory of
a small multiple of the body: percent escapes are decoded a chunk at a time.
Explained in docs/memsite.md."""

import codecs
from urllib.parse import unquote_to_bytes

from django.http import QueryDict

from memsite.errors import InvalidInput, TooLarge

FORM_CONTENT_TYPE = "application/x-www-form-urlencoded"
# Decoded at a time. Python's unquote splits its input at every `%`, each piece an object of
# its own: 20 to 80 times the input, which a chunk keeps to a few hundred KiB.
DECODE_CHUNK_BYTES = 16 * 1024
# No form of the site has a field name longer than a few dozen characters.
FIELD_NAME_MAX_BYTES = 1024


def form_fields(body: bytes, *, max_fields: int) -> QueryDict:
    """The fields of a form body, as Django's QueryDict reads it: `&` between fields, `+` a
    space, UTF-8 with bad bytes replaced, blank values kept, a repeated name a list. Past
    `max_fields` fields, InvalidInput (400); a name past FIELD_NAME_MAX_BYTES, TooLarge (413)."""
    fields = 1 + body.count(b"&") if body else 0
    if fields > max_fields:
        raise InvalidInput(f"The form has {fields:,} fields; the limit is {max_fields:,}.")
    body = _as_utf8(body)
    form = QueryDict(mutable=True)
    start = 0
    while start <= len(body):
        end = body.find(b"&", start)
        end = len(body) if end == -1 else end
        if end > start:
            name, value = _field(body, start, end)
            form.appendlist(name, value)
        start = end + 1
    form._mutable = False
    return form


def _as_utf8(body: bytes) -> bytes:
    """`body`, or as Django takes a body that is not UTF-8: each byte a Latin-1 character."""
    if body.isascii():
        return body
    try:
        body.decode("utf-8")
        return body
    except UnicodeDecodeError:
        return body.decode("iso-8859-1").encode("utf-8")


def _field(body: bytes, start: int, end: int) -> tuple[str, str]:
    equals = body.find(b"=", start, end)
    name_end = end if equals == -1 else equals
    if name_end - start > FIELD_NAME_MAX_BYTES:
        raise TooLarge(
            f"A form field's name is {name_end - start:,} bytes; the limit is {FIELD_NAME_MAX_BYTES:,} bytes."
        )
    name = _decoded(body, start, name_end)
    return name, "" if equals == -1 else _decoded(body, equals + 1, end)


def _decoded(body: bytes, start: int, end: int) -> str:
    """body[start:end] with `+` as a space and percent escapes decoded, a chunk at a time. A
    chunk never ends inside an escape (`%` and two characters), and the UTF-8 decoder carries a
    character cut between two chunks over to the next."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    parts = []
    while start < end:
        stop = min(start + DECODE_CHUNK_BYTES, end)
        if stop < end:
            escape = body.rfind(b"%", stop - 2, stop)
            stop = escape if escape > start else stop
        parts.append(decoder.decode(unquote_to_bytes(body[start:stop].replace(b"+", b" "))))
        start = stop
    parts.append(decoder.decode(b"", final=True))
    return "".join(parts)
