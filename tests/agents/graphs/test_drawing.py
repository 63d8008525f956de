"""The graph's layout: layers from depths, boxes that never overlap, edges that end on boxes."""

import itertools
from dataclasses import dataclass, field

import pytest

from agents.graphs.logic.drawing import (
    GAP_X,
    LINE_CHARS,
    NODE_HEIGHT,
    NODE_WIDTH,
    DrawnNode,
    context_gauge,
    graph_drawing,
    layer_order,
    thought_plain,
    wrap_lines,
)


@dataclass(frozen=True)
class Node:
    node_id: int
    kind: str = "subtask"
    state: str = "active"
    thought: str | list = "a step"
    related_turn_ids: list = field(default_factory=list)
    folded_into: int | None = None


@dataclass(frozen=True)
class Edge:
    src: int
    dst: int
    rationale: str = ""


def seed_graph() -> tuple[list[Node], list[Edge], dict[int, int]]:
    """Seed 004's example: a task, two subtasks, three pieces of evidence, a summary."""
    nodes = [
        Node(1, "task", thought="Research NestJS best practices"),
        Node(2, thought="Find architecture patterns"),
        Node(3, thought="Find testing strategies"),
        Node(4, "evidence", "folded", "Modular architecture found", [4, 5], folded_into=7),
        Node(5, "evidence", "folded", "DDD patterns documented", [6, 7], folded_into=7),
        Node(6, "evidence", "flushed", "Jest + E2E recommended"),
        Node(7, "summary", thought=[{"role": "assistant", "content": "Architecture summary"}]),
    ]
    edges = [
        Edge(1, 2, "decompose task"),
        Edge(1, 3, "decompose task"),
        Edge(2, 4),
        Edge(5, 2, "support"),  # evidence points up at what it supports
        Edge(3, 6),
        Edge(7, 1, "support"),
    ]
    depths = {1: 0, 2: 1, 3: 1, 7: 1, 4: 2, 5: 2, 6: 2}
    return nodes, edges, depths


def overlaps(a: DrawnNode, b: DrawnNode) -> bool:
    return a.x < b.x + b.width and b.x < a.x + a.width and a.y < b.y + b.height and b.y < a.y + a.height


def on_border(node: DrawnNode, x: float, y: float) -> bool:
    inside_x = node.x <= x <= node.x + node.width
    inside_y = node.y <= y <= node.bottom
    return (inside_x and y in (node.y, node.bottom)) or (inside_y and x in (node.x, node.x + node.width))


def test_the_task_is_on_top_and_each_layer_below():
    nodes, edges, depths = seed_graph()

    drawing = graph_drawing(nodes, edges, depths)

    by_id = {node.node_id: node for node in drawing.nodes}
    assert [layer.depth for layer in drawing.layers] == [0, 1, 2]
    assert [layer.label for layer in drawing.layers] == ["task", "depth 1", "depth 2"]
    assert by_id[1].y < by_id[2].y == by_id[3].y == by_id[7].y < by_id[4].y == by_id[5].y == by_id[6].y
    assert all(node.depth == depths[node.node_id] for node in drawing.nodes)
    assert sorted(node.node_id for node in drawing.nodes) == [1, 2, 3, 4, 5, 6, 7]


def test_no_two_boxes_overlap_and_all_fit():
    nodes = [Node(1, "task")] + [Node(number) for number in range(2, 40)]
    edges = [Edge(1, number) for number in range(2, 40)]
    depths = {1: 0, **{number: 1 + number % 3 for number in range(2, 40)}}

    drawing = graph_drawing(nodes, edges, depths, per_row=4)

    assert len(drawing.nodes) == 39
    for a, b in itertools.combinations(drawing.nodes, 2):
        assert not overlaps(a, b), (a.node_id, b.node_id)
    for node in drawing.nodes:
        assert 0 <= node.x and node.x + node.width <= drawing.width
        assert 0 <= node.y and node.bottom <= drawing.height


def test_a_wide_layer_wraps_onto_rows():
    nodes = [Node(1, "task")] + [Node(number) for number in range(2, 12)]
    depths = {1: 0, **{number: 1 for number in range(2, 12)}}

    drawing = graph_drawing(nodes, [Edge(1, number) for number in range(2, 12)], depths, per_row=4)

    layer = [node for node in drawing.nodes if node.depth == 1]
    assert sorted({node.y for node in layer}) == [layer[0].y, layer[4].y, layer[8].y]
    assert [len([node for node in layer if node.y == y]) for y in sorted({node.y for node in layer})] == [4, 4, 2]
    assert drawing.width == 4 * NODE_WIDTH + 3 * GAP_X + 2 * 18
    assert drawing.layers[1].height == 3 * NODE_HEIGHT + 2 * 22


def test_rows_are_centred():
    nodes = [Node(1, "task"), Node(2), Node(3)]
    drawing = graph_drawing(nodes, [Edge(1, 2), Edge(1, 3)], {1: 0, 2: 1, 3: 1})

    task, *steps = drawing.nodes
    assert task.cx == pytest.approx((steps[0].cx + steps[1].cx) / 2)
    assert task.cx == pytest.approx(drawing.width / 2)


