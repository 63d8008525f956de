"""A message's fields as the Chat Completions API has them, checked and normalised for storing:
what clients send as request messages (`ChatCompletionMessageParam`) and what they get back
(`ChatCompletionMessage`, which OpenAI Swarm keeps as `model_dump()`).
Explained in docs/context.md."""

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from agents.context.models import Message, Role
from agents.fields import max_chars
from memsite.errors import InvalidInput
from memsite.storable import unstorable

MAX_CONTENT_CHARS = 100_000  # of the text, and of the content parts as JSON
MAX_CONTENT_PARTS = 64
MAX_TOOL_CALLS = 64
MAX_TOOL_CALLS_CHARS = 100_000  # the calls as JSON: names and arguments; also a function_call
MAX_ANNOTATIONS = 64
MAX_ID_CHARS = max_chars(Message, "tool_call_id")
MAX_NAME_CHARS = max_chars(Message, "name")

IMAGE_DETAILS = ("auto", "low", "high", "original")
AUDIO_FORMATS = ("wav", "mp3")
CACHE_TTLS = ("30m", "12h")
# The content parts each role's message type takes.
PART_TYPES: dict[str, tuple[str, ...]] = {
    Role.SYSTEM: ("text",),
    Role.DEVELOPER: ("text",),
    Role.USER: ("text", "image_url", "input_audio", "file"),
    Role.ASSISTANT: ("text", "refusal"),
    Role.TOOL: ("text",),
    Role.FUNCTION: (),
}
# The fields only some roles' message types have.
ROLE_FIELDS = {
    "name": (Role.SYSTEM, Role.DEVELOPER, Role.USER, Role.ASSISTANT, Role.FUNCTION),
    "refusal": (Role.ASSISTANT,),
    "audio": (Role.ASSISTANT,),
    "function_call": (Role.ASSISTANT,),
    "tool_calls": (Role.ASSISTANT,),
    "annotations": (Role.ASSISTANT,),
}


def _listed(names: Sequence[str]) -> str:
    names = [str(name) for name in names]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _quoted(names: Sequence[str]) -> str:
    return " or ".join(json.dumps(name) for name in names)


def _object(where: str, value: object, keys: Sequence[str], optional: Sequence[str] = ()) -> dict:
    """`value` as an object of these keys, each required but the `optional` ones, which are left
    out when null."""
    required = [key for key in keys if key not in optional]
    if not isinstance(value, Mapping):
        raise InvalidInput(f"{where} must be an object with {_listed(keys)}.")
    unknown = next((key for key in value if key not in keys), None)
    if unknown is not None:
        raise InvalidInput(f"{where} must be an object with {_listed(keys)}; {unknown!r} is not one of them.")
    missing = next((key for key in required if value.get(key) is None), None)
    if missing is not None:
        raise InvalidInput(f"{where} needs {missing}.")
    return {key: value[key] for key in keys if value.get(key) is not None}


def short_text(field: str, value: object, limit: int) -> str:
    if not isinstance(value, str) or len(value) > limit:
        raise InvalidInput(f"{field} must be a string of at most {limit} characters.")
    return value


def _choice(field: str, value: object, choices: Sequence[str]) -> None:
    if value not in choices:
        raise InvalidInput(f"{field} must be {_quoted(choices)}.")


def _list(field: str, value: object, limit: int, what: str) -> Sequence:
    if not isinstance(value, Sequence) or isinstance(value, str) or len(value) > limit:
        raise InvalidInput(f"{field} must be a list of at most {limit} {what}.")
    return value


def _storable(field: str, value: object) -> None:
    problem = unstorable(value, field)
    if problem is not None:
        raise InvalidInput(f"{problem}.")


def _capped_json(field: str, value: object, limit: int) -> None:
    _storable(field, value)
    if len(json.dumps(value, ensure_ascii=False)) > limit:
        raise InvalidInput(f"{field} is longer than {limit} characters as JSON.")


# -- calls -------------------------------------------------------------------------------------


def called(call: Mapping) -> Mapping:
    """What a tool call calls: a function ({name, arguments}) or a custom tool ({name, input})."""
    return call.get("function") or call["custom"]


def call_name(call: Mapping) -> str:
    return called(call)["name"]


def _function(where: str, value: object) -> dict:
    """{name, arguments}: a tool call's function, or a function_call."""
    function = _object(where, value, ("name", "arguments"), optional=("arguments",))
    name = short_text(f"{where}.name", function["name"], MAX_NAME_CHARS)
    arguments = function.get("arguments", "{}")
    if not isinstance(arguments, str):
        raise InvalidInput(f"{where}.arguments must be a string of JSON, as the chat API sends it.")
    return {"name": name, "arguments": arguments}


