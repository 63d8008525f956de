"""memory.json, the file the "her" app (seed 002; daemon-tech/embodiedAI, `mind/memory.js`)
keeps its whole brain in: its format, how a document is checked, and how rows are written back
as its entries. The format, where it goes in the database, and what an export gives back:
docs/memory-json.md."""

import heapq
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, ClassVar, Literal

from django.conf import settings
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainValidator,
    ValidationError,
    field_validator,
    model_validator,
)

from agents.brains.logic import affect
from agents.brains.logic.caps import cap, clip
from agents.brains.models import RecordKind
from memsite.errors import MAX_ERRORS, MAX_KEY_CHARS, InvalidInput, TooLarge, cut
from memsite.storable import deeper_than, unstorable

TOP_LEVEL_KEYS = (  # the keys whose entries a brain keeps as rows and fields
    "thoughts",
    "innerThoughts",
    "episodes",
    "semanticFacts",
    "exploredPaths",
    "exploredUrls",
    "neurons",
    "synapses",
    "chatHistory",
    "logs",
    "userModel",
    "state",
)
STATE_KEYS = (
    "goals",
    "plan",
    "selfSummary",
    "selfInstructions",
    "emotions",
    "hormones",
    "lastUserMessage",
    "lastError",
)
PLAN_KEYS = ("steps", "currentStepIndex")
SELF = "self"
NEURON_TYPES = ("self", "path", "url", "concept")
MAX_DEPTH = 32  # the format itself needs 6 levels; the rest is room for entries' own keys
MAX_LEVELS = 100  # entries of `emotions` or `hormones`: the format names 4 and 3
SHOWN_ERRORS = 5  # problems spelled out in a refusal's message (all are in its data)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
TIME_EXPECTED = "should be an ISO 8601 time or epoch milliseconds"


# Reading ------------------------------------------------------------------------------------


def parse_time(value: Any) -> datetime:
    """A memory.json time: epoch milliseconds or an ISO 8601 string."""
    if isinstance(value, bool):
        raise ValueError(TIME_EXPECTED)
    if isinstance(value, int | float):
        try:
            return EPOCH + timedelta(milliseconds=value)
        except (OverflowError, ValueError):
            raise ValueError(f"{TIME_EXPECTED}, within years 1 to 9999") from None
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            raise ValueError(TIME_EXPECTED) from None
        return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    raise ValueError(TIME_EXPECTED)


def _optional_time(value: Any) -> datetime | None:
    return None if value is None else parse_time(value)


def _plan_step(value: Any) -> Any:
    if not isinstance(value, str | dict):
        raise ValueError("a plan step should be a string or an object")
    return value


Time = Annotated[datetime | None, PlainValidator(_optional_time)]


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="allow", allow_inf_nan=False)


def first_text(item: Mapping[str, Any], keys: Sequence[str]) -> tuple[str | None, str]:
    """The first of `keys` that holds a text in `item`, and the text; (None, "") when none does."""
    for key in keys:
        value = item.get(key)
        if isinstance(value, str) and value:
            return key, value
    return None, ""


class Entry(_Strict):
    """An entry of a list: an object, or a bare string standing for its text. Its text is the
    first of `text_keys` that holds one; the first key is the one memsite writes."""

    text_keys: ClassVar[tuple[str, ...]] = ("text",)
    t: Time = None

    @model_validator(mode="before")
    @classmethod
    def _bare(cls, value: Any) -> Any:
        return {cls.text_keys[0]: value} if isinstance(value, str) else value

    def main_text(self) -> str:
        return first_text({**(self.model_extra or {}), **dict(self)}, self.text_keys)[1]


class TextEntry(Entry):
    text: str | None = None


class FactEntry(Entry):
    text_keys: ClassVar[tuple[str, ...]] = ("fact",)
    fact: str | None = None


class EpisodeEntry(Entry):
    text_keys: ClassVar[tuple[str, ...]] = ("summary", "what")
    summary: str | None = None


class ChatEntry(Entry):
    text_keys: ClassVar[tuple[str, ...]] = ("content",)
    content: str | None = None


class LogEntry(Entry):
    # her logs carry their payload's own keys: {type: "thought", action, thought},
    # {type: "explore_path", path}; memsite's carry a message.
    text_keys: ClassVar[tuple[str, ...]] = ("message", "thought", "text", "path", "url", "type")


