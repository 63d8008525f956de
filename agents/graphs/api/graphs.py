"""The REST API of reasoning graphs (seed 004, MemoBrain): graphs, memorize and recall, the
rebuilt context, nodes and index queries, operations and snapshots. Views only translate HTTP:
reads go to `agents.graphs.selectors`, writes to `agents.graphs.services`.
Explained in docs/graphs.md."""

import json
from typing import Any

from django.conf import settings
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    inline_serializer,
)
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.graphs import selectors as graph_selectors
from agents.graphs import services
from agents.graphs.api.serializers import (
    GraphContextSerializer,
    GraphLeavesSerializer,
    GraphNodeDetailSerializer,
    GraphNodeSerializer,
    GraphOpSerializer,
    GraphSerializer,
)
from agents.graphs.models import Graph, NodeKind, NodeState
from agents.graphs.services.graphs import MAX_MESSAGES, MAX_TASK_CHARS, MAX_TURN_CHARS
from agents.http import agent_of
from memsite.api import BoundedJSONParser, JSONParser, json_body_limit, read_body
from memsite.errors import InvalidInput
from memsite.limits import max_body_bytes
from memsite.pagination import OrderedPagination
from memsite.schema import page_parameters, quota_refusals, refusals
from memsite.serializers import StrictCharField, StrictInputSerializer, StrictIntegerField
from memsite.spaces.principals import principal_of

TAG = "graphs"
GRAPH_ID = OpenApiParameter("graph_id", OpenApiTypes.INT, OpenApiParameter.PATH, description="The graph's id.")
NODE_ID = OpenApiParameter(
    "node_id", OpenApiTypes.INT, OpenApiParameter.PATH, description="The node's id within the graph (the task is 1)."
)

MEMORIZE_TOO_LARGE = inline_serializer(
    "GraphMemorizeTooLarge",
    fields={
        "detail": serializers.CharField(),
        "steps": serializers.IntegerField(required=False, help_text="The steps the messages hold."),
        "max_steps": serializers.IntegerField(required=False, help_text="MEMSITE_GRAPH_MEMORIZE_MAX_STEPS."),
    },
)


errors = refusals(
    {
        404: "No such graph, agent or node of the graph.",
        411: "The snapshot was sent without a Content-Length.",
        413: "The snapshot is larger than MEMSITE_GRAPH_SNAPSHOT_MAX_BYTES.",
    }
)


def graph_of(request: Request, graph_id: int) -> Graph:
    """The graph of the request's space; another space's is a 404, as a missing one."""
    return graph_selectors.graph_get(space=principal_of(request).space, graph_id=graph_id)


def _page_of(serializer: type[serializers.Serializer]) -> Any:
    return inline_serializer(
        f"{serializer.Meta.ref_name}Page",  # type: ignore[attr-defined]  # each page's serializer names itself
        fields={
            "next": serializers.URLField(allow_null=True, help_text="The next page; null on the last."),
            "previous": serializers.URLField(allow_null=True, help_text="The page before; null on the first."),
            "results": serializer(many=True),
        },
    )


def _choice(choices: list[str], **kwargs: Any) -> serializers.ChoiceField:
    listed = ", ".join(choices)
    return serializers.ChoiceField(
        choices=choices, error_messages={"invalid_choice": f"Must be one of {listed}; got {{input!r}}."}, **kwargs
    )


# -- the graph ---------------------------------------------------------------------------------


