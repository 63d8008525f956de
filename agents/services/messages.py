"""Appending to an agent's conversation: each message is checked, counted once with the
agent's model's encoding, and written with the agent's counters under a lock on the agent.

Tool calls and their results pair up as the chat API requires: an assistant message with tool
calls must be answered by one tool message per call, straight after it, before anything else
is appended. So a message and the tool results after it always form one unit that assembly can
keep or drop whole."""

import json
from collections.abc import Mapping, Sequence
from typing import Any

from django.db import IntegrityError, transaction

from agents.models import Agent, Message, Role
from agents.wire import wire_message, wire_tokens
from memsite.errors import Conflict, InvalidInput
from memsite.llm.tokens import counter_for_model
from memsite.storable import unstorable

MAX_CONTENT_CHARS = 100_000
MAX_TOOL_CALLS = 64
MAX_TOOL_CALLS_CHARS = 100_000  # the calls as JSON: names and arguments
MAX_ID_CHARS = Message._meta.get_field("tool_call_id").max_length
MAX_NAME_CHARS = Message._meta.get_field("tool_name").max_length
MAX_SENDER_CHARS = Message._meta.get_field("sender").max_length
MAX_REFERENCES = 32


def _short_text(field: str, value: object, limit: int) -> str:
    if not isinstance(value, str) or len(value) > limit:
        raise InvalidInput(f"{field} must be a string of at most {limit} characters.")
    return value