def test_edges_end_on_their_boxes_and_point_the_way_they_go():
    nodes, edges, depths = seed_graph()

    drawing = graph_drawing(nodes, edges, depths)

    by_id = {node.node_id: node for node in drawing.nodes}
    assert [(edge.src, edge.dst) for edge in drawing.edges] == [(edge.src, edge.dst) for edge in edges]
    for edge in drawing.edges:
        src, dst = by_id[edge.src], by_id[edge.dst]
        x1, y1, x2, y2 = (float(value) for value in (edge.x1, edge.y1, edge.x2, edge.y2))
        assert on_border(src, x1, y1) and on_border(dst, x2, y2), edge
        assert edge.path.startswith(f"M{edge.x1},{edge.y1} ") and edge.path.endswith(f" {edge.x2},{edge.y2}")
    down = next(edge for edge in drawing.edges if (edge.src, edge.dst) == (1, 2))
    assert (float(down.y1), float(down.y2)) == (by_id[1].bottom, by_id[2].y)
    up = next(edge for edge in drawing.edges if (edge.src, edge.dst) == (5, 2))
    assert (float(up.y1), float(up.y2)) == (by_id[5].y, by_id[2].bottom)


def test_edges_that_touch_a_folded_or_flushed_node_are_faded_and_keep_their_rationale():
    nodes, edges, depths = seed_graph()

    drawing = graph_drawing(nodes, edges, depths)

    faded = {(edge.src, edge.dst) for edge in drawing.edges if edge.faded}
    assert faded == {(2, 4), (5, 2), (3, 6)}
    edge = next(edge for edge in drawing.edges if (edge.src, edge.dst) == (7, 1))
    assert edge.rationale == "support" and edge.title == "7 → 1: support"


def test_an_edge_within_a_row_arcs_over_it():
    nodes = [Node(1, "task"), Node(2), Node(3)]
    drawing = graph_drawing(nodes, [Edge(1, 2), Edge(2, 3, "refine")], {1: 0, 2: 1, 3: 1})

    by_id = {node.node_id: node for node in drawing.nodes}
    refine = drawing.edges[1]
    assert float(refine.y1) == by_id[2].y and float(refine.y2) == by_id[3].y
    assert on_border(by_id[2], float(refine.x1), float(refine.y1))


def test_nodes_the_task_does_not_reach_come_last_and_edges_to_missing_nodes_are_left_out():
    nodes = [Node(1, "task"), Node(2), Node(9, "evidence")]
    drawing = graph_drawing(nodes, [Edge(1, 2), Edge(2, 99)], {1: 0, 2: 1})

    assert drawing.layers[-1].label == "not linked to the task"
    assert [node.node_id for node in drawing.nodes if node.depth == 2] == [9]
    assert [(edge.src, edge.dst) for edge in drawing.edges] == [(1, 2)]


def test_a_layer_is_ordered_under_its_neighbours():
    # 5 sits under 3 and 4 under 2: without reordering the edges 2-5 and 3-4 would cross.
    order = layer_order({0: [1], 1: [2, 3], 2: [4, 5]}, {1: {2, 3}, 2: {1, 5}, 3: {1, 4}, 4: {3}, 5: {2}})
    assert order == {0: [1], 1: [2, 3], 2: [5, 4]}


def test_an_empty_graph():
    drawing = graph_drawing([], [], {})
    assert drawing.nodes == [] and drawing.edges == [] and drawing.height > 0
    assert drawing.description == "Reasoning graph of 0 nodes () in 0 layers, with 0 edges."


def test_labels_titles_and_description():
    nodes, edges, depths = seed_graph()
    drawing = graph_drawing(nodes, edges, depths)
    by_id = {node.node_id: node for node in drawing.nodes}

    assert by_id[4].title == "Node 4 · evidence · folded into node 7\nModular architecture found"
    assert by_id[4].turn_count == 2
    assert by_id[7].lines == ["Architecture summary"]
    assert by_id[6].label == "Node 6, evidence, flushed: Jest + E2E recommended"
    assert drawing.description == (
        "Reasoning graph of 7 nodes (4 active, 2 folded, 1 flushed) in 3 layers, with 6 edges."
    )


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        ("short", ["short"]),
        ("Research NestJS best practices", ["Research NestJS best", "practices"]),
        (
            "Searching for architecture patterns in many places and more",
            ["Searching for architecture", "patterns in many places…"],
        ),
        ("a" * 60, ["a" * LINE_CHARS, "a" * (LINE_CHARS - 1) + "…"]),
        ("", []),
    ],
)
def test_wrap_lines(text, lines):
    assert wrap_lines(text) == lines
    assert all(len(line) <= LINE_CHARS for line in wrap_lines(text))


def test_thought_plain():
    assert thought_plain("  two\n words ") == "two words"
    notes = [{"role": "assistant", "content": "Searching"}, {"role": "user", "content": "Results"}, "stray"]
    assert thought_plain(notes) == "Searching Results"


def test_the_context_gauge():
    gauge = context_gauge(tokens=500, stand_in_tokens=100, trigger=1_000, target=600)

    assert [(part.key, part.tokens, part.share) for part in gauge.parts] == [
        ("turns", 400, "33.333%"),
        ("stand_ins", 100, "8.333%"),
        ("room", 700, "58.333%"),
    ]
    assert [(marker.key, marker.share) for marker in gauge.markers] == [("target", "50.000%"), ("trigger", "83.333%")]
    assert not gauge.over_target and not gauge.over_trigger


def test_a_context_past_the_trigger_stretches_the_gauge():
    gauge = context_gauge(tokens=2_000, stand_in_tokens=0, trigger=1_000, target=600)

    assert gauge.over_trigger and gauge.parts[0].share == "83.333%"
    assert gauge.markers[1].share == "41.667%"
