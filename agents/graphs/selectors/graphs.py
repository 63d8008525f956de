"""Reads of reasoning graphs: the context rebuilt from them, and seed 004's index queries."""

from datetime import datetime

from django.db.models import Count, Q, QuerySet

from agents.graphs.logic.context import GraphContext, NodeRow, TurnRow
from agents.graphs.logic.context import graph_context as rebuild
from agents.graphs.logic.snapshot import snapshot_document
from agents.graphs.models import Graph, GraphEdge, GraphNode, GraphOp, NodeKind, NodeState, Turn
from memsite.errors import NotFound
from memsite.llm.tokens import counter_for_model
from memsite.spaces.models import Space
from memsite.spaces.principals import Principal

NODE_COLUMNS = ("node_id", "kind", "thought", "related_turn_ids", "state", "folded_into")


def graph_get(*, space: Space, graph_id: int) -> Graph:
    """The graph of `space` with this id; another space's is not found, as a missing one."""
    graph = Graph.objects.filter(pk=graph_id, space=space).first()
    if graph is None:
        raise NotFound(f"No graph {graph_id}.")
    return graph


def graph_list(*, space: Space, agent_id: int | None = None) -> QuerySet[Graph]:
    """The space's graphs, newest first, with their nodes counted (`node_total`, `active_total`)."""
    graphs = Graph.objects.filter(space=space).select_related("agent").order_by("-created_at")
    if agent_id is not None:
        graphs = graphs.filter(agent_id=agent_id)
    return graphs.annotate(
        node_total=Count("nodes"), active_total=Count("nodes", filter=Q(nodes__state=NodeState.ACTIVE))
    )


def graph_op_counts(*, graph: Graph, queued_since: datetime) -> dict[str, int]:
    """The graph's operations: in all, ended, queued, and queued since `queued_since`."""
    queued = Q(status=GraphOp.Status.QUEUED)
    return GraphOp.objects.filter(graph=graph).aggregate(
        total=Count("id"),
        ended=Count("id", filter=~queued),
        queued=Count("id", filter=queued),
        fresh=Count("id", filter=queued & Q(created_at__gte=queued_since)),
    )


def graph_node_get(*, graph: Graph, node_id: int) -> GraphNode:
    node = GraphNode.objects.filter(graph=graph, node_id=node_id).first()
    if node is None:
        raise NotFound(f"Graph {graph.pk} has no node {node_id}.")
    return node


def graph_node_counts(*, graph: Graph) -> dict[str, int]:
    """The graph's nodes by state, every state named."""
    counts = dict(GraphNode.objects.filter(graph=graph).order_by().values_list("state").annotate(Count("pk")))
    return {state: counts.get(state, 0) for state in NodeState.values}


def graph_edges(*, graph: Graph, node_id: int | None = None) -> QuerySet[GraphEdge]:
    """The graph's edges in the order they were made; those of one node when it is given."""
    edges = GraphEdge.objects.filter(graph=graph).order_by("id")
    return edges if node_id is None else edges.filter(Q(src=node_id) | Q(dst=node_id))


def graph_turns(*, graph: Graph, turn_ids: list[int]) -> dict[int, Turn]:
    return {turn.turn_id: turn for turn in Turn.objects.filter(graph=graph, turn_id__in=turn_ids)}


def graph_turn_count(*, graph: Graph) -> int:
    return Turn.objects.filter(graph=graph).count()


def graph_context(*, graph: Graph) -> GraphContext:
    """The agent's messages as the graph stands, and their tokens."""
    turns = [
        TurnRow(*row)
        for row in Turn.objects.filter(graph=graph)
        .order_by("turn_id")
        .values_list("turn_id", "role", "content", "token_count")
    ]
    nodes = [NodeRow(*row) for row in GraphNode.objects.filter(graph=graph).values_list(*NODE_COLUMNS)]
    return rebuild(
        turns=turns,
        nodes=nodes,
        counter=counter_for_model(graph.model),
        head=graph.protected_head,
        tail=graph.protected_tail,
    )


