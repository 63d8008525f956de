"""The `offline` provider: deterministic heuristics, so the product runs with no key.
Explained in docs/llm.md."""

import re
import uuid
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from pydantic import BaseModel, ValidationError

from memsite.llm import similarity
from memsite.llm.errors import LLMError, Reason
from memsite.llm.providers.base import CallTrace, LLMRequest
from memsite.llm.purposes import Purpose
from memsite.llm.quoting import without_fences
from memsite.llm.replies import ReplyInvalid, describe_validation_error, parse_reply
from memsite.text.lines import one_line
from memsite.text.reading import Reading
from memsite.text.stems import stem
from memsite.text.words import frequent_words, overlap, words


def _text_of(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):  # content parts
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    # The fences of quoted data (memsite.llm.quoting) are markup, not what the text says.
    return "" if content is None else without_fences(str(content))


def plain_reading(messages: list[dict[str, Any]]) -> Reading:
    """A request that came without its reading: the last user message is the query, the text of
    every message but the instructions is the context, and nothing is offered."""
    turns = [(message.get("role"), _text_of(message)) for message in messages]
    said = [text for role, text in turns if role != "system"]
    last = next((text for role, text in reversed(turns) if role == "user"), said[-1] if said else "")
    return Reading(query=last.strip(), context="\n".join(text for text in said if text.strip()))


def reading_of(request: LLMRequest) -> Reading:
    """What the request asks, as its writer gave it, ranked with the local model where memsite
    runs one."""
    return replace(request.reading or plain_reading(request.messages), cosines=similarity.cosines)


DESCRIPTION_CHARS = 300


def describe(reading: Reading) -> str:
    """An extractive description: the body's key terms, then its most representative sentence,
    cut at a word (so every word is the text's own), at most DESCRIPTION_CHARS."""
    body = "\n".join(item.text for item in reading.body)
    keys = ", ".join(frequent_words(body, 5))
    text = " \u2014 ".join(part for part in (keys, " ".join(reading.representative().split())) if part)
    if len(text) <= DESCRIPTION_CHARS:
        return text
    return text[: DESCRIPTION_CHARS - 1].rsplit(" ", 1)[0].rstrip(",;:\u2014 ") + "\u2026"


def _themes(reading: Reading) -> str:
    return ", ".join(reading.keywords[:5]) or "nothing in particular"


def _choice(reading: Reading) -> str:
    best = reading.best
    if best is None:
        return one_line(reading.query, 200) or "none"
    return best.ref


def _answer(reading: Reading) -> str:
    found = reading.relevant(2)
    if found:
        return one_line(" ".join(found), 800)
    return "The stored context does not say."


def _reflection(reading: Reading) -> str:
    salient = reading.relevant(1) or reading.lead(1)
    return one_line(f"Recurring themes: {_themes(reading)}. Most salient: {' '.join(salient)}", 600)


def _deep_reflection(reading: Reading) -> str:
    salient = reading.relevant(3) or reading.lead(3)
    pair = reading.keywords[:2]
    question = f" Open question: how do {pair[0]} and {pair[1]} relate?" if len(pair) == 2 else ""
    return one_line(f"Recurring themes: {_themes(reading)}. Salient points: {' '.join(salient)}{question}", 1200)


