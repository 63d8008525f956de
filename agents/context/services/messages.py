"""Appending to an agent's conversation: each message is checked, counted once with the
agent's model's encoding, and written with the agent's counters under a lock on the agent;
a message and the tool results that answer it form one unit. A memory.json import replaces the
conversation with its chat lines. Explained in docs/context.md."""

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import IntegrityError, transaction

from agents.context.logic.message_fields import (
    MAX_CONTENT_CHARS,
    MAX_ID_CHARS,
    MAX_NAME_CHARS,
    call_name,
    chat_fields,
    short_text,
)
from agents.context.logic.wire import estimated, wire_message_of, wire_tokens
from agents.context.models import RESULT_ROLES, Agent, Message, Role, Summary
from agents.fields import max_chars
from memsite.errors import Conflict, InvalidInput
from memsite.llm.tokens import counter_for_model
from memsite.storable import unstorable

MAX_SENDER_CHARS = max_chars(Message, "sender")
MAX_REFERENCES = 32
CHAT_ROLES = (Role.USER, Role.ASSISTANT)  # the roles of a chat line
REPLACE_BATCH = 1_000


@dataclass(frozen=True)
class ChatLine:
    """A message of a chat, as memory.json's chatHistory has it."""

    role: str
    content: str
    created_at: datetime
    data: Mapping[str, Any] = field(default_factory=dict)


def _references(value: object) -> list[int]:
    if not isinstance(value, Sequence) or isinstance(value, str) or len(value) > MAX_REFERENCES:
        raise InvalidInput(f"references must be a list of at most {MAX_REFERENCES} message positions.")
    for item in value:
        if isinstance(item, bool) or not isinstance(item, int) or item < 1:
            raise InvalidInput(f"references are message positions, whole numbers from 1; got {item!r}.")
    return sorted(set(value))


def _role_rules(fields: dict[str, Any], pinned: bool) -> None:
    """What a message of its role needs, and what may be pinned."""
    role, calls = fields["role"], fields["tool_calls"] or fields["function_call"]
    if fields["tool_calls"] and fields["function_call"]:
        raise InvalidInput("An assistant message makes tool_calls or a function_call, not both.")
    has_content = bool(fields["content"].strip()) or any(part["type"] != "text" for part in fields["content_parts"])
    if role in (Role.SYSTEM, Role.DEVELOPER, Role.USER) and not has_content:
        raise InvalidInput(f"A {role} message needs content.")
    if role == Role.ASSISTANT and not (has_content or calls or fields["refusal"] or fields["audio"]):
        raise InvalidInput("An assistant message needs content, a refusal, audio, tool_calls or a function_call.")
    if role == Role.FUNCTION and not fields["name"].strip():
        raise InvalidInput("A function message needs the name of the function whose call it answers.")
    if pinned and (role in RESULT_ROLES or calls):
        raise InvalidInput(
            "Tool calls, function calls and their results cannot be pinned: they are kept or dropped as a pair."
        )


def _data(value: object) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise InvalidInput("data must be an object.")
    problem = unstorable(value, "data")
    if problem is not None:
        raise InvalidInput(f"{problem}.")
    if len(json.dumps(value, ensure_ascii=False)) > MAX_CONTENT_CHARS:
        raise InvalidInput(f"data is longer than {MAX_CONTENT_CHARS} characters as JSON.")
    return dict(value)


