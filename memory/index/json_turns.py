"""Telling a conversation stored as JSON, and where its messages are (pure): agents save their
chats as JSON (a list of {"role", "content"} objects, or such a list under a key of a larger
document), and a message there should be a passage of its own, as a speaker's line is in a
dialogue written as text. Explained in docs/retrieval.md, "Passages"."""

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

# The keys that name who speaks, and those that hold what is said, as the programs that write
# chats spell them: OpenAI-style messages (role, content, and a tool's or an agent's name),
# Swarm's `sender`, her's {role, content}, her's self-talk {role, text}.
SPEAKER_KEYS = frozenset({"role", "sender", "name", "speaker"})
TEXT_KEYS = frozenset({"content", "text", "message"})
# A list is a conversation when at least this many of its objects are messages that say
# something: one {"name": ..., "text": ...} object alone is a record, not a chat.
MIN_MESSAGES = 2
# Containers this deep or deeper are read whole, not walked: a chat sits a few levels down
# (MemoBrain's graph keeps one at nodes.<id>.thought), and a bound keeps the walk's recursion
# far from Python's limit whatever the document.
MAX_DEPTH = 8
# The walk costs a Python call or two per object: a text longer than the index ever cuts
# (MEMSITE_INDEX_MAX_BYTES, 2 MB) is not walked, so no caller pays more than indexing does.
WALK_MAX_CHARS = 2_000_000
DECODER = json.JSONDecoder()
NOT_WHITESPACE = re.compile(r"[^ \t\n\r]")
COLON = re.compile(r"[ \t\n\r]*:[ \t\n\r]*")
# After an item: a comma and the next item, or the container's close (group 1).
NEXT = {close: re.compile(rf"[ \t\n\r]*(?:,[ \t\n\r]*|(\{close}))") for close in "]}"}
# A list or an object that holds no list or object (a vector, a log line, most messages): its
# end found by one match, without reading its values...
_FLAT_BODY = r'[^\[\]{}"]*+(?:"(?:[^"\\]|\\.)*+"[^\[\]{}"]*+)*+'
FLAT = {"[": re.compile(rf"\[{_FLAT_BODY}\]"), "{": re.compile(rf"\{{{_FLAT_BODY}\}}")}
# ... then read whole by the decoder, one call rather than a Python call an item, up to this
# length: at most some 4 MB of Python objects (64,000 numbers), freed before the next value.
READ_WHOLE_CHARS = 256 * 1024
# A longer flat list (a long vector) is only checked to be JSON, by one match that keeps no state
# an item (possessive): its numbers are never made into Python objects.
_WS = r"[ \t\n\r]*"
_STRING = r'"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*+"'
_SCALAR = rf"(?:{_STRING}|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null)"
SCALARS = re.compile(rf"\[{_WS}(?:{_SCALAR}{_WS}(?:,{_WS}{_SCALAR}{_WS})*+)?\]")
# What joins the messages of a chat and nothing more: brackets, commas, keys and the literals.
# One character or one key an iteration: a nested repeat would backtrack exponentially.
STRUCTURE = re.compile(r'(?:[ \t\n\r\[\]{},:]|"(?:[^"\\]|\\.)*"[ \t\n\r]*:|null|true|false)*')
# Between two messages there is a comma, a bracket or a key or two: a longer stretch is read as
# what it is, and the match is never run over a megabyte.
STRUCTURE_MAX_CHARS = 1_000


@dataclass
class _Walk:
    text: str
    # The messages found so far, each (start, end) in the text, in order.
    spans: list[tuple[int, int]] = field(default_factory=list)


class _Value(NamedTuple):  # a tuple: one is made for every value walked
    end: int  # where the value ends in the text
    speaker: bool = False  # an object that names who speaks: a message
    says: bool = False  # a non-blank string, or a list or an object (under a text key) holding one


def message_spans(text: str) -> list[tuple[int, int]]:
    """Where the messages are, each (start, end) of its object in the text, if the whole text is
    one JSON document holding a conversation (a list of at least MIN_MESSAGES objects with a
    speaker and a text, at the top or under keys), or JSON Lines (a value a line) whose lines
    are such messages or hold them; [] if it is neither."""
    if len(text) > WALK_MAX_CHARS or not text.startswith(("[", "{"), start := _skip(text, 0)):
        return []
    walk = _Walk(text)
    try:
        end = _value(walk, start, 0).end
        if _skip(text, end) != len(text):  # more after the first value: JSON Lines, or no JSON
            walk = _Walk(text)
            _items(walk, start, 0, first=(start, False), following=_next_line)
    except (ValueError, RecursionError):  # not JSON; too deep for the decoder past MAX_DEPTH
        return []
    return walk.spans


def is_structure(text: str, start: int, end: int) -> bool:
    """Whether text[start:end] only joins messages (`", "`, `{"messages": [`, `]}`): it says
    nothing to find, and cut as prose it would make passages of a bracket."""
    return end - start <= STRUCTURE_MAX_CHARS and STRUCTURE.fullmatch(text, start, end) is not None


