"""The context tool: the messages for an agent's next model call and how they were chosen, as
GET /api/agents/<id>/context/ assembles them."""

from typing import Annotated, Any

from pydantic import ConfigDict, Field, StringConstraints

from agents.context import services
from agents.context.api.serializers import ContextSerializer
from agents.context.models import Strategy
from agents.context.services.agents import MAX_MODEL_CHARS, MAX_WINDOW_TURNS
from memsite.spaces.principals import Principal
from tools.definitions.refs import AgentRef, agent_of
from tools.logic.schemas import ToolArgs
from tools.registry import Tool


class AssembleArgs(ToolArgs):
    model_config = ConfigDict(
        json_schema_extra={"examples": [{"agent": "scout"}, {"agent": 3, "strategy": "sliding_window", "turns": 4}]}
    )

    agent: AgentRef
    model: Annotated[str, StringConstraints(min_length=1, max_length=MAX_MODEL_CHARS)] | None = Field(
        None, description="The model to fit; null: the agent's."
    )
    strategy: Strategy | None = Field(None, strict=False, description="How to cut; null: the agent's.")
    turns: int | None = Field(
        None, ge=1, le=MAX_WINDOW_TURNS, description="sliding_window: the turns kept; null: the agent's."
    )


def assemble_run(principal: Principal, args: AssembleArgs) -> dict[str, Any]:
    options = args.model_dump(exclude={"agent"}, exclude_none=True)
    assembled = services.context_build(agent=agent_of(principal, args.agent), **options)
    return ContextSerializer(assembled).data


TOOLS = [
    Tool(
        name="context_assemble",
        description="An agent's messages for its next model call, within its model's window, and a report of "
        "what each tier took and what was dropped or summarized. Nothing stored changes.",
        args=AssembleArgs,
        run=assemble_run,
        writes=False,
    ),
]
