"""Messages in the chat API's form, and what each costs in a request: what
`TokenCounter.count_messages` bills for it, less the reply priming a request pays once.
Explained in docs/context.md."""

import json
from collections.abc import Mapping, Sequence

from memsite.llm.tokens import TOKENS_REPLY_PRIMING, TokenCounter

SUMMARY_HEADING = "# Summary of the earlier conversation"
# What an image part costs: the documented fixed cost of detail "low", and for any other detail
# the most an image can cost by the documented rule of GPT-4o's tiles (at most 768 x 2048 pixels
# once scaled: 8 tiles of 170 tokens, plus 85). Memsite never fetches an image to learn its size.
IMAGE_TOKENS_LOW = 85
IMAGE_TOKENS_MAX = 85 + 8 * 170
# Sent as JSON text, and counted so.
JSON_FIELDS = ("tool_calls", "function_call", "audio")
# A stored message's fields that `wire_message` sends, by their names there.
WIRE_FIELDS = (
    "role",
    "content",
    "content_parts",
    "name",
    "refusal",
    "audio_id",
    "function_call",
    "tool_calls",
    "tool_call_id",
)


def wire_message(
    *,
    role: str,
    content: str,
    content_parts: Sequence[Mapping] = (),
    name: str = "",
    refusal: str = "",
    audio_id: str = "",
    function_call: Mapping | None = None,
    tool_calls: Sequence[Mapping] = (),
    tool_call_id: str = "",
) -> dict:
    """What the chat API is sent: the content as its parts when it came as parts, and each other
    field only when it has a value; an audio reply only by its id. A message's sender, tool
    name and annotations stay in memsite. Lists and objects are the caller's, not copies."""
    message: dict = {"role": role, "content": list(content_parts) if content_parts else content}
    if name:
        message["name"] = name
    if refusal:
        message["refusal"] = refusal
    if audio_id:
        message["audio"] = {"id": audio_id}
    if function_call:
        message["function_call"] = function_call
    if tool_calls:
        message["tool_calls"] = list(tool_calls)
    if tool_call_id:
        message["tool_call_id"] = tool_call_id
    return message


def wire_message_of(fields: Mapping) -> dict:
    """`wire_message` of a message's stored fields, by WIRE_FIELDS' names."""
    return wire_message(**{name: fields[name] for name in WIRE_FIELDS})


def _part_cost(counter: TokenCounter, part: Mapping) -> int:
    """Text and refusal parts cost their text; images their fixed cost (IMAGE_TOKENS_*); audio
    and files the text they carry (their base64 or id, within the content's cap)."""
    kind = part["type"]
    if kind in ("text", "refusal"):
        return counter.count(part[kind])
    if kind == "image_url":
        return IMAGE_TOKENS_LOW if part["image_url"].get("detail") == "low" else IMAGE_TOKENS_MAX
    return counter.count(json.dumps(part[kind], ensure_ascii=False, separators=(",", ":")))


def wire_tokens(counter: TokenCounter, message: Mapping) -> int:
    countable = dict(message)
    parts = countable["content"] if isinstance(countable["content"], list) else []
    if parts:
        countable["content"] = ""
    for key in JSON_FIELDS:
        if key in countable:
            countable[key] = json.dumps(countable[key], ensure_ascii=False, separators=(",", ":"))
    parts_tokens = sum(_part_cost(counter, part) for part in parts)
    return counter.count_messages([countable]) - TOKENS_REPLY_PRIMING + parts_tokens


def estimated(message: Mapping) -> bool:
    """Whether a message's cost holds estimates: parts other than text, or audio sent back."""
    parts = message["content"] if isinstance(message["content"], list) else []
    return "audio" in message or any(part["type"] not in ("text", "refusal") for part in parts)


def summary_wire_message(*, since: int, through: int, text: str) -> dict:
    """A summary of messages `since` to `through` as the system message that stands for them."""
    heading = f"{SUMMARY_HEADING} (messages {since} to {through})"
    return wire_message(role="system", content=f"{heading}\n\n{text}")