class GoalEntry(Entry):
    text: str | None = None
    status: Literal["active", "done"] | None = None
    createdAt: Time = None


class ExploredEntry(_Strict):
    at: Time = None
    summary: str | None = None


class NeuronEntry(_Strict):
    label: str | None = None
    type: Literal["self", "path", "url", "concept"] | None = None
    strength: float | None = None
    lastUsed: Time = None


class SynapseEntry(_Strict):
    fromId: str
    toId: str
    weight: float | None = None
    lastStrengthened: Time = None


Step = Annotated[Any, PlainValidator(_plan_step)]


class _Plan(_Strict):
    # fail_fast: a list of bad steps is refused at the first, not named step by step.
    steps: Annotated[list[Step], Field(fail_fast=True)] | None = None
    currentStepIndex: Annotated[int, Field(ge=0)] | None = None


class _State(_Strict):
    goals: list[Any] | None = None
    plan: _Plan | None = None
    selfSummary: str | None = None
    selfInstructions: list[Any] | None = None
    emotions: dict[str, float] | None = None
    hormones: dict[str, float] | None = None
    lastUserMessage: str | None = None
    lastError: str | None = None

    @field_validator("emotions", "hormones", mode="before")
    @classmethod
    def _few_levels(cls, levels: Any) -> Any:
        # Before pydantic checks each entry: it would name every bad one of a dict of thousands.
        if isinstance(levels, dict) and len(levels) > MAX_LEVELS:
            raise ValueError(f"should have at most {MAX_LEVELS} entries, not {len(levels)}")
        return levels


class _UserModel(_Strict):
    lastMessages: list[Any] | None = None


class _Document(_Strict):
    thoughts: list[Any] | None = None
    innerThoughts: list[Any] | None = None
    episodes: list[Any] | None = None
    semanticFacts: list[Any] | None = None
    exploredPaths: dict[str, Any] | None = None
    exploredUrls: dict[str, Any] | None = None
    neurons: dict[str, Any] | None = None
    synapses: list[Any] | None = None
    chatHistory: list[Any] | None = None
    logs: list[Any] | None = None
    embeddings: list[Any] | None = None
    userModel: _UserModel | None = None
    state: _State | None = None


# chatHistory is the agent's conversation: its user and assistant messages with text, the newest
# up to the `chat` cap.
CHAT_SECTION = "chatHistory"
CHAT_CAP = "chat"
# The list collections kept as Record rows: where memory.json has them, their kind, their entries.
RECORD_SECTIONS: tuple[tuple[str, RecordKind, type[Entry]], ...] = (
    ("thoughts", RecordKind.THOUGHT, TextEntry),
    ("innerThoughts", RecordKind.INNER_THOUGHT, TextEntry),
    ("episodes", RecordKind.EPISODE, EpisodeEntry),
    ("semanticFacts", RecordKind.FACT, FactEntry),
    ("logs", RecordKind.LOG, LogEntry),
    ("userModel.lastMessages", RecordKind.USER_MESSAGE, TextEntry),
    ("state.selfInstructions", RecordKind.SELF_INSTRUCTION, TextEntry),
)
TEXT_KEYS: dict[str, tuple[str, ...]] = {kind: model.text_keys for _, kind, model in RECORD_SECTIONS}
BARE_STRING_KINDS = (
    RecordKind.USER_MESSAGE,
    RecordKind.SELF_INSTRUCTION,
)  # written as bare strings


