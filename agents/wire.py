"""Messages in the chat API's form, and what each costs in a request.

A message's cost is counted the way `TokenCounter.count_messages` bills a request, less the
reply priming that a request pays once: so the tokens of an assembled context are the sum of its
messages' costs plus `TOKENS_REPLY_PRIMING`, and each stored message is counted once, when it is
written."""

import copy
import json
from collections.abc import Mapping, Sequence

from memsite.llm.tokens import TOKENS_REPLY_PRIMING, TokenCounter

SUMMARY_HEADING = "# Summary of the earlier conversation"


def wire_message(
    *, role: str, content: str, tool_calls: Sequence[Mapping] = (), tool_call_id: str = ""
) -> dict:
    """What the chat API is sent: tool calls only when there are some, a call id only on a
    tool result. A message's sender and tool name stay in memsite."""
    message: dict = {"role": role, "content": content}
    if tool_calls:
        message["tool_calls"] = copy.deepcopy(list(tool_calls))
    if tool_call_id:
        message["tool_call_id"] = tool_call_id
    return message


def wire_tokens(counter: TokenCounter, message: Mapping) -> int:
    countable = dict(message)
    if "tool_calls" in countable:
        countable["tool_calls"] = json.dumps(countable["tool_calls"], ensure_ascii=False, separators=(",", ":"))
    return counter.count_messages([countable]) - TOKENS_REPLY_PRIMING


def summary_wire_message(*, since: int, through: int, text: str) -> dict:
    """A summary of messages `since` to `through` as the system message that stands for them."""
    heading = f"{SUMMARY_HEADING} (messages {since} to {through})"
    return wire_message(role="system", content=f"{heading}\n\n{text}")
