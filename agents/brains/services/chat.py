"""Chat with an agent (seed 002's send-chat): the user's line is a message of the agent's
conversation, and the reply, drawn on the agent's assembled context, its facts and episodes and
the space's memory, citing them, is the next; `goal: ...` adds a goal instead. The user's line is
written before the LLM is asked, so a failed call loses nothing (`ChatFailed`). docs/brains.md."""

import re
from dataclasses import dataclass
from typing import Any

from agents.brains.logic import memory_json as mj
from agents.brains.logic.caps import cap
from agents.brains.logic.recall import EPISODE, FACT, NODE, MemoryItem, citations_kept
from agents.brains.models import Brain, Goal, RecordKind
from agents.brains.selectors.ticks import BrainView, brain_view
from agents.brains.services.brains import GOAL_CHARS, brain_writing, goal_create
from agents.brains.services.prompts import ChatReply, chat_prompt, relevant
from agents.context.models import Agent, Message, Role
from agents.context.selectors.assembly import TokenBudgetExceeded
from agents.context.services import message_append
from memory.index.retrieve import retrieve
from memsite.errors import Conflict, InvalidInput, ServiceError
from memsite.llm.errors import LLMError
from memsite.llm.gateway import complete
from memsite.llm.purposes import Purpose
from memsite.quotas.checks import llm_budget_require
from memsite.spaces.principals import Principal

GOAL_COMMAND = re.compile(r"^\s*goal\s*:\s*(?P<text>.*?)\s*$", re.IGNORECASE | re.DOTALL)
# What a reply may draw on, at most, before the window's budget cuts it: the facts most relevant
# to the message among the newest FACTS_READ, the newest episodes, and the best passages.
CHAT_FACTS, FACTS_READ, CHAT_EPISODES, CHAT_PASSAGES = 5, 200, 5, 5


class ChatFailed(ServiceError):
    """The LLM could not answer; the user's message is kept."""

    status = 502


@dataclass(frozen=True)
class ChatExchange:
    user_message: Message
    reply_message: Message
    goal: Goal | None = None  # the goal `goal: ...` added
    provider: str | None = None  # of the LLM call that wrote the reply; None when none did

    @property
    def citations(self) -> list[dict[str, str]]:
        return list(self.reply_message.data.get("citations", []))


def _checked(text: object) -> tuple[str, re.Match[str] | None]:
    """The message, stripped, and its `goal: ...` command if it is one; InvalidInput otherwise."""
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput("A chat message needs text.")
    limit = cap("entry_chars")
    if len(text) > limit:
        raise InvalidInput(f"A chat message is at most {limit} characters.")
    text = text.strip()
    command = GOAL_COMMAND.match(text)
    if command is not None:
        if not command["text"]:
            raise InvalidInput("Say the goal after 'goal:'.")
        if len(command["text"]) > GOAL_CHARS:
            raise InvalidInput(f"A goal is at most {GOAL_CHARS} characters.")
    return text, command


def _room_left(agent: Agent) -> None:
    """A conversation that has spent its token budget takes no more lines."""
    budget, spent = agent.conversation_token_budget, agent.conversation_tokens
    if budget is not None and spent >= budget:
        raise TokenBudgetExceeded(
            f"The conversation has spent its token budget: {spent} of {budget} tokens.",
            data={"reason": "conversation_budget", "conversation_tokens": spent, "conversation_token_budget": budget},
        )


def _user_says(agent: Agent, text: str) -> tuple[Message, Brain]:
    """The user's message, and the brain with it as the user model's last message."""
    said = message_append(agent=agent, role=Role.USER, content=text)
    with brain_writing(agent=agent) as write:
        write.set(last_user_message=text)
        item = mj.entry(RecordKind.USER_MESSAGE, text, said.created_at)
        write.record(kind=RecordKind.USER_MESSAGE, text=text, item=item, at=said.created_at)
    return said, write.brain


def _agent_says(agent: Agent, text: str, **data: Any) -> Message:
    """The reply; `data` (its citations, the provider that wrote it) is kept with it."""
    return message_append(agent=agent, role=Role.ASSISTANT, content=text, data=data)


def _goal_added(agent: Agent, said: Message, goal_text: str) -> ChatExchange:
    try:
        goal = goal_create(agent=agent, text=goal_text)
    except Conflict as exc:
        return ChatExchange(
            user_message=said, reply_message=_agent_says(agent, f"I could not add that goal: {exc.message}")
        )
    return ChatExchange(user_message=said, reply_message=_agent_says(agent, f"Goal added: {goal.text}"), goal=goal)


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
    """`by`'s message to the agent, appended to its conversation, and its reply, an LLM call
    charged to `by` that reads the agent's assembled context."""
    text, command = _checked(text)
    if command is None:
        llm_budget_require(by=by)
    _room_left(agent)
    said, brain = _user_says(agent, text)
    if command is not None:
        return _goal_added(agent, said, command["text"])

    view = brain_view(brain=brain, facts=FACTS_READ, episodes=CHAT_EPISODES)
    prompt = chat_prompt(agent=agent, view=view, said=said, memory=_remembered(agent, view, text, by=by))
    try:
        completion = complete(
            purpose=Purpose.CHAT,
            messages=prompt.messages,
            reading=prompt.reading,
            schema=ChatReply,
            served=said,
            by=by,
            model=agent.model,
            max_tokens=agent.reserved_output_tokens,
        )
    except LLMError as exc:
        raise ChatFailed(
            f"The agent could not answer: the LLM call failed ({exc.reason.value}: {exc.message}). "
            "Your message is kept in the conversation.",
            data={"reason": exc.reason.value, "user_message": said.position},
        ) from None
    citations = citations_kept(completion.value.citations, prompt.reading.given)
    reply = _agent_says(agent, completion.value.reply.strip(), citations=citations, provider=completion.provider)
    return ChatExchange(user_message=said, reply_message=reply, provider=completion.provider)