def graph_snapshot(*, graph: Graph) -> dict:
    nodes = list(GraphNode.objects.filter(graph=graph).values(*NODE_COLUMNS))
    edges = list(GraphEdge.objects.filter(graph=graph).order_by("id").values("src", "dst", "rationale"))
    return snapshot_document(nodes, edges)


def graph_nodes(*, graph: Graph, kind: str | None = None, state: str | None = None) -> QuerySet[GraphNode]:
    """Tasks, evidence, active nodes... (seed 004's queries by kind and state)."""
    nodes = GraphNode.objects.filter(graph=graph).order_by("node_id")
    if kind is not None:
        nodes = nodes.filter(kind=kind)
    if state is not None:
        nodes = nodes.filter(state=state)
    return nodes


def graph_ops(*, graph: Graph) -> QuerySet[GraphOp]:
    return GraphOp.objects.filter(graph=graph).order_by("id")


def _neighbours(graph: Graph) -> dict[int, set[int]]:
    links: dict[int, set[int]] = {}
    for src, dst in GraphEdge.objects.filter(graph=graph).values_list("src", "dst"):
        links.setdefault(src, set()).add(dst)
        links.setdefault(dst, set()).add(src)
    return links


def graph_depths(*, graph: Graph) -> dict[int, int]:
    """Each node's distance from the task over edges in either direction (the seed points
    decompose edges from the task down, support edges from the evidence up, and draws both
    below): the layers of the drawing, and what parent and child mean here. Nodes the task
    does not reach come last."""
    task = GraphNode.objects.filter(graph=graph, kind=NodeKind.TASK).values_list("node_id", flat=True).first()
    links = _neighbours(graph)
    depths = {task: 0} if task is not None else {}
    frontier = [task] if task is not None else []
    while frontier:
        following = []
        for node in frontier:
            for nxt in sorted(links.get(node, ())):
                if nxt not in depths:
                    depths[nxt] = depths[node] + 1
                    following.append(nxt)
        frontier = following
    unreached = GraphNode.objects.filter(graph=graph).exclude(node_id__in=depths).values_list("node_id", flat=True)
    deepest = max(depths.values(), default=0)
    depths.update({node: deepest + 1 for node in unreached})
    return depths


def graph_children(*, graph: Graph, node_id: int) -> list[int]:
    depths, links = graph_depths(graph=graph), _neighbours(graph)
    return sorted(node for node in links.get(node_id, ()) if depths.get(node) == depths.get(node_id, -1) + 1)


def graph_parents(*, graph: Graph, node_id: int) -> list[int]:
    depths, links = graph_depths(graph=graph), _neighbours(graph)
    return sorted(node for node in links.get(node_id, ()) if depths.get(node) == depths.get(node_id, -2) - 1)


def graph_leaves(*, graph: Graph) -> list[int]:
    """Active nodes with no active child."""
    depths, links = graph_depths(graph=graph), _neighbours(graph)
    active = set(graph_nodes(graph=graph, state=NodeState.ACTIVE).values_list("node_id", flat=True))
    return sorted(
        node
        for node in active
        if not any(child in active and depths.get(child) == depths[node] + 1 for child in links.get(node, ()))
    )


def graph_path_to_root(*, graph: Graph, node_id: int) -> list[int]:
    """From the node up to the task, through the lowest-numbered parent at each layer."""
    if not GraphNode.objects.filter(graph=graph, node_id=node_id).exists():
        raise NotFound(f"Graph {graph.pk} has no node {node_id}.")
    depths, links = graph_depths(graph=graph), _neighbours(graph)
    path = [node_id]
    while depths.get(path[-1], 0) > 0:
        parents = [node for node in links.get(path[-1], ()) if depths.get(node) == depths[path[-1]] - 1]
        if not parents:
            break
        path.append(min(parents))
    return path


def graph_ops_in_flight(*, by: Principal) -> int:
    """Memorize and recall operations `by`'s user asked for in its space, queued (a running one
    stays queued until it ends): what the member cap on graph operations counts."""
    return GraphOp.objects.filter(created_by_id=by.user_id, graph__space=by.space, status=GraphOp.Status.QUEUED).count()
