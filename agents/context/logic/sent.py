"""The assembled messages as the dashboard shows them: in the order the model reads them,
grouped by tier, each cut to a bound, and only the first and last of a long context.
Explained in docs/context.md."""

import json
from collections.abc import Sequence
from dataclasses import dataclass

from agents.context.logic.assembly import Included

MAX_SHOWN_MESSAGES = 60
SHOWN_FIRST = 15  # of a longer context: the fixed tiers come first, the newest history last
MAX_SHOWN_CHARS = 2_000  # of a message's content, and again of its other fields


@dataclass(frozen=True)
class ShownText:
    text: str
    cut: int  # characters left out at the end


@dataclass(frozen=True)
class SentMessage:
    number: int  # its place in the request, from 1
    role: str
    position: int | None  # a stored message's
    tokens: int
    content: ShownText
    fields: ShownText  # the other fields sent (name, tool_calls, ...) as JSON, or nothing


@dataclass(frozen=True)
class SentGroup:
    """A run of messages of one tier; `left_out` messages were not shown just before it."""

    tier: str
    messages: list[SentMessage]
    tokens: int
    left_out: int = 0


def _shown(text: str, limit: int) -> ShownText:
    return ShownText(text=text[:limit], cut=max(len(text) - limit, 0))


def _as_json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, indent=1)


def sent_message(number: int, message: dict, entry: Included, *, limit: int = MAX_SHOWN_CHARS) -> SentMessage:
    content = message.get("content")
    others = {key: value for key, value in message.items() if key not in ("role", "content")}
    return SentMessage(
        number=number,
        role=str(message.get("role", "")),
        position=entry.position,
        tokens=entry.tokens,
        content=_shown(content if isinstance(content, str) else _as_json(content), limit),
        fields=_shown(_as_json(others) if others else "", limit),
    )


def sent_groups(
    messages: Sequence[dict],
    included: Sequence[Included],
    *,
    most: int | None = None,
    first: int | None = None,
) -> list[SentGroup]:
    """`messages` as assembly sent them, `included` saying each one's tier and tokens, in runs
    of one tier; past `most` (MAX_SHOWN_MESSAGES), the first `first` (SHOWN_FIRST) and the
    newest, the rest counted."""
    most = MAX_SHOWN_MESSAGES if most is None else most
    first = SHOWN_FIRST if first is None else first
    if len(messages) != len(included):
        raise ValueError(f"{len(messages)} messages but {len(included)} report entries.")
    numbered = list(enumerate(zip(messages, included, strict=True), start=1))
    left_out = max(len(numbered) - most, 0)
    if left_out:
        numbered = numbered[:first] + numbered[first + left_out :]
    groups: list[SentGroup] = []
    previous = 0
    for number, (message, entry) in numbered:
        shown = sent_message(number, message, entry)
        skipped = number - previous - 1
        if groups and not skipped and groups[-1].tier == entry.tier:
            last = groups[-1]
            groups[-1] = SentGroup(last.tier, [*last.messages, shown], last.tokens + entry.tokens, last.left_out)
        else:
            groups.append(SentGroup(entry.tier, [shown], entry.tokens, skipped))
        previous = number
    return groups
