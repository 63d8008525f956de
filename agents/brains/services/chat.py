"""Chat with an agent (seed 002's send-chat): the user's message joins the brain's chat history
and gets a reply; `goal: ...` adds a goal instead. The user's line is written before the LLM is
asked, so a failed call loses nothing (`ChatFailed`). Explained in docs/brains.md."""

import re
from dataclasses import dataclass
from typing import Any

from django.utils import timezone

from agents.brains.logic import memory_json as mj
from agents.brains.logic.caps import cap
from agents.brains.models import Goal, Record, RecordKind
from agents.brains.selectors.ticks import brain_view
from agents.brains.services.brains import GOAL_CHARS, brain_writing, goal_create
from agents.brains.services.prompts import ChatReply, chat_messages
from agents.context.models import Agent
from memsite.errors import Conflict, InvalidInput, ServiceError
from memsite.llm.errors import LLMError
from memsite.llm.gateway import complete
from memsite.llm.purposes import Purpose
from memsite.quotas.checks import acting_user_id, llm_budget_require
from memsite.spaces.models import ApiToken

GOAL_COMMAND = re.compile(r"^\s*goal\s*:\s*(?P<text>.*?)\s*$", re.IGNORECASE | re.DOTALL)
CHAT_LINES = 20  # of the history a reply may see, newest first, as the window allows


class ChatFailed(ServiceError):
    """The LLM could not answer; the user's line is kept."""

    status = 502


@dataclass(frozen=True)
class ChatExchange:
    user_line: Record
    reply_line: Record
    goal: Goal | None = None  # the goal `goal: ...` added


def _line(write, *, role: str, text: str, at) -> Record:
    return write.record(kind=RecordKind.CHAT, text=text, item=mj.entry(RecordKind.CHAT, text, at, role=role), at=at)


def _user_says(agent: Agent, text: str) -> Record:
    now = timezone.now()
    with brain_writing(agent=agent) as write:
        line = _line(write, role="user", text=text, at=now)
        write.set(last_user_message=text)
        item = mj.entry(RecordKind.USER_MESSAGE, text, now)
        write.record(kind=RecordKind.USER_MESSAGE, text=text, item=item, at=now)
    return line


def _agent_says(agent: Agent, text: str) -> Record:
    with brain_writing(agent=agent) as write:
        return _line(write, role="assistant", text=text, at=timezone.now())


def chat_send(*, agent: Agent, text: str, user: Any = None, token: ApiToken | None = None) -> ChatExchange:
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput("A chat message needs text.")
    limit = cap("entry_chars")
    if len(text) > limit:
        raise InvalidInput(f"A chat message is at most {limit} characters.")
    text = text.strip()
    command = GOAL_COMMAND.match(text)
    if command is not None:
        goal_text = command["text"]
        if not goal_text:
            raise InvalidInput("Say the goal after 'goal:'.")
        if len(goal_text) > GOAL_CHARS:
            raise InvalidInput(f"A goal is at most {GOAL_CHARS} characters.")
    user_id = acting_user_id(user)
    if command is None:
        llm_budget_require(user_id=user_id, space=agent.space, token=token)

    user_line = _user_says(agent, text)
    if command is not None:
        try:
            goal = goal_create(agent=agent, text=command["text"])
        except Conflict as exc:
            return ChatExchange(
                user_line=user_line, reply_line=_agent_says(agent, f"I could not add that goal: {exc.message}")
            )
        return ChatExchange(user_line=user_line, reply_line=_agent_says(agent, f"Goal added: {goal.text}"), goal=goal)

    view = brain_view(brain=user_line.brain, chat=CHAT_LINES + 1)  # the brain as that write left it
    history = [record for record in view.chat if record.pk != user_line.pk]
    messages = chat_messages(agent=agent, view=view, history=history, text=text)
    try:
        completion = complete(
            purpose=Purpose.CHAT,
            messages=messages,
            schema=ChatReply,
            served=user_line,
            user_id=user_id,
            space_id=agent.space_id,
            token_id=token.pk if token is not None else None,
            model=agent.model,
            max_tokens=agent.reserved_output_tokens,
        )
    except LLMError as exc:
        raise ChatFailed(
            f"The agent could not answer: the LLM call failed ({exc.reason.value}: {exc.message}). "
            "Your message is kept in the chat.",
            data={"reason": exc.reason.value, "user_line": user_line.seq},
        ) from None
    return ChatExchange(user_line=user_line, reply_line=_agent_says(agent, completion.value.reply.strip()))
