"""Tools' arguments as JSON Schema, and their refusals as the API words them: the schema a model
is shown (no titles, no examples, definitions inlined) and pydantic's errors nested by field.
Explained in docs/tools.md."""

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

NON_FIELD = "non_field_errors"  # DRF's key for an error of the whole object
# What a model is not shown: pydantic's titles repeat the field names; examples are the docs'.
DROPPED = frozenset({"title", "examples"})


class ToolArgs(BaseModel):
    """A tool's arguments, strict as the API's input: a number is no string nor the reverse,
    and an argument the tool does not take is refused."""

    model_config = ConfigDict(extra="forbid", strict=True)


def parameters(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON Schema of `model` as a function's parameters: an object schema with every
    `$ref` replaced by its definition (some clients resolve none), without titles or examples.
    The models are not recursive, so inlining ends."""
    schema = model.model_json_schema()
    definitions = schema.pop("$defs", {})
    return _inlined(schema, definitions, properties=False)


def _inlined(node: Any, definitions: Mapping[str, Any], *, properties: bool) -> Any:
    if isinstance(node, Mapping):
        if "$ref" in node:
            target = definitions[node["$ref"].rsplit("/", 1)[1]]
            beside = {key: value for key, value in node.items() if key != "$ref"}  # a description, a default
            return _inlined({**target, **beside}, definitions, properties=False)
        # The keys of `properties` are field names, which may be "title": only schemas lose theirs.
        return {
            key: _inlined(value, definitions, properties=key == "properties" and not properties)
            for key, value in node.items()
            if properties or key not in DROPPED
        }
    if isinstance(node, list):
        return [_inlined(item, definitions, properties=False) for item in node]
    return node


def examples(model: type[BaseModel]) -> list[dict[str, Any]]:
    """The example arguments `model` declares (`json_schema_extra={"examples": [...]}`)."""
    return list(model.model_json_schema().get("examples", []))


def field_errors(error: ValidationError, arguments: Mapping[str, Any], accepted: Sequence[str]) -> dict[str, Any]:
    """pydantic's errors nested as the arguments are, each field with its messages, as the API's
    400 names them: {"budgets": {"timeout_s": [...]}}, {"questions": {"1": [...]}}. `accepted`:
    the top level's fields, named when an unknown one is refused."""
    nested: dict[str, Any] = {}
    for item in error.errors(include_url=False, include_input=False):
        path = _path(item["loc"], arguments)
        message = item["msg"]
        if item["type"] == "extra_forbidden":
            message = f"Unknown field. Accepted fields: {', '.join(accepted)}." if len(path) == 1 else "Unknown field."
        place = nested
        for key in path[:-1]:
            place = _object_at(place, key)
        place.setdefault(path[-1], [])
        messages = place[path[-1]]
        (messages if isinstance(messages, list) else messages.setdefault(NON_FIELD, [])).append(message)
    return nested


def _object_at(place: dict[str, Any], key: str) -> dict[str, Any]:
    """The errors object at `key`; a field's own messages there move under NON_FIELD."""
    current = place.get(key)
    if isinstance(current, dict):
        return current
    place[key] = {NON_FIELD: current} if current else {}
    return place[key]


def _path(loc: tuple[int | str, ...], data: Any) -> list[str]:
    """The fields and list positions of `loc` that are in the arguments (a missing field last):
    a union's member tags, which pydantic adds after a value, are not fields."""
    path: list[str] = []
    for position, key in enumerate(loc):
        if isinstance(data, Mapping) and isinstance(key, str) and (key in data or position == len(loc) - 1):
            data = data.get(key)
        elif isinstance(data, list) and isinstance(key, int) and 0 <= key < len(data):
            data = data[key]
        else:
            break
        path.append(str(key))
    return path or [NON_FIELD]


def openapi_3_0(node: Any) -> Any:
    """A JSON Schema of `parameters` in OpenAPI 3.0's dialect, which the API's schema is written
    in: a type that may be null is `nullable` (3.0 has no "null" type)."""
    if isinstance(node, Mapping):
        converted = {key: openapi_3_0(value) for key, value in node.items()}
        members = converted.get("anyOf")
        if isinstance(members, list) and {"type": "null"} in members:
            rest = [member for member in members if member != {"type": "null"}]
            beside = {key: value for key, value in converted.items() if key != "anyOf"}  # the field's own
            return {**(rest[0] if len(rest) == 1 else {"anyOf": rest}), **beside, "nullable": True}
        return converted
    if isinstance(node, list):
        return [openapi_3_0(item) for item in node]
    return node
