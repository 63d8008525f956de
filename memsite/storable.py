"""Whether a JSON document a client sent can be stored as it is. Python's parser reads three
things no column keeps: NUL (`"\\u0000"`, refused by PostgreSQL in text and jsonb), unpaired
surrogates (`"\\ud800"`, which no UTF-8 text holds) and numbers past a float's range (`1e400`
reads as infinity, which JSON cannot write back). Free-form documents (memory.json, snapshots,
agents' context variables, tool calls) are checked here before they reach the database, so that
they are refused with a 400 rather than failing there."""

import json
import math
import re
from collections.abc import Mapping
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


def unstorable(document: Any, name: str = "") -> str | None:
    """What in `document` (parsed JSON) cannot be stored, and where, such as
    `state.goals[2].text holds a NUL character`; None when everything can. Walks without
    recursion, so a document as deep as the parser allows cannot exhaust the stack."""
    stack: list[tuple[Any, str]] = [(document, name)]
    while stack:
        value, path = stack.pop()
        where = path or "the document"
        if isinstance(value, str):
            problem = _describe(value)
            if problem is not None:
                return f"{where} holds {problem}"
        elif isinstance(value, float):
            if math.isnan(value):
                return f"{where} is NaN, which is not a JSON number"
            if math.isinf(value):
                return f"{where} is a number out of range"
        elif isinstance(value, dict):
            for key, item in value.items():
                problem = _describe(key) if isinstance(key, str) else None
                if problem is not None:
                    return f"a key of {where} holds {problem}"
                stack.append((item, _step(path, key)))
        elif isinstance(value, list | tuple):
            stack.extend((item, _step(path, index)) for index, item in enumerate(value))
    return None


def deeper_than(value: object, limit: int) -> bool:
    """Whether objects and lists nest in `value` more than `limit` levels; without recursion,
    so that no depth the JSON parser let through can exhaust the stack here."""
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        children = node.values() if isinstance(node, Mapping) else node
        stack.extend((child, depth + 1) for child in children if isinstance(child, Mapping | list))
    return False