def _custom(where: str, value: object) -> dict:
    custom = _object(where, value, ("name", "input"))
    name = short_text(f"{where}.name", custom["name"], MAX_NAME_CHARS)
    return {
        "name": name,
        "input": short_text(f"{where}.input", custom["input"], MAX_TOOL_CALLS_CHARS),
    }


def _tool_call(where: str, call: object) -> dict:
    kind = call.get("type", "function") if isinstance(call, Mapping) else "function"
    if kind == "function":
        fields = _object(where, call, ("id", "type", "function"), optional=("type",))
        body = {"function": _function(f"{where}.function", fields["function"])}
    elif kind == "custom":
        fields = _object(where, call, ("id", "type", "custom"))
        body = {"custom": _custom(f"{where}.custom", fields["custom"])}
    else:
        raise InvalidInput(f"{where}.type must be {_quoted(('function', 'custom'))}.")
    call_id = short_text(f"{where}.id", fields["id"], MAX_ID_CHARS)
    if not call_id.strip() or not call_name(body).strip():
        raise InvalidInput(f"{where} needs a non-blank id and function name.")
    return {"id": call_id, "type": kind, **body}


def _tool_calls(value: object) -> list[dict]:
    """[{id, type: "function", function: {name, arguments}}], arguments as JSON text, or
    [{id, type: "custom", custom: {name, input}}]."""
    value = _list("tool_calls", value, MAX_TOOL_CALLS, "calls")
    calls = [_tool_call(f"tool_calls[{number}]", call) for number, call in enumerate(value)]
    _capped_json("tool_calls", calls, MAX_TOOL_CALLS_CHARS)
    ids = [call["id"] for call in calls]
    if len(set(ids)) != len(ids):
        raise InvalidInput("tool_calls must have distinct ids.")
    return calls


def _function_call(value: object) -> dict:
    call = _function("function_call", value)
    _capped_json("function_call", call, MAX_TOOL_CALLS_CHARS)
    return call


# -- content -----------------------------------------------------------------------------------


def _text_part(where: str, part: dict) -> None:
    short_text(f"{where}.{part['type']}", part[part["type"]], MAX_CONTENT_CHARS)


def _image_part(where: str, part: dict) -> None:
    image = part["image_url"] = _object(f"{where}.image_url", part["image_url"], ("url", "detail"), ("detail",))
    short_text(f"{where}.image_url.url", image["url"], MAX_CONTENT_CHARS)
    _choice(f"{where}.image_url.detail", image.get("detail", "auto"), IMAGE_DETAILS)


def _audio_part(where: str, part: dict) -> None:
    audio = part["input_audio"] = _object(f"{where}.input_audio", part["input_audio"], ("data", "format"))
    short_text(f"{where}.input_audio.data", audio["data"], MAX_CONTENT_CHARS)
    _choice(f"{where}.input_audio.format", audio["format"], AUDIO_FORMATS)


def _file_part(where: str, part: dict) -> None:
    keys = ("file_data", "file_id", "filename")
    file = part["file"] = _object(f"{where}.file", part["file"], keys, optional=keys)
    if not file.keys() & {"file_data", "file_id"}:
        raise InvalidInput(f"{where}.file needs file_data or file_id.")
    for key, text in file.items():
        short_text(f"{where}.file.{key}", text, MAX_CONTENT_CHARS)


PART_CHECKS: dict[str, Callable[[str, dict], None]] = {
    "text": _text_part,
    "refusal": _text_part,
    "image_url": _image_part,
    "input_audio": _audio_part,
    "file": _file_part,
}


def _part(where: str, part: object, types: Sequence[str]) -> dict:
    kind = part.get("type") if isinstance(part, Mapping) else None
    if not isinstance(kind, str) or kind not in types:
        raise InvalidInput(f"{where}.type must be {_quoted(types)}.")
    optional = ("prompt_cache_breakpoint",) if kind != "refusal" else ()
    fields = _object(where, part, ("type", kind, *optional), optional)
    PART_CHECKS[kind](where, fields)
    if "prompt_cache_breakpoint" in fields:
        where = f"{where}.prompt_cache_breakpoint"
        mark = _object(where, fields["prompt_cache_breakpoint"], ("mode", "ttl"), optional=("ttl",))
        fields["prompt_cache_breakpoint"] = mark
        _choice(f"{where}.mode", mark["mode"], ("explicit",))
        _choice(f"{where}.ttl", mark.get("ttl", CACHE_TTLS[0]), CACHE_TTLS)
    return fields


