"""Turning a reply's text into a validated object. Models wrap JSON in prose or code fences;
the first JSON value that validates is taken, and what is wrong is said in words a model can
act on when it is asked to repair its reply."""

import json
import re
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from memsite.storable import UNSTORABLE_TEXT

_FENCE = re.compile(r"```[ \t]*(?:json|JSON|json5)?[ \t]*\n?(.*?)```", re.DOTALL)
_decoder = json.JSONDecoder()
T = TypeVar("T", bound=BaseModel)


def _storable_text(text: str) -> str:
    return UNSTORABLE_TEXT.sub("\ufffd", text) if UNSTORABLE_TEXT.search(text) else text


def storable(value: Any) -> Any:
    """`value` with every string made storable in any database: NUL, which PostgreSQL refuses
    in text and jsonb, and lone surrogates (a JSON reply's "\\ud800" decodes into one), which no
    UTF-8 column holds, become U+FFFD. Lists and dicts are copied with their strings (keys too)
    cleaned, without recursion: a reply as deep as the JSON parser allows cannot exhaust the
    stack. Other values are returned as they are."""
    if isinstance(value, str):
        return _storable_text(value)
    if not isinstance(value, (list, dict)):
        return value
    copy: list | dict = [] if isinstance(value, list) else {}
    stack = [(value, copy)]
    while stack:
        source, target = stack.pop()
        for key, item in source.items() if isinstance(source, dict) else enumerate(source):
            if isinstance(item, (list, dict)):
                child: Any = [] if isinstance(item, list) else {}
                stack.append((item, child))  # filled later, already in its place
            else:
                child = _storable_text(item) if isinstance(item, str) else item
            if isinstance(target, dict):
                target[_storable_text(key) if isinstance(key, str) else key] = child
            else:
                target.append(child)
    return copy


class ReplyInvalid(Exception):
    """The reply is not JSON, or not valid for the schema; the message is fed back to the model."""


def json_candidates(text: str) -> list[Any]:
    """JSON values found in `text`: the whole text, then fenced blocks, then every value that
    starts at a `{` or `[` in the prose, in order."""
    found: list[Any] = []
    stripped = text.strip()
    try:
        return [json.loads(stripped)]
    except ValueError:
        pass
    for block in _FENCE.findall(text):
        try:
            found.append(json.loads(block.strip()))
        except ValueError:
            continue
    position = 0
    while len(found) < 16:
        starts = [index for index in (text.find("{", position), text.find("[", position)) if index >= 0]
        if not starts:
            break
        start = min(starts)
        try:
            value, end = _decoder.raw_decode(text, start)
        except ValueError:
            position = start + 1
            continue
        found.append(value)
        position = end
    return found


def describe_validation_error(exc: ValidationError) -> str:
    lines = []
    for error in exc.errors(include_url=False)[:20]:
        where = ".".join(str(part) for part in error["loc"]) or "(root)"
        lines.append(f"- {where}: {error['msg']}")
    return "\n".join(lines)


def parse_reply(text: str, schema: type[T]) -> T:
    """The first JSON value in `text` that validates against `schema`, its strings storable."""
    candidates = [storable(candidate) for candidate in json_candidates(text)]
    if not candidates:
        raise ReplyInvalid("The reply contains no JSON value.")
    first_error: ValidationError | None = None
    for candidate in candidates:
        try:
            return schema.model_validate(candidate)
        except ValidationError as exc:
            first_error = first_error or exc
    assert first_error is not None
    raise ReplyInvalid(
        f"The JSON in the reply does not match the schema {schema.__name__}:\n" + describe_validation_error(first_error)
    )
