"""Chat with an agent (seed 002's send-chat): the user's message joins the brain's chat history
and gets a reply drawn on the brain's facts and episodes and the space's memory, citing them;
`goal: ...` adds a goal instead. The user's line is written before the LLM is asked, so a failed
call loses nothing (`ChatFailed`). Explained in docs/brains.md."""

import re
from dataclasses import dataclass
from typing import Any

from django.utils import timezone

from agents.brains.logic import memory_json as mj
from agents.brains.logic.caps import cap
from agents.brains.logic.recall import EPISODE, FACT, NODE, MemoryItem, citations_kept
from agents.brains.models import Goal, Record, RecordKind
from agents.brains.selectors.ticks import BrainView, brain_view
from agents.brains.services.brains import GOAL_CHARS, brain_writing, goal_create
from agents.brains.services.prompts import ChatReply, chat_messages, relevant
from agents.context.models import Agent
from memory.index.retrieve import retrieve
from memsite.errors import Conflict, InvalidInput, ServiceError
from memsite.llm.errors import LLMError
from memsite.llm.gateway import complete
from memsite.llm.purposes import Purpose
from memsite.quotas.checks import llm_budget_require
from memsite.spaces.principals import Principal

GOAL_COMMAND = re.compile(r"^\s*goal\s*:\s*(?P<text>.*?)\s*$", re.IGNORECASE | re.DOTALL)
CHAT_LINES = 20  # of the history a reply may see, newest first, as the window allows
# What a reply may draw on, at most, before the window's budget cuts it: the facts most relevant
# to the message among the newest FACTS_READ, the newest episodes, and the best passages.
CHAT_FACTS, FACTS_READ, CHAT_EPISODES, CHAT_PASSAGES = 5, 200, 5, 5


class ChatFailed(ServiceError):
    """The LLM could not answer; the user's line is kept."""

    status = 502


@dataclass(frozen=True)
class ChatExchange:
    user_line: Record
    reply_line: Record
    goal: Goal | None = None  # the goal `goal: ...` added
    provider: str | None = None  # of the LLM call that wrote the reply; None when none did

    @property
    def citations(self) -> list[dict[str, str]]:
        return list(self.reply_line.data.get("citations", [])) if isinstance(self.reply_line.data, dict) else []


def _line(write, *, role: str, text: str, at, **fields: Any) -> Record:
    item = mj.entry(RecordKind.CHAT, text, at, role=role, **fields)
    return write.record(kind=RecordKind.CHAT, text=text, item=item, at=at)


def _user_says(agent: Agent, text: str) -> Record:
    now = timezone.now()
    with brain_writing(agent=agent) as write:
        line = _line(write, role="user", text=text, at=now)
        write.set(last_user_message=text)
        item = mj.entry(RecordKind.USER_MESSAGE, text, now)
        write.record(kind=RecordKind.USER_MESSAGE, text=text, item=item, at=now)
    return line


def _agent_says(agent: Agent, text: str, **fields: Any) -> Record:
    """The reply line; `fields` (its citations, the provider that wrote it) join its entry."""
    with brain_writing(agent=agent) as write:
        return _line(write, role="assistant", text=text, at=timezone.now(), **fields)


def _remembered(agent: Agent, view: BrainView, text: str, *, by: Principal) -> list[MemoryItem]:
    """What the reply may draw on, best first: the facts relevant to `text`, the passages the
    space's memory retrieves for it (as POST /api/retrieve/ does, charged alike), the newest
    episodes."""
    facts = [view.facts[at] for at in relevant(text, [fact.text for fact in view.facts], limit=CHAT_FACTS)]
    hits = retrieve(query=text, by=by, k=CHAT_PASSAGES)
    episodes = view.episodes[-CHAT_EPISODES:][::-1]
    return [
        *(MemoryItem(kind=FACT, ref=str(fact.seq), text=fact.text) for fact in facts),
        *(MemoryItem(kind=NODE, ref=hit.node_id, text=hit.snippet, label=hit.path) for hit in hits),
        *(
            MemoryItem(kind=EPISODE, ref=str(episode.seq), text=episode.text, label=str(episode.data.get("type", "")))
            for episode in episodes
        ),
    ]


def chat_send(*, agent: Agent, text: str, by: Principal) -> ChatExchange:
    """`by`'s message to the agent, and its reply, an LLM call charged to `by`."""
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
    if command is None:
        llm_budget_require(by=by)

    user_line = _user_says(agent, text)
    if command is not None:
        try:
            goal = goal_create(agent=agent, text=command["text"])
        except Conflict as exc:
            return ChatExchange(
                user_line=user_line, reply_line=_agent_says(agent, f"I could not add that goal: {exc.message}")
            )
        return ChatExchange(user_line=user_line, reply_line=_agent_says(agent, f"Goal added: {goal.text}"), goal=goal)

    # The brain as that write left it.
    view = brain_view(brain=user_line.brain, chat=CHAT_LINES + 1, facts=FACTS_READ, episodes=CHAT_EPISODES)
    history = [record for record in view.chat if record.pk != user_line.pk]
    memory = _remembered(agent, view, text, by=by)
    prompt = chat_messages(agent=agent, view=view, history=history, text=text, memory=memory)
    try:
        completion = complete(
            purpose=Purpose.CHAT,
            messages=prompt.messages,
            schema=ChatReply,
            served=user_line,
            by=by,
            model=agent.model,
            max_tokens=agent.reserved_output_tokens,
        )
    except LLMError as exc:
        raise ChatFailed(
            f"The agent could not answer: the LLM call failed ({exc.reason.value}: {exc.message}). "
            "Your message is kept in the chat.",
            data={"reason": exc.reason.value, "user_line": user_line.seq},
        ) from None
    reply = completion.value
    line = _agent_says(
        agent,
        reply.reply.strip(),
        citations=citations_kept(reply.citations, prompt.given),
        provider=completion.provider,
    )
    return ChatExchange(user_line=user_line, reply_line=line, provider=completion.provider)