def _checked(
    *,
    role: str,
    content: object = "",
    name: object = "",
    refusal: object = "",
    audio: object = None,
    function_call: object = None,
    tool_calls: object = (),
    annotations: object = (),
    tool_call_id: object = "",
    tool_name: object = "",
    sender: object = "",
    pinned: object = False,
    importance: object = 0.5,
    references: object = (),
    data: object = None,
) -> dict[str, Any]:
    """The message's fields, checked on their own (the conversation is checked under the lock):
    the fields the chat API has (`message_fields.chat_fields`), and memsite's own."""
    if role not in Role.values:
        raise InvalidInput(f"role must be one of {', '.join(Role.values)}.")
    chat = {"content": content, "name": name, "refusal": refusal, "audio": audio}
    chat.update(function_call=function_call, tool_calls=tool_calls, annotations=annotations)
    fields = {"role": role, **chat_fields(role=role, **chat)}
    tool_call_id = short_text("tool_call_id", tool_call_id, MAX_ID_CHARS)
    tool_name = short_text("tool_name", tool_name, MAX_NAME_CHARS)
    if role == Role.TOOL and not tool_call_id.strip():
        raise InvalidInput("A tool message needs the tool_call_id of the call it answers.")
    if role != Role.TOOL and (tool_call_id or tool_name):
        raise InvalidInput("tool_call_id and tool_name belong to tool messages only.")
    if not isinstance(pinned, bool):
        raise InvalidInput("pinned must be true or false.")
    _role_rules(fields, pinned)
    if isinstance(importance, bool) or not isinstance(importance, (int, float)) or not 0 <= importance <= 1:
        raise InvalidInput("importance must be a number from 0 to 1.")
    return {
        **fields,
        "tool_call_id": tool_call_id,
        "tool_name": tool_name,
        "sender": short_text("sender", sender, MAX_SENDER_CHARS),
        "pinned": pinned,
        "importance": float(importance),
        "references": _references(references),
        "data": {} if data is None else _data(data),
    }


def _pair(fields: dict[str, Any], pending: list[dict]) -> list[dict]:
    """Checks the message against the calls waiting for results; the calls waiting after it."""
    if fields["role"] == Role.TOOL:
        call = next((call for call in pending if call["id"] == fields["tool_call_id"]), None)
        if call is None:
            waiting = ", ".join(call["id"] for call in pending) or "none"
            raise InvalidInput(
                f"tool_call_id {fields['tool_call_id']!r} answers no waiting tool call (waiting: {waiting})."
            )
        if fields["tool_name"] and fields["tool_name"] != call["name"]:
            raise InvalidInput(f"Tool call {call['id']!r} called {call['name']!r}, not {fields['tool_name']!r}.")
        fields["tool_name"] = call["name"]
        return [other for other in pending if other is not call]
    if pending:
        waiting = ", ".join(call["id"] for call in pending)
        raise InvalidInput(f"The assistant's tool calls {waiting} wait for their results; append those first.")
    return [{"id": call["id"], "name": call_name(call)} for call in fields["tool_calls"]]


def _answers_function_call(fields: dict[str, Any], call: Mapping) -> None:
    """A function message answers the function_call of the message just before it (the chat
    API's older form of a tool call, which has no id)."""
    if not call:
        raise InvalidInput(
            "A function message answers the function_call of the message just before it; that message made none."
        )
    if call["name"] != fields["name"]:
        raise InvalidInput(f"The function_call just before called {call['name']!r}, not {fields['name']!r}.")


def _last_function_call(agent: Agent) -> dict:
    rows = Message.objects.filter(agent=agent, position=agent.message_count).values_list("function_call", flat=True)
    return next(iter(rows), None) or {}


def _cost(model: str, fields: dict[str, Any]) -> dict[str, Any]:
    """The message's tokens as the agent's model counts it, with how they were counted."""
    counter = counter_for_model(model)
    wire = wire_message_of({**fields, "audio_id": fields["audio"].get("id", "")})
    # Sent back by its id, an audio reply is heard again: its transcript stands for its audio
    # tokens, which memsite cannot count.
    tokens = wire_tokens(counter, wire) + counter.count(fields["audio"].get("transcript", ""))
    return {
        "token_count": tokens,
        "token_encoding": counter.encoding.name,
        "tokens_approximate": counter.approximate or estimated(wire),
    }


