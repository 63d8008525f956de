"""Serializers of the reasoning graphs API: the shared representations (input fields:
memsite.serializers)."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from agents.graphs import selectors
from agents.graphs.logic.snapshot import ACTIVE_BY_STATE
from agents.graphs.models import Graph, GraphNode, GraphOp
from memsite.llm.serializers import ProviderField, ProviderListSerializer


class GraphNodeCountsSerializer(serializers.Serializer):
    active = serializers.IntegerField()
    folded = serializers.IntegerField(help_text="Folded into a summary node.")
    flushed = serializers.IntegerField(help_text="Out of the context; their notes stand for their turns.")

    class Meta:
        ref_name = "GraphNodeCounts"


class GraphSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    task = serializers.CharField()
    agent = serializers.IntegerField(source="agent_id", allow_null=True)
    model = serializers.CharField(help_text="Whose encoding counts the context.")
    trigger_tokens = serializers.IntegerField(help_text="Past this many tokens in the context, recall runs.")
    target_tokens = serializers.IntegerField(help_text="Recall runs until the context is under this.")
    max_recalls = serializers.IntegerField(help_text="Recalls at most, each time the context passes the trigger.")
    protected_head = serializers.IntegerField(help_text="The first turns, always sent as they were.")
    protected_tail = serializers.IntegerField(help_text="The last turns, always sent as they were.")
    nodes = serializers.SerializerMethodField(help_text="Nodes by state.")
    turns = serializers.SerializerMethodField(help_text="Turns stored.")
    next_node_id = serializers.IntegerField()
    next_turn_id = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()

    class Meta:
        ref_name = "Graph"

    @extend_schema_field(GraphNodeCountsSerializer)
    def get_nodes(self, graph: Graph) -> dict[str, int]:
        return selectors.graph_node_counts(graph=graph)

    def get_turns(self, graph: Graph) -> int:
        return selectors.graph_turn_count(graph=graph)


class GraphNodeSerializer(serializers.Serializer):
    node_id = serializers.IntegerField(help_text="Numbers the graph's nodes from 1 (the task).")
    kind = serializers.CharField(help_text="task, subtask, evidence or summary.")
    thought = serializers.JSONField(help_text="A string, or notes: [{role, content}].")
    related_turn_ids = serializers.ListField(child=serializers.IntegerField(), help_text="The turns it stands for.")
    state = serializers.CharField(help_text="active, folded (into a summary) or flushed.")
    active = serializers.SerializerMethodField(help_text="The state as the seed's snapshot says it.")
    folded_into = serializers.IntegerField(allow_null=True, help_text="Folded nodes: the summary's node_id.")
    created_at = serializers.DateTimeField()

    class Meta:
        ref_name = "GraphNode"

    @extend_schema_field({"oneOf": [{"type": "boolean"}, {"type": "string", "enum": ["Flushed"]}]})
    def get_active(self, node: GraphNode) -> bool | str:
        return ACTIVE_BY_STATE[node.state]


class GraphNodeDetailSerializer(GraphNodeSerializer):
    """A node with seed 004's index queries by relationship: one layer nearer the task is a
    parent, one layer further a child, whichever way the edge points."""

    children = serializers.SerializerMethodField()
    parents = serializers.SerializerMethodField()
    path_to_root = serializers.SerializerMethodField(help_text="From the node up to the task, both included.")

    class Meta:
        ref_name = "GraphNodeDetail"

    @extend_schema_field(serializers.ListField(child=serializers.IntegerField()))
    def get_children(self, node: GraphNode) -> list[int]:
        return selectors.graph_children(graph=node.graph, node_id=node.node_id)

    @extend_schema_field(serializers.ListField(child=serializers.IntegerField()))
    def get_parents(self, node: GraphNode) -> list[int]:
        return selectors.graph_parents(graph=node.graph, node_id=node.node_id)

    @extend_schema_field(serializers.ListField(child=serializers.IntegerField()))
    def get_path_to_root(self, node: GraphNode) -> list[int]:
        return selectors.graph_path_to_root(graph=node.graph, node_id=node.node_id)


class GraphLeavesSerializer(serializers.Serializer):
    node_ids = serializers.ListField(child=serializers.IntegerField(), help_text="Active nodes with no active child.")

    class Meta:
        ref_name = "GraphLeaves"


class GraphOpSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    graph = serializers.IntegerField(source="graph_id")
    kind = serializers.CharField(help_text="create, memorize, recall or import.")
    status = serializers.CharField(help_text="queued, applied, rejected or failed.")
    rationale = serializers.CharField()
    error = serializers.CharField(help_text="Why it was rejected or failed; empty otherwise.")
    data = serializers.DictField(  # type: ignore[assignment]  # DRF pops declared fields off the class
        source="detail",
        help_text="What it was and what it did. memorize: turn_ids, and per step (an assistant turn and its "
        "result) its patch and node_ids or its error; recall: the operation, flushed, summaries, edges_left_out; "
        "import: the nodes and edges imported.",
    )
    tokens_before = serializers.IntegerField(allow_null=True, help_text="The context's tokens before it ran.")
    tokens_after = serializers.IntegerField(allow_null=True)
    created_at = serializers.DateTimeField()
    ended_at = serializers.DateTimeField(allow_null=True, help_text="Null while queued.")
    provider = ProviderField(model=GraphOp)

    class Meta:
        ref_name = "GraphOp"
        list_serializer_class = ProviderListSerializer


class GraphContextMessageSerializer(serializers.Serializer):
    role = serializers.CharField()
    content = serializers.CharField()

    class Meta:
        ref_name = "GraphContextMessage"


class GraphStandInSerializer(serializers.Serializer):
    node_id = serializers.IntegerField(help_text="A summary, or a flushed step whose notes are sent.")
    turn_ids = serializers.ListField(child=serializers.IntegerField(), help_text="The turns its message replaces.")
    tokens = serializers.IntegerField()

    class Meta:
        ref_name = "GraphStandIn"


class GraphContextSerializer(serializers.Serializer):
    """A `GraphContext` with its graph's budget: {"graph": ..., "context": ...}."""

    messages = GraphContextMessageSerializer(many=True, source="context.messages")
    tokens = serializers.IntegerField(source="context.tokens", help_text="The messages' tokens, counted as sent.")
    raw_turns = serializers.ListField(
        child=serializers.IntegerField(),
        source="context.raw_turns",
        help_text="The turns sent as they were.",
    )
    stand_ins = GraphStandInSerializer(
        many=True,
        source="context.stand_ins",
        help_text="The messages sent in place of turns, in order.",
    )
    model = serializers.CharField(source="graph.model")
    trigger_tokens = serializers.IntegerField(source="graph.trigger_tokens")
    target_tokens = serializers.IntegerField(source="graph.target_tokens")

    class Meta:
        ref_name = "GraphContext"
