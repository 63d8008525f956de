"""The reasoning graph tools: an agent's newest turns memorized, a recall, and the context
rebuilt from the graph, as /api/graphs/<id>/memorize/, /recall/ and /context/ do them."""

from typing import Annotated, Any

from pydantic import ConfigDict, Field, StringConstraints
from rest_framework import serializers

from agents.graphs import selectors, services
from agents.graphs.api.serializers import GraphContextSerializer, GraphOpSerializer
from agents.graphs.models import Graph, GraphOp
from agents.graphs.services.graphs import MAX_MESSAGES, MAX_TURN_CHARS
from memsite.spaces.principals import Principal
from tools.logic.schemas import ToolArgs
from tools.registry import Tool

GraphId = Annotated[int, Field(description="The reasoning graph's id.")]


class Turn(ToolArgs):
    role: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=64)] = Field(
        description="assistant, user, tool, system, or a participant such as Agent_Analyst."
    )
    content: Annotated[str, StringConstraints(max_length=MAX_TURN_CHARS)]


class MemorizeArgs(ToolArgs):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "graph": 1,
                    "messages": [
                        {"role": "assistant", "content": "I look up the deploy service."},
                        {"role": "tool", "content": "It listens on port 8080."},
                    ],
                }
            ]
        }
    )

    graph: GraphId
    messages: list[Turn] = Field(
        min_length=1, max_length=MAX_MESSAGES, description="The newest turns, in order: each action, then its result."
    )


class GraphArgs(ToolArgs):
    model_config = ConfigDict(json_schema_extra={"examples": [{"graph": 1}]})

    graph: GraphId


def graph_of(principal: Principal, graph_id: int) -> Graph:
    return selectors.graph_get(space=principal.space, graph_id=graph_id)


def _op(op: GraphOp) -> dict[str, Any]:
    # Typed as any serializer: GraphOpSerializer declares a field named `data`, which hides the property from mypy.
    serializer: serializers.Serializer = GraphOpSerializer(op)
    return serializer.data


def memorize_run(principal: Principal, args: MemorizeArgs) -> dict[str, Any]:
    messages = [turn.model_dump() for turn in args.messages]
    graph = graph_of(principal, args.graph)
    return _op(services.graph_memorize(graph=graph, messages=messages, by=principal))


def recall_run(principal: Principal, args: GraphArgs) -> dict[str, Any]:
    graph = graph_of(principal, args.graph)
    return _op(services.graph_recall(graph=graph, by=principal))


def context_run(principal: Principal, args: GraphArgs) -> dict[str, Any]:
    graph = graph_of(principal, args.graph)
    return GraphContextSerializer({"graph": graph, "context": selectors.graph_context(graph=graph)}).data


TOOLS = [
    Tool(
        name="graph_memorize",
        description="Store an agent's newest turns in its reasoning graph and queue their memorizing; the "
        "operation's status is in the answer.",
        args=MemorizeArgs,
        run=memorize_run,
        writes=True,
    ),
    Tool(
        name="graph_recall",
        description="Queue a recall of a reasoning graph: its finished steps flushed to notes or folded into "
        "summaries, so the context rebuilt from it shrinks.",
        args=GraphArgs,
        run=recall_run,
        writes=True,
    ),
    Tool(
        name="graph_context",
        description="The agent's messages rebuilt from its reasoning graph, where flushed and folded steps give way "
        "to their notes and summaries, and their tokens.",
        args=GraphArgs,
        run=context_run,
        writes=False,
    ),
]