def _content(role: str, value: object) -> tuple[str, list[dict]]:
    """The text to store and show, and the parts when the content is a list of them: the text is
    then the text and refusal parts' text, joined by blank lines. Null is no content."""
    if value is None:
        return "", []
    if isinstance(value, str):
        if len(value) > MAX_CONTENT_CHARS:
            raise InvalidInput(f"content is {len(value)} characters; the limit is {MAX_CONTENT_CHARS}.")
        _storable("content", value)
        return value, []
    types = PART_TYPES[role]
    if not types or not isinstance(value, Sequence):
        or_parts = " or a list of content parts" if types else ""
        raise InvalidInput(f"The content of a {role} message must be a string{or_parts}.")
    listed = _list("content", value, MAX_CONTENT_PARTS, "content parts")
    parts = [_part(f"content[{number}]", part, types) for number, part in enumerate(listed)]
    _capped_json("content", parts, MAX_CONTENT_CHARS)
    texts = [part[part["type"]] for part in parts if part["type"] in ("text", "refusal")]
    return "\n\n".join(texts), parts


# -- the rest of a reply -----------------------------------------------------------------------


def _audio(value: object) -> dict:
    """An audio reply as a later call needs it: its id, with its transcript and expiry to show."""
    later = ("data", "expires_at", "transcript")  # a reply has them; a request sends only the id
    audio = _object("audio", value, ("id", *later), optional=later)
    kept = {"id": short_text("audio.id", audio["id"], MAX_ID_CHARS)}
    if not kept["id"].strip():
        raise InvalidInput("audio.id must not be blank.")
    if not isinstance(audio.get("data", ""), str):
        raise InvalidInput("audio.data must be a string of base64.")
    if "expires_at" in audio:
        if isinstance(audio["expires_at"], bool) or not isinstance(audio["expires_at"], int):
            raise InvalidInput("audio.expires_at must be a Unix time in seconds.")
        kept["expires_at"] = audio["expires_at"]
    if "transcript" in audio:
        kept["transcript"] = short_text("audio.transcript", audio["transcript"], MAX_CONTENT_CHARS)
    _storable("audio", kept)
    return kept


def _annotation(where: str, value: object) -> dict:
    annotation = _object(where, value, ("type", "url_citation"))
    _choice(f"{where}.type", annotation["type"], ("url_citation",))
    keys = ("end_index", "start_index", "title", "url")
    citation = _object(f"{where}.url_citation", annotation["url_citation"], keys)
    for key in ("end_index", "start_index"):
        index = citation[key]
        if isinstance(index, bool) or not isinstance(index, int) or index < 0:
            raise InvalidInput(f"{where}.url_citation.{key} must be a character index.")
    for key in ("title", "url"):
        short_text(f"{where}.url_citation.{key}", citation[key], MAX_CONTENT_CHARS)
    return {"type": "url_citation", "url_citation": citation}


def _annotations(value: object) -> list[dict]:
    value = _list("annotations", value, MAX_ANNOTATIONS, "annotations")
    annotations = [_annotation(f"annotations[{number}]", item) for number, item in enumerate(value)]
    _capped_json("annotations", annotations, MAX_CONTENT_CHARS)
    return annotations


def _text(field: str, value: object, limit: int) -> str:
    text = "" if value is None else short_text(field, value, limit)
    _storable(field, text)
    return text


def chat_fields(
    *,
    role: str,
    content: object,
    name: object,
    refusal: object,
    audio: object,
    function_call: object,
    tool_calls: object,
    annotations: object,
) -> dict[str, Any]:
    """The fields of a message of `role` (a known role), checked and normalised. A field its
    role's message type does not have is refused unless it is null or empty."""
    text, parts = _content(role, content)
    fields = {
        "content": text,
        "content_parts": parts,
        "name": _text("name", name, MAX_NAME_CHARS),
        "refusal": _text("refusal", refusal, MAX_CONTENT_CHARS),
        "audio": {} if audio is None else _audio(audio),
        "function_call": {} if function_call is None else _function_call(function_call),
        "tool_calls": [] if tool_calls is None else _tool_calls(tool_calls),
        "annotations": [] if annotations is None else _annotations(annotations),
    }
    for field, roles in ROLE_FIELDS.items():
        if fields[field] and role not in roles:
            if field == "tool_calls":
                raise InvalidInput("Only assistant messages make tool calls.")
            raise InvalidInput(f"{field} belongs to {_listed(roles)} messages, not to {role} messages.")
    return fields