def load(document: bytes | bytearray | str | Mapping[str, Any]) -> dict[str, Any]:
    """The document as plain JSON values, checked for size, syntax, shape and depth. A mapping
    is copied through JSON, so that nothing stored shares objects with the caller."""
    if isinstance(document, Mapping):
        try:
            document = json.dumps(document, ensure_ascii=False, allow_nan=False)
        except RecursionError:
            raise _too_deep() from None
        except (TypeError, ValueError) as exc:
            raise InvalidInput(f"memory.json must hold only JSON values: {exc}.") from None
    if isinstance(document, str):
        document = document.encode()
    if not isinstance(document, bytes | bytearray):
        raise InvalidInput("memory.json must be given as bytes, text or a mapping.")
    limit = settings.MEMSITE_BRAIN_IMPORT_MAX_BYTES
    if len(document) > limit:
        raise TooLarge(f"memory.json is {len(document)} bytes; the limit is {limit} bytes.")
    try:
        raw = json.loads(document, parse_constant=_refuse_constant)
    except RecursionError:
        raise _too_deep() from None
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError among them
        raise InvalidInput(f"memory.json is not valid JSON: {exc}.") from None
    if not isinstance(raw, dict):
        raise InvalidInput(f"memory.json must be a JSON object, not {_json_type(raw)}.")
    if deeper_than(raw, MAX_DEPTH):
        raise _too_deep()
    problem = unstorable(raw)
    if problem is not None:
        raise InvalidInput(f"memory.json cannot be stored: {problem}.")
    return raw


class Memory:
    """A loaded memory.json. Its outline (the top level, `state`, `userModel`) is checked at
    once; entries are checked as `items` and `entries` hand them out, so that a large document
    is never held twice. Problems found are collected in `errors`, and `check` refuses the
    document if there are any."""

    def __init__(self, raw: dict[str, Any]):
        self.raw = raw
        self.errors: list[dict[str, str]] = []
        try:
            self.outline = _Document.model_validate(raw)
        except ValidationError as exc:
            self._collect(exc, (), _Document)
            raise self._refusal() from None

    @property
    def kept_keys(self) -> list[str]:
        """The top-level keys kept as the file has them (`embeddings`, `fileContents`, ...)."""
        return [key for key in self.raw if key not in TOP_LEVEL_KEYS]

    def section(self, name: str) -> Any:
        """The raw value at a dotted path (`state.goals`), or None."""
        value: Any = self.raw
        for part in name.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        return value

    def length(self, name: str) -> int:
        return len(self.section(name) or ())

    def items(self, name: str, model: type[BaseModel]) -> Iterator[tuple[int, Any, Any]]:
        """(index, the entry as the file has it, the entry checked) for a list section."""
        loc = tuple(name.split("."))
        for index, item in enumerate(self.section(name) or ()):
            checked = self._checked(model, item, (*loc, index))
            if checked is not None:
                yield index, item, checked

    def entries(self, name: str, model: type[BaseModel]) -> Iterator[tuple[str, Any, Any]]:
        """(key, the entry as the file has it, the entry checked) for a keyed section."""
        for key, item in (self.section(name) or {}).items():
            checked = self._checked(model, item, (name, key))
            if checked is not None:
                yield key, item, checked

    def check(self) -> None:
        if self.errors:
            raise self._refusal()

    def _checked(self, model: type[BaseModel], item: Any, loc: tuple) -> Any:
        try:
            return model.model_validate(item)
        except ValidationError as exc:
            self._collect(exc, loc, model)
            if len(self.errors) >= MAX_ERRORS:
                raise self._refusal() from None
            return None

    def _collect(self, exc: ValidationError, loc: tuple, model: type[BaseModel]) -> None:
        for error in exc.errors(include_url=False, include_input=False)[: MAX_ERRORS - len(self.errors)]:
            where = (*loc, *error["loc"])
            message = _MESSAGES.get(error["type"]) or error["msg"].removeprefix("Value error, ")
            if error["type"] == "model_type" and not error["loc"] and issubclass(model, Entry):
                message = "should be an object or a string"
            self.errors.append({"path": json_path(where), "message": message})

    def _refusal(self) -> InvalidInput:
        shown = "; ".join(f"{error['path']}: {error['message']}" for error in self.errors[:SHOWN_ERRORS])
        more = len(self.errors) - SHOWN_ERRORS
        tail = f" (and {more} more)" if more > 0 else ""
        return InvalidInput(f"memory.json is not valid: {shown}{tail}.", data={"errors": list(self.errors)})


_MESSAGES = {
    "model_type": "should be an object",
    "dict_type": "should be an object",
    "list_type": "should be a list",
    "string_type": "should be a string",
    "float_type": "should be a number",
    "int_type": "should be an integer",
    "finite_number": "should be a finite number",
    "missing": "is required",
}