def _tool_calls(value: object) -> list[dict]:
    """The calls in the chat API's form: [{id, type: "function", function: {name, arguments}}]."""
    if not isinstance(value, Sequence) or isinstance(value, str) or len(value) > MAX_TOOL_CALLS:
        raise InvalidInput(f"tool_calls must be a list of at most {MAX_TOOL_CALLS} calls.")
    calls = []
    for number, call in enumerate(value, 1):
        where = f"tool_calls[{number - 1}]"
        if not isinstance(call, Mapping) or set(call) - {"id", "type", "function"}:
            raise InvalidInput(f"{where} must be an object with id, type and function.")
        function = call.get("function")
        if not isinstance(function, Mapping) or set(function) - {"name", "arguments"}:
            raise InvalidInput(f"{where}.function must be an object with name and arguments.")
        if call.get("type", "function") != "function":
            raise InvalidInput(f"{where}.type must be \"function\".")
        call_id = _short_text(f"{where}.id", call.get("id"), MAX_ID_CHARS)
        name = _short_text(f"{where}.function.name", function.get("name"), MAX_NAME_CHARS)
        if not call_id.strip() or not name.strip():
            raise InvalidInput(f"{where} needs a non-blank id and function name.")
        arguments = function.get("arguments", "{}")
        if not isinstance(arguments, str):
            raise InvalidInput(f"{where}.function.arguments must be a string of JSON, as the chat API sends it.")
        calls.append({"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}})
    problem = unstorable(calls, "tool_calls")
    if problem is not None:
        raise InvalidInput(f"{problem}.")
    ids = [call["id"] for call in calls]
    if len(set(ids)) != len(ids):
        raise InvalidInput("tool_calls must have distinct ids.")
    if len(json.dumps(calls, ensure_ascii=False)) > MAX_TOOL_CALLS_CHARS:
        raise InvalidInput(f"tool_calls are longer than {MAX_TOOL_CALLS_CHARS} characters as JSON.")
    return calls


def _references(value: object) -> list[int]:
    if not isinstance(value, Sequence) or isinstance(value, str) or len(value) > MAX_REFERENCES:
        raise InvalidInput(f"references must be a list of at most {MAX_REFERENCES} message positions.")
    for item in value:
        if isinstance(item, bool) or not isinstance(item, int) or item < 1:
            raise InvalidInput(f"references are message positions, whole numbers from 1; got {item!r}.")
    return sorted(set(value))


def _checked(
    *,
    role: str,
    content: object,
    tool_calls: object,
    tool_call_id: object,
    tool_name: object,
    sender: object,
    pinned: object,
    importance: object,
    references: object,
) -> dict[str, Any]:
    """The message's fields, checked on their own (the conversation is checked under the lock)."""
    if role not in Role.values:
        raise InvalidInput(f"role must be one of {', '.join(Role.values)}.")
    if not isinstance(content, str):
        raise InvalidInput("content must be a string.")
    if len(content) > MAX_CONTENT_CHARS:
        raise InvalidInput(f"content is {len(content)} characters; the limit is {MAX_CONTENT_CHARS}.")
    calls = _tool_calls(tool_calls)
    if calls and role != Role.ASSISTANT:
        raise InvalidInput("Only assistant messages make tool calls.")
    tool_call_id = _short_text("tool_call_id", tool_call_id, MAX_ID_CHARS)
    tool_name = _short_text("tool_name", tool_name, MAX_NAME_CHARS)
    if role == Role.TOOL and not tool_call_id.strip():
        raise InvalidInput("A tool message needs the tool_call_id of the call it answers.")
    if role != Role.TOOL and (tool_call_id or tool_name):
        raise InvalidInput("tool_call_id and tool_name belong to tool messages only.")
    if role in (Role.SYSTEM, Role.USER) or (role == Role.ASSISTANT and not calls):
        if not content.strip():
            raise InvalidInput(f"A {role} message needs content.")
    if not isinstance(pinned, bool):
        raise InvalidInput("pinned must be true or false.")
    if pinned and (role == Role.TOOL or calls):
        raise InvalidInput("Tool calls and tool results cannot be pinned: they are kept or dropped as a pair.")
    if isinstance(importance, bool) or not isinstance(importance, (int, float)) or not 0 <= importance <= 1:
        raise InvalidInput("importance must be a number from 0 to 1.")
    return {
        "role": role,
        "content": content,
        "tool_calls": calls,
        "tool_call_id": tool_call_id,
        "tool_name": tool_name,
        "sender": _short_text("sender", sender, MAX_SENDER_CHARS),
        "pinned": pinned,
        "importance": float(importance),
        "references": _references(references),
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
    return [{"id": call["id"], "name": call["function"]["name"]} for call in fields["tool_calls"]]


def message_append(
    *,
    agent: Agent,
    role: str,
    content: str = "",
    tool_calls: Sequence[Mapping[str, Any]] = (),
    tool_call_id: str = "",
    tool_name: str = "",
    sender: str = "",
    pinned: bool = False,
    importance: float = 0.5,
    references: Sequence[int] = (),
) -> Message:
    """Append a message to the agent's conversation. `references` are positions of earlier
    messages it builds on (the importance strategy keeps those longer)."""
    fields = _checked(
        role=role,
        content=content,
        tool_calls=tool_calls,
        tool_call_id=tool_call_id,
        tool_name=tool_name,
        sender=sender,
        pinned=pinned,
        importance=importance,
        references=references,
    )
    with transaction.atomic():
        agent = Agent.objects.select_for_update().get(pk=agent.pk)
        pending = _pair(fields, agent.pending_tool_calls)
        position = agent.message_count + 1
        if fields["references"] and fields["references"][-1] >= position:
            raise InvalidInput(f"references must name earlier messages: positions below {position}.")
        counter = counter_for_model(agent.model)
        wire = wire_message(
            role=fields["role"],
            content=fields["content"],
            tool_calls=fields["tool_calls"],
            tool_call_id=fields["tool_call_id"],
        )
        tokens = wire_tokens(counter, wire)
        try:
            with transaction.atomic():
                message = Message.objects.create(
                    agent=agent,
                    position=position,
                    token_count=tokens,
                    token_encoding=counter.encoding.name,
                    tokens_approximate=counter.approximate,
                    history_offset=agent.history_tokens,
                    **fields,
                )
        except IntegrityError:
            raise Conflict("Another message was appended to this agent at the same time; send it again.") from None
        agent.message_count = position
        agent.conversation_tokens += tokens
        if not fields["pinned"]:
            agent.history_tokens += tokens
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