def _write(agent: Agent, fields: dict[str, Any]) -> Message:
    """Checks the message against the conversation and writes it with the agent's counters,
    under a lock on the agent."""
    with transaction.atomic():
        agent = Agent.objects.select_for_update().get(pk=agent.pk)
        pending = _pair(fields, agent.pending_tool_calls)
        if fields["role"] == Role.FUNCTION:
            _answers_function_call(fields, _last_function_call(agent))
        position = agent.message_count + 1
        if fields["references"] and fields["references"][-1] >= position:
            raise InvalidInput(f"references must name earlier messages: positions below {position}.")
        cost = _cost(agent.model, fields)
        try:
            with transaction.atomic():
                message = Message.objects.create(
                    agent=agent,
                    position=position,
                    history_offset=agent.history_tokens,
                    **cost,
                    **fields,
                )
        except IntegrityError:
            raise Conflict("Another message was appended to this agent at the same time; send it again.") from None
        agent.message_count = position
        agent.conversation_tokens += cost["token_count"]
        if not fields["pinned"]:
            agent.history_tokens += cost["token_count"]
        agent.pending_tool_calls = pending
        agent.save(
            update_fields=[
                "message_count",
                "conversation_tokens",
                "history_tokens",
                "pending_tool_calls",
                "updated_at",
            ]
        )
    return message


def message_append(
    *,
    agent: Agent,
    role: str,
    content: str | Sequence[Mapping[str, Any]] | None = "",
    name: str | None = "",
    refusal: str | None = "",
    audio: Mapping[str, Any] | None = None,
    function_call: Mapping[str, Any] | None = None,
    tool_calls: Sequence[Mapping[str, Any]] | None = (),
    annotations: Sequence[Mapping[str, Any]] | None = (),
    tool_call_id: str = "",
    tool_name: str = "",
    sender: str = "",
    pinned: bool = False,
    importance: float = 0.5,
    references: Sequence[int] = (),
    data: Mapping[str, Any] | None = None,
) -> Message:
    """Append a message to the agent's conversation: the chat API's fields as it takes or
    returns them (null is left out), and memsite's own. `references` are positions of earlier
    messages it builds on (the importance strategy keeps those longer); `data`, a chat line's
    other keys (`Message.data`)."""
    fields = _checked(
        role=role,
        content=content,
        name=name,
        refusal=refusal,
        audio=audio,
        function_call=function_call,
        tool_calls=tool_calls,
        annotations=annotations,
        tool_call_id=tool_call_id,
        tool_name=tool_name,
        sender=sender,
        pinned=pinned,
        importance=importance,
        references=references,
        data=data,
    )
    return _write(agent, fields)


def conversation_replace(*, agent: Agent, lines: Sequence[ChatLine]) -> int:
    """Replace the agent's conversation with `lines`, in order, each checked and counted as an
    append is, before anything is deleted. As a checkpoint restore does, it drops the agent's
    summaries, which describe messages that are gone. The number of messages written."""
    counted = []
    offset = 0
    for number, line in enumerate(lines):
        if line.role not in CHAT_ROLES:
            raise InvalidInput(
                f"Chat line {number} has the role {line.role!r}: a chat line is a user's or an assistant's."
            )
        fields = _checked(role=line.role, content=line.content, data=line.data)
        cost = _cost(agent.model, fields)
        counted.append((fields, cost, offset, line.created_at))
        offset += cost["token_count"]
    messages = (
        Message(agent=agent, position=number, history_offset=start, created_at=at, **cost, **fields)
        for number, (fields, cost, start, at) in enumerate(counted, 1)
    )
    with transaction.atomic():
        agent = Agent.objects.select_for_update().get(pk=agent.pk)
        Message.objects.filter(agent=agent).delete()
        Summary.objects.filter(agent=agent).delete()
        Message.objects.bulk_create(messages, batch_size=REPLACE_BATCH)
        agent.message_count = len(counted)
        agent.conversation_tokens = agent.history_tokens = offset
        agent.pending_tool_calls = []
        agent.save(
            update_fields=["message_count", "conversation_tokens", "history_tokens", "pending_tool_calls", "updated_at"]
        )
    return len(counted)