def json_path(loc: Sequence[str | int]) -> str:
    """`state.goals[2].status`; keys that are not plain names in brackets: `neurons["path:/a"]`."""
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        elif part.isidentifier():
            path += f".{cut(part, MAX_KEY_CHARS)}" if path else cut(part, MAX_KEY_CHARS)
        else:
            path += f"[{json.dumps(cut(part, MAX_KEY_CHARS), ensure_ascii=False)}]"
    return path or "the document"


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _too_deep() -> InvalidInput:
    return InvalidInput(f"memory.json is nested too deeply: at most {MAX_DEPTH} levels of objects and lists.")


def _json_type(value: Any) -> str:
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return "a number"


def neuron_kind(key: str) -> str:
    """The type a neuron key implies: its prefix, else concept."""
    if key == SELF:
        return SELF
    prefix, colon, _ = key.partition(":")
    return prefix if colon and prefix in NEURON_TYPES else "concept"


def neuron_label(key: str) -> str:
    prefix, colon, rest = key.partition(":")
    return rest if colon and prefix in NEURON_TYPES else key


def clipped_item(kind: str, item: Any) -> Any:
    """A list entry with its text within the `entry_chars` cap."""
    if isinstance(item, str):
        return clip(item, "entry_chars")
    if not isinstance(item, Mapping):
        return item
    key, text = first_text(item, TEXT_KEYS.get(kind, ("text",)))
    if key is not None:
        clipped = clip(text, "entry_chars")
        if clipped != text:
            return {**item, key: clipped}
    return dict(item)


def most_recent(rows: Sequence[Any], limit: int, when: Callable[[Any], datetime]) -> list[Any]:
    """The `limit` rows most recently used (the later in the file first among equals), in their
    order in the file. Rows carry their `position` in the file."""
    if len(rows) <= limit:
        return list(rows)
    kept = heapq.nlargest(limit, rows, key=lambda row: (when(row), row.position))
    return sorted(kept, key=lambda row: row.position)


# Writing ------------------------------------------------------------------------------------


def ms(moment: datetime) -> int:
    """A time as her writes it: epoch milliseconds (`Date.now()`)."""
    return (moment - EPOCH) // timedelta(milliseconds=1)


def number(value: float) -> int | float:
    """A number as JavaScript writes it: whole numbers without a fraction."""
    return int(value) if value.is_integer() and abs(value) < 2**53 else value


def entry(kind: str, text: str, at: datetime, **fields: Any) -> Any:
    """A list entry of memsite's own, shaped as her writes the list's entries: a bare string for
    the user's messages and self-instructions, else its time, its text and `fields`."""
    if kind in BARE_STRING_KINDS:
        return text
    return {"t": ms(at), TEXT_KEYS[kind][0]: text, **fields}


EntryField = tuple[str, Any, Any]  # an entry's key, the column's value, and the value as written


def keyed_entry(data: Any, fields: Sequence[EntryField]) -> dict[str, Any]:
    """The entry of a keyed collection's row: `data` (the entry as imported, if kept) with each
    column's field written where `data` does not already say the same."""
    if not data:
        return {key: written for key, _, written in fields}
    entry = dict(data)
    for key, value, written in fields:
        if key not in entry or not _holds(entry[key], value):
            entry[key] = written
    return entry


def stored_entry(item: Any, fields: Sequence[EntryField]) -> dict[str, Any]:
    """What a keyed row keeps in `data` of the file's `item`: nothing when its columns write it
    back exactly; otherwise the item, with any field the columns changed (clipped, clamped)
    as stored, so that no over-cap value stays behind."""
    written = keyed_entry({}, fields)
    if isinstance(item, dict) and _same(item, written):
        return {}
    entry = keyed_entry(item if isinstance(item, dict) else {}, fields)
    return {} if _same(entry, written) else entry


def chat_role(entry: ChatEntry) -> str:
    """The role of a chat line's message: her writes `user` and `assistant`; any other is a user's."""
    return "assistant" if (entry.model_extra or {}).get("role") == "assistant" else "user"


def chat_line_fields(*, role: str, content: str, at: datetime) -> list[EntryField]:
    """A chat line's entry as her `addChatMessage` writes it."""
    return [("role", role, role), ("content", content, content), ("t", at, ms(at))]


def explored_fields(*, at: datetime, summary: str) -> list[EntryField]:
    return [("at", at, ms(at)), ("summary", summary, summary)]