class GraphCreateApi(APIView):
    class InputSerializer(StrictInputSerializer):
        task = StrictCharField(max_length=MAX_TASK_CHARS, help_text="The task: node 1 of the graph.")
        agent = StrictIntegerField(
            required=False, allow_null=True, help_text="The agent whose steps it keeps; its model is the default."
        )
        model = StrictCharField(
            required=False,
            max_length=128,
            help_text="Counts the context's tokens. Default: the agent's model, else the memorize model.",
        )
        trigger_tokens = StrictIntegerField(
            required=False,
            min_value=1,
            help_text="Past this many tokens in the context, recall runs. Default: half the model's window, "
            "at most MEMSITE_GRAPH_TRIGGER_TOKENS.",
        )
        target_tokens = StrictIntegerField(
            required=False, min_value=1, help_text="Below the trigger; default: 60% of it."
        )

        class Meta:
            ref_name = "GraphCreate"

    OutputSerializer = GraphSerializer

    @extend_schema(
        tags=[TAG],
        operation_id="graph_create",
        summary="Create a reasoning graph for a task",
        request=InputSerializer,
        responses={201: GraphSerializer, **errors(400, 404)},
    )
    def post(self, request: Request) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        agent_id = data.pop("agent", None)
        agent = agent_of(request, agent_id) if agent_id is not None else None
        graph = services.graph_create(space=principal_of(request).space, agent=agent, **data)
        response = Response(self.OutputSerializer(graph).data, status=status.HTTP_201_CREATED)
        response["Location"] = reverse("graphs-api:graph-detail", args=[graph.pk])
        return response


class GraphDetailApi(APIView):
    OutputSerializer = GraphSerializer

    @extend_schema(
        tags=[TAG],
        operation_id="graph_read",
        summary="Read a reasoning graph: its task, budget, node counts and next ids",
        parameters=[GRAPH_ID],
        responses={200: GraphSerializer, **errors(404)},
    )
    def get(self, request: Request, graph_id: int) -> Response:
        return Response(self.OutputSerializer(graph_of(request, graph_id)).data)


# -- memorize and recall -----------------------------------------------------------------------


class GraphTurnInputSerializer(StrictInputSerializer):
    role = StrictCharField(
        max_length=64, help_text="assistant, user, tool, system, or a participant such as Agent_Analyst."
    )
    content = StrictCharField(allow_blank=True, trim_whitespace=False, max_length=MAX_TURN_CHARS)

    class Meta:
        ref_name = "GraphTurn"


# Up to MAX_MESSAGES turns of MAX_TURN_CHARS each: the JSON writes' bound, as a node's content's.
@max_body_bytes(json_body_limit)
class GraphMemorizeApi(APIView):
    class InputSerializer(StrictInputSerializer):
        messages = GraphTurnInputSerializer(  # type: ignore[call-arg]  # DRF hands the lengths to the ListSerializer
            many=True,
            min_length=1,
            max_length=MAX_MESSAGES,
            help_text="The agent's newest turns, in order: each action, then its result.",
        )

        class Meta:
            ref_name = "GraphMemorize"

    OutputSerializer = GraphOpSerializer
    parser_classes = [BoundedJSONParser]  # JSON only: a form's fields hold no more than 1 MiB

    @extend_schema(
        tags=[TAG],
        operation_id="graph_memorize",
        summary="Store the agent's newest turns and queue their memorizing",
        description="The turns are stored at once, with ids that run on within the graph (the operation's "
        "data.turn_ids). A worker then asks the LLM for a patch per step, applies each whole or not at all, "
        "and recalls if the context has passed the trigger; follow the operation in /ops/.",
        parameters=[GRAPH_ID],
        request=InputSerializer,
        responses={
            202: GraphOpSerializer,
            **errors(400, 404, 503),
            413: OpenApiResponse(
                MEMORIZE_TOO_LARGE,
                description="The messages hold more steps than MEMSITE_GRAPH_MEMORIZE_MAX_STEPS (each step is "
                "one LLM call; steps and max_steps say how many), or the Content-Length announces more than "
                "the operation reads; nothing was stored.",
            ),
            **quota_refusals(),
        },
    )
    def post(self, request: Request, graph_id: int) -> Response:
        graph = graph_of(request, graph_id)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        op = services.graph_memorize(graph=graph, by=principal_of(request), **serializer.validated_data)
        return Response(self.OutputSerializer(op).data, status=status.HTTP_202_ACCEPTED)


