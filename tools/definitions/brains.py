"""The brain tools: chat with an agent (its conversation gets both lines), and its brain's state,
as /api/agents/<id>/chat/ and /brain/ answer them."""

from typing import Annotated, Any

from pydantic import ConfigDict, Field, StringConstraints

from agents.brains import selectors, services
from agents.brains.api.serializers import BrainChatExchangeSerializer, BrainSerializer
from memsite.limits import wait_slots
from memsite.spaces.principals import Principal
from tools.definitions.refs import AgentRef, agent_of
from tools.logic.schemas import ToolArgs
from tools.registry import Tool


class ChatArgs(ToolArgs):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"agent": "scout", "text": "What are you working on?"},
                {"agent": 3, "text": "goal: Read the deploy notes"},
            ]
        }
    )

    agent: AgentRef
    text: Annotated[str, StringConstraints(min_length=1)] = Field(
        description="What the user says. `goal: ...` adds a goal instead of asking the LLM."
    )


class StateArgs(ToolArgs):
    model_config = ConfigDict(json_schema_extra={"examples": [{"agent": "scout"}]})

    agent: AgentRef


def chat_run(principal: Principal, args: ChatArgs) -> dict[str, Any]:
    agent = agent_of(principal, args.agent)
    # The reply is an LLM call made while the caller waits: it holds a slot for waiting, or is a 429.
    with wait_slots().hold_or_busy():
        exchange = services.chat_send(agent=agent, by=principal, text=args.text)
    return BrainChatExchangeSerializer(exchange).data


def state_run(principal: Principal, args: StateArgs) -> dict[str, Any]:
    return BrainSerializer(selectors.brain_state(agent=agent_of(principal, args.agent))).data


TOOLS = [
    Tool(
        name="brain_chat",
        description="Say something to an agent and get its reply (an LLM call that reads the agent's assembled "
        "context); both are appended to its conversation. `goal: ...` gives it a goal instead.",
        args=ChatArgs,
        run=chat_run,
        writes=True,
    ),
    Tool(
        name="brain_state",
        description="An agent's brain: its self-summary, plan, goals, emotions and hormones, counts, and whether "
        "and how often it ticks.",
        args=StateArgs,
        run=state_run,
        writes=False,
    ),
]