def _summary(reading: Reading) -> str:
    """The lead and the most relevant sentences, in the text's order."""
    count = max(1, min(5, len(reading.sentences) // 4 or 1))
    chosen = set(reading.lead(1)) | set(reading.relevant(count))
    return one_line(" ".join(sentence for sentence in reading.sentences if sentence in chosen), 800)


# The text reply each purpose calls for; summarize, recall and any purpose not named: a summary.
PURPOSE_TEXTS: dict[str, Callable[[Reading], str]] = {
    Purpose.ROUTE: _choice,
    Purpose.DECIDE: _choice,
    Purpose.READ: lambda reading: one_line(" ".join(reading.relevant(3) or reading.lead(2)), 1200),
    Purpose.ANSWER: _answer,
    Purpose.CHAT: _answer,
    Purpose.DESCRIBE: describe,
    Purpose.REFLECT: _reflection,
    Purpose.DEEP_REFLECT: _deep_reflection,
    Purpose.MEMORIZE: lambda reading: one_line(" ".join(reading.relevant(2) or reading.lead(2)), 600),
}


def purpose_text(purpose: str, reading: Reading) -> str:
    """The text reply a purpose calls for."""
    return PURPOSE_TEXTS.get(purpose, _summary)(reading)


def _word_forms(word: str) -> set[str]:
    word = word.lower()
    return {word, stem(word), word[:-1] if word.endswith("s") and len(word) > 2 else word}


def _name_matches(name: str, *words: str) -> bool:
    """Whether a field name contains one of `words` as a word (`node_ids` has `id`)."""
    parts = [part for part in re.split(r"[_\W]+|(?<=[a-z])(?=[A-Z])", name) if part]
    forms = set().union(*(_word_forms(part) for part in parts)) if parts else set()
    return any(stem(word.lower()) in forms or word.lower() in forms for word in words)


ID_NAMES = (
    "id",
    "key",
    "choice",
    "option",
    "selected",
    "selection",
    "target",
    "node",
    "child",
    "next",
    "route",
    "pick",
    "action",
    "decision",
    "ref",
    "path",
)
INDEX_NAMES = ("index", "indice", "idx", "choice", "option", "selected", "position", "number", "rank")
KEYWORD_NAMES = ("keyword", "tag", "topic", "term", "entity", "entitie", "concept", "theme", "label")
SUMMARY_NAMES = ("summary", "abstract", "gist", "description", "synopsis", "overview", "digest")
REASON_NAMES = (
    "reason",
    "reasoning",
    "rationale",
    "why",
    "explanation",
    "justification",
    "thought",
    "thinking",
    "reflection",
    "insight",
    "analysis",
    "note",
    "comment",
)
TITLE_NAMES = ("title", "name", "heading", "subject", "headline")
QUERY_NAMES = ("query", "question", "goal", "task", "intent", "search", "subquery")
EVIDENCE_NAMES = ("quote", "evidence", "excerpt", "snippet", "fact", "sentence", "passage", "finding")
SCORE_NAMES = (
    "confidence",
    "score",
    "importance",
    "probability",
    "weight",
    "relevance",
    "certainty",
    "salience",
    "priority",
    "intensity",
)
TRUE_NAMES = (
    "relevant",
    "viable",
    "found",
    "match",
    "answerable",
    "done",
    "complete",
    "success",
    "useful",
    "sufficient",
    "enough",
    "answered",
)
# Strings of a fixed format: any valid one will do.
FORMATTED_STRINGS = {
    "date-time": "1970-01-01T00:00:00Z",
    "date": "1970-01-01",
    "email": "offline@example.com",
    "uri": "https://example.com/",
    "url": "https://example.com/",
}


# Enum values a purpose leans to when the text itself does not decide.
ENUM_HINTS: dict[str, tuple[str, ...]] = {
    Purpose.MEMORIZE: ("evidence", "fact", "observation", "add", "note"),
    Purpose.RECALL: ("summary", "fold", "flush", "merge"),
    Purpose.SUMMARIZE: ("summary",),
    Purpose.REFLECT: ("thought", "reflection", "calm", "curious"),
    Purpose.DEEP_REFLECT: ("insight", "reflection", "curious"),
    Purpose.ANSWER: ("answer",),
    Purpose.READ: ("read", "relevant"),
}


def _kind(schema: dict[str, Any]) -> str:
    """The JSON type a schema asks for: its first but null, else object or string by its keys."""
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((entry for entry in kind if entry != "null"), "null")
    if kind is None:
        kind = "object" if "properties" in schema else "string"
    return str(kind)


class SchemaFiller:
    """Builds a JSON value for a JSON schema from a reading, deterministically."""

    def __init__(self, *, purpose: str, reading: Reading, root: dict[str, Any]):
        self.purpose = purpose
        self.reading = reading
        self.defs = root.get("$defs", {})
        self.text = purpose_text(purpose, reading)

    def resolve(self, schema: dict[str, Any]) -> dict[str, Any]:
        seen = 0
        while "$ref" in schema and seen < 32:
            schema = {
                **self.defs.get(schema["$ref"].rsplit("/", 1)[-1], {}),
                **{k: v for k, v in schema.items() if k != "$ref"},
            }
            seen += 1
        return schema

    def value(self, schema: dict[str, Any], *, name: str = "", item: int = 0, depth: int = 0) -> Any:
        schema = self.resolve(schema)
        if depth > 12:
            return None
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            return self.choose_enum(schema["enum"], name)
        combined = self.combined(schema)
        if combined is not None:
            return self.value(combined, name=name, item=item, depth=depth + 1)
        fill = getattr(self, f"fill_{_kind(schema)}", self.fill_null)
        return fill(schema, name=name, item=item, depth=depth)

    def combined(self, schema: dict[str, Any]) -> dict[str, Any] | None:
        """The schema an anyOf or oneOf stands for (its first variant but null) or an allOf (its
        parts merged); None for a schema that combines none."""
        for combinator in ("anyOf", "oneOf"):
            if combinator in schema:
                variants = [self.resolve(variant) for variant in schema[combinator]]
                concrete = [variant for variant in variants if variant.get("type") != "null"] or variants
                return concrete[0]
        if "allOf" in schema:
            merged: dict[str, Any] = {}
            for part in schema["allOf"]:
                merged.update(self.resolve(part))
            return merged
        return None

    def fill_null(self, schema: dict[str, Any], **_: Any) -> None:
        return None

    def fill_object(self, schema: dict[str, Any], *, name: str, item: int, depth: int) -> dict[str, Any]:
        required = set(schema.get("required", ()))
        filled = {}
        for prop, prop_schema in schema.get("properties", {}).items():
            # An optional field whose default is "nothing" keeps it: no invented edges or goals.
            if prop not in required and prop_schema.get("default", 0) in (None, [], {}):
                continue
            filled[prop] = self.value(prop_schema, name=prop, item=item, depth=depth + 1)
        return filled

    def fill_array(self, schema: dict[str, Any], *, name: str, item: int, depth: int) -> list[Any]:
        if "prefixItems" in schema:  # a tuple
            return [self.value(part, name=name, item=item, depth=depth + 1) for part in schema["prefixItems"]]
        low = schema.get("minItems", 0)
        high = schema.get("maxItems")
        items = self.resolve(schema.get("items", {}))
        is_scalar = items.get("type") in ("string", "integer", "number") and "enum" not in items
        if _name_matches(name, *KEYWORD_NAMES) and items.get("type") == "string":
            values: list[Any] = list(self.reading.keywords[:3])
        elif _name_matches(name, *ID_NAMES, *INDEX_NAMES) and is_scalar and self.reading.options:
            values = self.chosen_options(by_ref=items.get("type") == "string", count=max(low, 1))
        else:
            values = [self.value(items, name=name, item=index, depth=depth + 1) for index in range(max(low, 1))]
        while len(values) < low:
            values.append(self.value(items, name=name, item=len(values), depth=depth + 1))
        return values[:high] if high is not None else values

    def chosen_options(self, *, by_ref: bool, count: int) -> list[int | str]:
        """The best option (the first when none shares a term with the query), then the next in
        rank order up to `count`: by their refs, or by their indices."""
        ranked = self.reading.ranked_options
        best = ([option for option in ranked if option.score > 0] or list(ranked))[:1]
        chosen = best + [option for option in ranked if option not in best][: count - 1]
        return [option.ref if by_ref else option.index for option in chosen]

    def fill_string(self, schema: dict[str, Any], *, name: str, item: int, **_: Any) -> str:
        text = self.string_for(schema, name=name, item=item)
        low, high = schema.get("minLength", 0), schema.get("maxLength")
        if high is not None and len(text) > high:
            text = text[:high]
        if len(text) < low:
            text = (text + " " + self.reading.query + " " + "." * low).strip()[: max(low, high or low)]
            text = text.ljust(low, ".")
        return text

    def string_for(self, schema: dict[str, Any], *, name: str, item: int) -> str:
        reading = self.reading
        fmt = schema.get("format")
        if fmt == "uuid":
            seed = f"{self.purpose}\n{reading.query}\n{reading.context}\n{name}\n{item}"
            return str(uuid.uuid5(uuid.NAMESPACE_URL, seed))
        if fmt in FORMATTED_STRINGS:
            return FORMATTED_STRINGS[fmt]
        return self.named_string(name, item)

    def named_string(self, name: str, item: int) -> str:
        """The string a field's name asks for (an id, a query, a title, keywords, evidence...)."""
        reading = self.reading
        ranked = [sentence for _, sentence in reading.ranked_sentences]
        if _name_matches(name, *ID_NAMES) and reading.options:
            return reading.best.ref  # type: ignore[union-attr]
        if _name_matches(name, *QUERY_NAMES):
            return reading.query
        if _name_matches(name, *TITLE_NAMES):
            return " ".join(word.capitalize() for word in reading.keywords[:3]) or one_line(reading.query, 60)
        if _name_matches(name, *KEYWORD_NAMES):
            return reading.keywords[item % len(reading.keywords)] if reading.keywords else reading.query
        if _name_matches(name, *EVIDENCE_NAMES):
            return ranked[item % len(ranked)] if ranked else reading.query
        if _name_matches(name, *SUMMARY_NAMES):
            return purpose_text(Purpose.SUMMARIZE, reading) if self.purpose != Purpose.DESCRIBE else self.text
        if _name_matches(name, *REASON_NAMES):
            return self.reason()
        if item and ranked:
            return ranked[item % len(ranked)]
        return self.text

    def reason(self) -> str:
        reading = self.reading
        if self.purpose in (Purpose.ROUTE, Purpose.DECIDE) and reading.best is not None:
            shared = [word for term, word in words(reading.best.text) if term in reading.query_terms]
            because = ", ".join(dict.fromkeys(shared)) or "no shared terms; first option"
            return f"Offline lexical match with the query ({because})."
        if self.purpose in (Purpose.REFLECT, Purpose.DEEP_REFLECT):
            return self.text
        return purpose_text(Purpose.REFLECT, reading)

    def fill_integer(self, schema: dict[str, Any], *, name: str, **_: Any) -> int:
        reading = self.reading
        if _name_matches(name, *INDEX_NAMES, *ID_NAMES) and reading.best is not None:
            value = reading.best.index
        elif _name_matches(name, *SCORE_NAMES):
            low, high = schema.get("minimum", 0), schema.get("maximum", 10)
            value = round(low + reading.confidence * (high - low))
        elif _name_matches(name, "count", "limit", "max", "top", "k", "n"):
            value = 1
        else:
            value = 0
        return int(self.clamp(value, schema, integer=True))

    def fill_number(self, schema: dict[str, Any], *, name: str, **_: Any) -> float:
        low, high = schema.get("minimum", 0.0), schema.get("maximum", 1.0)
        if _name_matches(name, *SCORE_NAMES):
            value = low + self.reading.confidence * (high - low)
        else:
            value = 0.0
        return float(self.clamp(value, schema, integer=False))

    def fill_boolean(self, schema: dict[str, Any], *, name: str, **_: Any) -> bool:
        if _name_matches(name, *TRUE_NAMES):
            return self.reading.confidence > 0
        return False

    @staticmethod
    def clamp(value: float, schema: dict[str, Any], *, integer: bool) -> float:
        step = 1 if integer else 1e-6
        if "minimum" in schema:
            value = max(value, schema["minimum"])
        if "exclusiveMinimum" in schema:
            value = max(value, schema["exclusiveMinimum"] + step)
        if "maximum" in schema:
            value = min(value, schema["maximum"])
        if "exclusiveMaximum" in schema:
            value = min(value, schema["exclusiveMaximum"] - step)
        return value

    def choose_enum(self, values: list[Any], name: str) -> Any:
        if not values:
            return None
        query_terms = self.reading.query_terms | frozenset(stem(word) for word in self.reading.keywords)
        hints = ENUM_HINTS.get(self.purpose, ())
        scored = [
            (
                overlap(query_terms, str(value).replace("_", " ").replace("-", " "))
                + (1.0 if str(value).lower() in hints else 0.0),
                -position,
                value,
            )
            for position, value in enumerate(values)
        ]
        return max(scored, key=lambda entry: (entry[0], entry[1]))[2]


def _drop(data: Any, loc: tuple[Any, ...]) -> bool:
    """Remove the value at `loc` so the model's default applies; False if nothing was there."""
    parent = data
    for part in loc[:-1]:
        try:
            parent = parent[part]
        except (KeyError, IndexError, TypeError):
            return False
    if isinstance(parent, dict) and loc and loc[-1] in parent:
        del parent[loc[-1]]
        return True
    return False


def fill_schema(schema: type[BaseModel], *, purpose: str, reading: Reading) -> BaseModel:
    hook = getattr(schema, "offline_reply", None)
    if callable(hook):
        reply = hook(purpose=purpose, reading=reading)
        return reply if isinstance(reply, schema) else schema.model_validate(reply)
    try:
        json_schema = schema.model_json_schema()
    except Exception as exc:  # arbitrary types have no JSON schema
        raise LLMError(Reason.OFFLINE_UNSUPPORTED, f"{schema.__name__} has no JSON schema: {exc}") from None
    data = SchemaFiller(purpose=purpose, reading=reading, root=json_schema).value(json_schema)
    last_error: ValidationError | None = None
    for _ in range(4):
        try:
            return schema.model_validate(data)
        except ValidationError as exc:
            last_error = exc
            # Values a validator rejects are dropped so defaults apply; a required one cannot be.
            if not any(_drop(data, tuple(error["loc"])) for error in exc.errors()):
                break
    assert last_error is not None
    raise LLMError(
        Reason.OFFLINE_UNSUPPORTED,
        f"The offline provider cannot fill {schema.__name__}; give it an offline_reply "
        f"classmethod.\n{describe_validation_error(last_error)}",
    )


class OfflineProvider:
    name = "offline"

    def complete(self, request: LLMRequest, trace: CallTrace) -> BaseModel | str:
        trace.messages = request.messages
        reading = reading_of(request)
        if request.schema is None:
            trace.response_mode = "text"
            text = purpose_text(request.purpose, reading)
        else:
            trace.response_mode = "json_schema"
            text = fill_schema(request.schema, purpose=request.purpose, reading=reading).model_dump_json()
        trace.reply = text
        trace.add_usage(messages=request.messages, reply=text, prompt_tokens=None, completion_tokens=None)
        if request.schema is None:
            return text
        try:
            # The same parse the openai provider uses, so an offline reply is held to the same bar.
            return parse_reply(text, request.schema)
        except ReplyInvalid as exc:
            raise LLMError(Reason.OFFLINE_UNSUPPORTED, str(exc)) from None