def _value(walk: _Walk, at: int, depth: int) -> _Value:
    """The JSON value at `at`: its end, whether it is a message, whether it says something."""
    opening = walk.text[at : at + 1]
    if opening in FLAT and (flat := FLAT[opening].match(walk.text, at)):
        return _flat(walk, at, flat.end())
    if depth < MAX_DEPTH and opening == "[":
        return _array(walk, at, depth)
    if depth < MAX_DEPTH and opening == "{":
        return _object(walk, at, depth)
    # Read whole: a string, a number or a literal, or what lies below MAX_DEPTH. Only this one
    # value is held as Python objects, never the document.
    value, end = DECODER.raw_decode(walk.text, at)
    return _Value(end, says=_says(value))


def _flat(walk: _Walk, start: int, end: int) -> _Value:
    """A list or an object that holds no list or object (as _value)."""
    if end - start <= READ_WHOLE_CHARS:
        value, end = DECODER.raw_decode(walk.text, start)
        if isinstance(value, list):
            return _Value(end, says=any(_says(item) for item in value))
        speaker = any(isinstance(value.get(key), str) and value[key].strip() for key in SPEAKER_KEYS)
        return _Value(end, speaker=speaker, says=any(_says(value.get(key)) for key in TEXT_KEYS))
    if walk.text.startswith("{", start):
        return _object(walk, start, depth=MAX_DEPTH)  # a long message, say: read a value at a time
    scalars = SCALARS.match(walk.text, start)
    if scalars is None or scalars.end() != end:
        raise ValueError(f"a list of plain values that is not JSON at {start}")
    return _Value(end, says=walk.text.find('"', start, end) >= 0)  # strings: a message's parts, say


def _skip(text: str, at: int) -> int:
    """Where the text's next character other than JSON's whitespace is, or its end."""
    found = NOT_WHITESPACE.search(text, at)
    return found.start() if found else len(text)


def _first(text: str, at: int, close: str) -> tuple[int, bool]:
    """After a container's opening bracket: where its first item starts and False, or the
    container's end and True if it is empty."""
    at = _skip(text, at + 1)
    if text.startswith(close, at):
        return at + 1, True
    return at, False


def _next(text: str, at: int, close: str) -> tuple[int, bool]:
    """After a container's item: where the next item starts and False, or the container's end
    and True."""
    after = NEXT[close].match(text, at)
    if after is None:
        raise ValueError(f"expected ',' or {close!r} at {at}")
    return after.end(), after.group(1) is not None


def _next_line(text: str, at: int) -> tuple[int, bool]:
    """After a JSON Lines value: where the next line's value starts and False, or the text's end
    and True. Two values on one line are no JSON Lines."""
    after = _skip(text, at)
    if after == len(text):
        return after, True
    if "\n" not in text[at:after]:
        raise ValueError(f"expected a new line at {at}")
    return after, False


def _array(walk: _Walk, at: int, depth: int) -> _Value:
    """Walks the array at `at` (as _value)."""
    return _items(walk, at, depth, first=_first(walk.text, at, "]"), following=lambda text, end: _next(text, end, "]"))


def _items(
    walk: _Walk, at: int, depth: int, *, first: tuple[int, bool], following: Callable[[str, int], tuple[int, bool]]
) -> _Value:
    """Walks a list's items (an array's, or JSON Lines' values), from where `first` says the
    first starts, each next where `following` says; if the list is a conversation, each of its
    messages (with a text or not) is recorded, in place of any chat found inside one."""
    mark, messages, said, says = len(walk.spans), [], 0, False
    inside: set[int] = set()  # the numbers of the spans found inside a message
    at, done = first
    while not done:
        before = len(walk.spans)
        item = _value(walk, at, depth + 1)
        if item.speaker:
            messages.append((at, item.end))
            inside.update(range(before, len(walk.spans)))
            said += item.says
        says = says or item.says
        at, done = following(walk.text, item.end)
    if said >= MIN_MESSAGES:
        kept = [span for number, span in enumerate(walk.spans[mark:], mark) if number not in inside]
        walk.spans[mark:] = sorted([*kept, *messages])
    return _Value(at, says=says)


def _object(walk: _Walk, at: int, depth: int) -> _Value:
    """Walks the object at `at` (as _value): a message if a speaker's key holds a name."""
    speaker = says = False
    at, done = _first(walk.text, at, "}")
    while not done:
        key, at = DECODER.raw_decode(walk.text, at)
        colon = COLON.match(walk.text, at)
        if not isinstance(key, str) or colon is None:
            raise ValueError(f"expected a key and ':' at {at}")
        value = _value(walk, colon.end(), depth + 1)
        speaker = speaker or (key in SPEAKER_KEYS and value.says and walk.text.startswith('"', colon.end()))
        says = says or (key in TEXT_KEYS and value.says)
        at, done = _next(walk.text, value.end, "}")
    return _Value(at, speaker=speaker, says=says)


def _says(value: object) -> bool:
    """Whether a value read whole says something: a non-blank string, or a list of parts of
    which one is such a string or has one as its "text" ([{"type": "text", "text": ...}])."""
    if isinstance(value, str):
        return bool(value.strip())
    if isinstance(value, dict):
        return any(_says(value.get(key)) for key in TEXT_KEYS)
    return isinstance(value, list) and any(_says(item) for item in value)
