"""Reasoning graphs in Django's admin, read and nothing more: memorize, recall and imports are
their only writes, each validated whole and audited as an operation, so nodes, edges, turns and
operations are shown read-only, and a graph links to its page on the dashboard."""

from django.contrib import admin
from django.db.models import Count, QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html
from django.utils.text import Truncator

from agents.graphs.logic.drawing import thought_plain
from agents.graphs.models import Graph, GraphEdge, GraphNode, GraphOp, Turn
from memsite.admin import ReadOnlyAdmin, ReadOnlyInline


class GraphNodeInline(ReadOnlyInline):
    model = GraphNode
    fields = ("node_id", "kind", "state", "folded_into", "excerpt", "related_turn_ids")
    readonly_fields = fields
    ordering = ("node_id",)

    @admin.display(description="thought")
    def excerpt(self, node: GraphNode) -> str:
        return Truncator(thought_plain(node.thought)).chars(120)


class GraphEdgeInline(ReadOnlyInline):
    model = GraphEdge
    fields = ("src", "dst", "rationale")
    readonly_fields = fields


@admin.register(Graph)
class GraphAdmin(ReadOnlyAdmin):
    list_display = (
        "id",
        "excerpt",
        "agent",
        "model",
        "node_count",
        "op_count",
        "trigger_tokens",
        "target_tokens",
        "updated_at",
    )
    list_select_related = ("agent",)
    search_fields = ("task", "agent__name")
    fields = (
        "task",
        "agent",
        "model",
        "trigger_tokens",
        "target_tokens",
        "max_recalls",
        "protected_head",
        "protected_tail",
        "next_node_id",
        "next_turn_id",
        "lease_until",
        "links",
        "created_at",
        "updated_at",
    )
    readonly_fields = fields
    inlines = (GraphNodeInline, GraphEdgeInline)
    list_per_page = 50

    def get_queryset(self, request: HttpRequest) -> QuerySet[Graph]:
        return (
            super()
            .get_queryset(request)
            .annotate(node_total=Count("nodes", distinct=True), op_total=Count("ops", distinct=True))
        )

    @admin.display(description="task")
    def excerpt(self, graph: Graph) -> str:
        return Truncator(graph.task).chars(80)

    @admin.display(description="nodes", ordering="node_total")
    def node_count(self, graph: Graph) -> int:
        return graph.node_total  # type: ignore[attr-defined]  # annotated by get_queryset

    @admin.display(description="operations", ordering="op_total")
    def op_count(self, graph: Graph) -> int:
        return graph.op_total  # type: ignore[attr-defined]  # annotated by get_queryset

    @admin.display(description="see also")
    def links(self, graph: Graph) -> str:
        return format_html(
            '<a href="{}?graph__id__exact={}">{} operations</a> · <a href="{}?graph__id__exact={}">turns</a> · '
            '<a href="{}">the graph\'s page</a>',
            reverse("admin:graphs_graphop_changelist"),
            graph.pk,
            graph.op_total,  # type: ignore[attr-defined]  # annotated by get_queryset
            reverse("admin:graphs_turn_changelist"),
            graph.pk,
            reverse("agents:graph_detail", args=[graph.pk]),
        )


@admin.register(GraphOp)
class GraphOpAdmin(ReadOnlyAdmin):
    list_display = (
        "id",
        "graph",
        "kind",
        "status",
        "excerpt",
        "tokens_before",
        "tokens_after",
        "created_at",
    )
    list_filter = ("kind", "status")
    list_select_related = ("graph",)
    search_fields = ("rationale", "error")
    ordering = ("-id",)
    show_full_result_count = False

    @admin.display(description="rationale")
    def excerpt(self, op: GraphOp) -> str:
        return Truncator(op.rationale).chars(80)


@admin.register(Turn)
class TurnAdmin(ReadOnlyAdmin):
    list_display = ("turn_id", "graph", "role", "token_count", "excerpt", "created_at")
    list_filter = ("role",)
    list_select_related = ("graph",)
    ordering = ("graph", "-turn_id")
    show_full_result_count = False

    @admin.display(description="content")
    def excerpt(self, turn: Turn) -> str:
        return Truncator(turn.content).chars(80)
