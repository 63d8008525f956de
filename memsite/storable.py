"""Whether a JSON document a client sent can be stored as it is: Python's parser reads NUL
(`"\\u0000"`), unpaired surrogates (`"\\ud800"`) and numbers past a float's range (`1e400`),
which no column keeps. Free-form documents (memory.json, snapshots, agents' context variables,
tool calls) are checked here, so that they are refused with a 400 rather than by the database."""

import json
import math
import re
from collections.abc import Iterator, Mapping
from typing import Any

UNSTORABLE_TEXT = re.compile("[\x00\ud800-\udfff]")


def _describe(text: str) -> str | None:
    match = UNSTORABLE_TEXT.search(text)
    if match is None:
        return None
    char = match.group()
    return "a NUL character" if char == "\x00" else f"an unpaired surrogate (U+{ord(char):04X}), which is not text"


def _step(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    if key.isidentifier():
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key)}]"


def _value_problem(value: Any) -> str | None:
    if isinstance(value, str):
        problem = _describe(value)
        return None if problem is None else f"holds {problem}"
    if isinstance(value, float):
        if math.isnan(value):
            return "is NaN, which is not a JSON number"
        if math.isinf(value):
            return "is a number out of range"
    return None


def _children(value: Any) -> Iterator[tuple[str | int, Any]] | None:
    if isinstance(value, dict):
        return iter(value.items())
    if isinstance(value, list | tuple):
        return enumerate(value)
    return None


def unstorable(document: Any, name: str = "") -> str | None:
    """What in `document` (parsed JSON) cannot be stored, and where, such as
    `state.goals[2].text holds a NUL character`; None when everything can. Walks without
    recursion, so a document as deep as the parser allows cannot exhaust the stack; and holds
    one iterator per level, naming a place only when it finds a problem there, so that the walk
    costs no memory per item of a long list."""
    problem = _value_problem(document)
    if problem is not None:
        return f"{name or 'the document'} {problem}"
    levels: list[tuple[Iterator[tuple[str | int, Any]], str]] = []
    children = _children(document)
    if children is not None:
        levels.append((children, name))
    while levels:
        children, path = levels[-1]
        entry = next(children, None)
        if entry is None:
            levels.pop()
            continue
        key, value = entry
        if isinstance(key, str) and _describe(key) is not None:
            return f"a key of {path or 'the document'} holds {_describe(key)}"
        problem = _value_problem(value)
        if problem is not None:
            return f"{_step(path, key)} {problem}"
        grandchildren = _children(value)
        if grandchildren is not None:
            levels.append((grandchildren, _step(path, key)))
    return None


def deeper_than(value: object, limit: int) -> bool:
    """Whether objects and lists nest in `value` more than `limit` levels; without recursion,
    so that no depth the JSON parser let through can exhaust the stack here, and with one
    iterator per level, so that a long list costs nothing to walk."""
    if not isinstance(value, Mapping | list):
        return False
    if limit < 1:
        return True
    levels = [iter(value.values() if isinstance(value, Mapping) else value)]
    while levels:
        child = next(levels[-1], _END)
        if child is _END:
            levels.pop()
        elif isinstance(child, Mapping | list):
            if len(levels) >= limit:
                return True
            levels.append(iter(child.values() if isinstance(child, Mapping) else child))
    return False


_END = object()