def neuron_fields(*, key: str, label: str, kind: str, strength: float, last_used: datetime) -> list[EntryField]:
    return [
        ("id", key, key),
        ("label", label, label),
        ("type", kind, kind),
        ("strength", strength, number(strength)),
        ("lastUsed", last_used, ms(last_used)),
    ]


def synapse_fields(*, source: str, target: str, weight: float, last_used: datetime) -> list[EntryField]:
    return [
        ("fromId", source, source),
        ("toId", target, target),
        ("weight", weight, number(weight)),
        ("lastStrengthened", last_used, ms(last_used)),
    ]


def goal_entry(*, text: str, status: str, data: Any) -> dict[str, Any]:
    return keyed_entry(data if isinstance(data, dict) else {}, [("text", text, text), ("status", status, status)])


def goal_item(*, text: str, at: datetime, index: int = 0) -> dict[str, Any]:
    """A goal of memsite's own, as her `addGoal` writes one (her ids are "g" and the time; the
    goals one reflection adds have their index after it)."""
    return {"id": f"g{ms(at)}{index or ''}", "text": text, "status": "active", "createdAt": ms(at)}


def record_entry(*, kind: str, text: str, data: Any, at: datetime) -> Any:
    """A list entry: as the file had it, or, for an entry written without one, from its columns."""
    if not (isinstance(data, dict) and not data):
        return data
    return entry(kind, text, at)


def plan_entry(steps: list[Any], current: int, extra: Any) -> dict[str, Any] | None:
    """The plan as her keeps it: null once no step is left (her `advancePlan` clears it), else its
    steps, current step and the plan's other keys as imported."""
    if current >= len(steps):
        return None
    plan = {"steps": list(steps), "currentStepIndex": current}
    if isinstance(extra, dict):
        plan.update((key, value) for key, value in extra.items() if key not in plan)
    return plan


def kept_defaults() -> dict[str, Any]:
    """The top-level keys a brain keeps unused that her always writes, as her defaults have
    them: an export without them writes these."""
    return {"embeddings": [], "fileContents": {}}


def self_neuron(*, at: datetime) -> dict[str, Any]:
    return keyed_entry({}, neuron_fields(key=SELF, label=SELF, kind=SELF, strength=1.0, last_used=at))


def default_document(*, at: datetime) -> dict[str, Any]:
    """The memory.json of a brain as `brain_create` makes it."""
    lists = ("thoughts", "innerThoughts", "episodes", "semanticFacts", "chatHistory", "logs")
    return {
        **{name: [] for name in lists},
        "exploredPaths": {},
        "exploredUrls": {},
        "neurons": {SELF: self_neuron(at=at)},
        "synapses": [],
        **kept_defaults(),
        "userModel": {"lastMessages": []},
        "state": {
            "goals": [],
            "plan": None,
            "selfSummary": "",
            "selfInstructions": [],
            "emotions": dict(affect.CALM_EMOTIONS),
            "hormones": dict(affect.BASELINE_HORMONES),
            "lastUserMessage": None,
            "lastError": None,
        },
    }


def plan_steps(steps: list[Any], current: int) -> tuple[list[Any], int]:
    """A plan within the `plan_steps` cap: the steps from the current one on when there are
    too many (those before it are done)."""
    limit = cap("plan_steps")
    current = min(current, len(steps))
    if len(steps) <= limit:
        return steps, current
    start = min(current, len(steps) - limit)
    return steps[start : start + limit], current - start


def _holds(value: Any, column: Any) -> bool:
    """Whether a value in memory.json says the same as a column's value."""
    if isinstance(column, datetime):
        try:
            return parse_time(value) == column
        except ValueError:
            return False
    if isinstance(column, float):
        return isinstance(value, int | float) and not isinstance(value, bool) and value == column
    return type(value) is type(column) and value == column


def _same(left: dict[str, Any], right: dict[str, Any]) -> bool:
    """Equal as JSON text: the same keys in the same order, the same values of the same types."""
    if len(left) != len(right):
        return False
    for (left_key, left_value), (right_key, right_value) in zip(left.items(), right.items(), strict=True):
        if left_key != right_key or type(left_value) is not type(right_value) or left_value != right_value:
            return False
    return True