class GraphRecallApi(APIView):
    OutputSerializer = GraphOpSerializer

    @extend_schema(
        tags=[TAG],
        operation_id="graph_recall",
        summary="Queue a recall: flush and fold the graph's nodes, whatever the context's size",
        parameters=[GRAPH_ID],
        request=None,
        responses={202: GraphOpSerializer, **errors(404, 503), **quota_refusals()},
    )
    def post(self, request: Request, graph_id: int) -> Response:
        graph = graph_of(request, graph_id)
        op = services.graph_recall(graph=graph, by=principal_of(request))
        return Response(self.OutputSerializer(op).data, status=status.HTTP_202_ACCEPTED)


class GraphContextApi(APIView):
    OutputSerializer = GraphContextSerializer

    @extend_schema(
        tags=[TAG],
        operation_id="graph_context",
        summary="The agent's messages rebuilt from the graph, and their tokens",
        description="The stored turns in order, where the turns of flushed steps give way to their notes "
        "and those of folded steps to their summary (stand_ins); the first and last turns are always "
        "sent as they were (raw_turns). Nothing stored changes.",
        parameters=[GRAPH_ID],
        responses={200: GraphContextSerializer, **errors(404)},
    )
    def get(self, request: Request, graph_id: int) -> Response:
        graph = graph_of(request, graph_id)
        context = graph_selectors.graph_context(graph=graph)
        return Response(self.OutputSerializer({"graph": graph, "context": context}).data)


# -- nodes and seed 004's index queries --------------------------------------------------------


class GraphNodeListApi(APIView):
    class FilterSerializer(StrictInputSerializer):
        kind = _choice(NodeKind.values, required=False)
        state = _choice(NodeState.values, required=False, help_text="folded: into a summary.")
        cursor = serializers.CharField(required=False, help_text="From a page's next/previous link.")
        page_size = serializers.IntegerField(
            required=False,
            min_value=1,
            max_value=OrderedPagination.max_page_size,
            help_text=f"The default is {OrderedPagination.default_page_size}.",
        )

        class Meta:
            ref_name = "GraphNodesQuery"

    OutputSerializer = GraphNodeSerializer

    @extend_schema(
        tags=[TAG],
        operation_id="graph_nodes",
        summary="The graph's nodes in id order, by kind and state, a page at a time",
        parameters=[GRAPH_ID, FilterSerializer],
        responses={200: _page_of(GraphNodeSerializer), **errors(400, 404)},
    )
    def get(self, request: Request, graph_id: int) -> Response:
        graph = graph_of(request, graph_id)
        query = self.FilterSerializer(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        nodes = graph_selectors.graph_nodes(
            graph=graph, kind=query.validated_data.get("kind"), state=query.validated_data.get("state")
        )
        paginator = OrderedPagination("node_id")
        page = paginator.paginate_queryset(nodes, request, view=self)
        return paginator.get_paginated_response(self.OutputSerializer(page, many=True).data)


class GraphNodeDetailApi(APIView):
    OutputSerializer = GraphNodeDetailSerializer

    @extend_schema(
        tags=[TAG],
        operation_id="graph_node",
        summary="One node with its children, parents and path to the task",
        description="Parents and children are by layer: a node's layer is its distance from the task over "
        "edges in either direction (decompose edges point down from the task, support edges up from the "
        "evidence).",
        parameters=[GRAPH_ID, NODE_ID],
        responses={200: GraphNodeDetailSerializer, **errors(404)},
    )
    def get(self, request: Request, graph_id: int, node_id: int) -> Response:
        node = graph_selectors.graph_node_get(graph=graph_of(request, graph_id), node_id=node_id)
        return Response(self.OutputSerializer(node).data)


class GraphLeavesApi(APIView):
    OutputSerializer = GraphLeavesSerializer

    @extend_schema(
        tags=[TAG],
        operation_id="graph_leaves",
        summary="The graph's leaves: active nodes with no active child",
        parameters=[GRAPH_ID],
        responses={200: GraphLeavesSerializer, **errors(404)},
    )
    def get(self, request: Request, graph_id: int) -> Response:
        leaves = graph_selectors.graph_leaves(graph=graph_of(request, graph_id))
        return Response(self.OutputSerializer({"node_ids": leaves}).data)


# -- operations --------------------------------------------------------------------------------


class GraphOpListApi(APIView):
    OutputSerializer = GraphOpSerializer

    @extend_schema(
        tags=[TAG],
        operation_id="graph_ops",
        summary="The graph's operations, newest first, a page at a time",
        description="Every create, memorize, recall and import: queued, applied, rejected (with the reason "
        "in error) or failed, with the context's tokens before and after.",
        parameters=[GRAPH_ID, *page_parameters(OrderedPagination)],
        responses={200: _page_of(GraphOpSerializer), **errors(400, 404)},
    )
    def get(self, request: Request, graph_id: int) -> Response:
        ops = graph_selectors.graph_ops(graph=graph_of(request, graph_id))
        paginator = OrderedPagination("-id")
        page = paginator.paginate_queryset(ops, request, view=self)
        return paginator.get_paginated_response(self.OutputSerializer(page, many=True).data)


# -- snapshots ---------------------------------------------------------------------------------


def read_snapshot(request: Request) -> Any:
    """The request body parsed as JSON, whatever its content type."""
    body = read_body(request, what="snapshot", limit=settings.MEMSITE_GRAPH_SNAPSHOT_MAX_BYTES)
    try:
        return json.loads(body)
    except RecursionError:
        raise InvalidInput("The snapshot is nested too deeply.") from None
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError among them
        raise InvalidInput(f"The snapshot is not valid JSON: {exc}.") from None


# One URL, two operations: each method is one operation with its own serializers.
@max_body_bytes(lambda: settings.MEMSITE_GRAPH_SNAPSHOT_MAX_BYTES)
class GraphSnapshotApi(APIView):
    parser_classes = [JSONParser]  # what the schema shows; the body is read by read_snapshot
    ImportOutputSerializer = GraphOpSerializer

    @extend_schema(
        tags=[TAG],
        operation_id="graph_snapshot_export",
        summary="The graph's nodes and edges as seed 004's JSON snapshot",
        description='{"nodes": {"<id>": {node_id, kind, thought, related_turn_ids, active}}, '
        '"edges": [{src, dst, rationale}]}; active is true, false (folded) or "Flushed".',
        parameters=[GRAPH_ID],
        responses={(200, "application/json"): OpenApiResponse(OpenApiTypes.OBJECT), **errors(404)},
    )
    def get(self, request: Request, graph_id: int) -> Response:
        return Response(graph_selectors.graph_snapshot(graph=graph_of(request, graph_id)))

    @extend_schema(
        tags=[TAG],
        operation_id="graph_snapshot_import",
        summary="Replace the graph's nodes and edges with a snapshot's",
        description="Seed 004's format, as MemoBrain's save_memory writes it; node ids may be numbers "
        "or numeric strings, thoughts strings or notes (their other keys kept). Edges keep their "
        "order, repeats, null rationales, cycles and self-loops, so the export loads in MemoBrain "
        "as the same graph. The snapshot is checked whole first (one task node, every edge between "
        "its nodes); a refused one changes nothing. The graph's turns stay. At most "
        "MEMSITE_GRAPH_SNAPSHOT_MAX_BYTES (20 MiB by default).",
        parameters=[GRAPH_ID],
        request=OpenApiTypes.OBJECT,
        responses={200: GraphOpSerializer, **errors(400, 404, 411, 413)},
    )
    def put(self, request: Request, graph_id: int) -> Response:
        graph = graph_of(request, graph_id)
        op = services.graph_snapshot_import(graph=graph, document=read_snapshot(request))
        return Response(self.ImportOutputSerializer(op).data)
