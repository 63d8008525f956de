"""MemoryPatch and FlushAndFoldOp validation, rule by rule."""

import random

import pytest
from pydantic import ValidationError

from agents.graphs.logic.patches import (
    FlushAndFoldOp,
    GraphView,
    MemoryPatch,
    folded_edges,
    patch_errors,
    recall_errors,
    schema_for,
)
from memsite.text.reading import Reading

# 1 task; 2 subtask active; 3 evidence active; 4 folded; 5 flushed. Edges 1->2, 3->2.
GRAPH = GraphView(
    kinds={1: "task", 2: "subtask", 3: "evidence", 4: "evidence", 5: "evidence"},
    states={1: "active", 2: "active", 3: "active", 4: "folded", 5: "flushed"},
    edges=frozenset({(1, 2), (3, 2)}),
)
NOTE = [{"role": "assistant", "content": "found it"}]


def patch(nodes=(), edges=()) -> MemoryPatch:
    return MemoryPatch.model_validate(
        {
            "add_nodes": [{"tmp_id": tmp, "kind": kind, "thought": NOTE} for tmp, kind in nodes],
            "add_edges": [{"src": src, "dst": dst} for src, dst in edges],
        }
    )


def test_a_valid_patch_has_no_errors():
    assert patch_errors(GRAPH, patch([("a", "evidence"), ("b", "subtask")], [("a", "2"), ("1", "b")])) == []


@pytest.mark.parametrize(
    ("nodes", "edges", "error"),
    [
        ([("a", "evidence"), ("a", "subtask")], [("a", "2")], "temporary ids must be unique: a repeat"),
        ([("7", "evidence")], [("7", "2")], "temporary ids must not be numbers"),
        ([("a", "evidence")], [("a", "9")], "'9' is neither an existing node nor a new node's tmp_id"),
        ([("a", "evidence")], [("a", "x")], "'x' is neither an existing node nor a new node's tmp_id"),
        ([("a", "evidence")], [("a", "4")], "node 4 is folded, not active"),
        ([("a", "evidence")], [("5", "a")], "node 5 is flushed, not active"),
        ([("a", "evidence")], [("a", "a")], "edge 0 links a to itself"),
        ([("a", "evidence")], [("a", "2"), ("a", "2")], "an edge repeats"),
        ([("a", "evidence"), ("b", "evidence")], [("a", "2")], "new nodes b are not linked"),
        ([("a", "evidence"), ("b", "evidence")], [("a", "b")], "new nodes a, b are not linked"),
        ([("a", "subtask")], [("2", "a"), ("a", "1")], "the edges would make a cycle"),
        ([], [("2", "1")], "the edges would make a cycle"),
        ([("a", "evidence")], [("a", "2"), ("1", "2")], "edge 1: 1 -> 2 is already in the graph"),
    ],
)
def test_each_rule(nodes, edges, error):
    errors = patch_errors(GRAPH, patch(nodes, edges))
    assert any(error in message for message in errors), errors


# An imported graph's cycle (2 -> 3 -> 2) and self-loop (3 -> 3), as MemoBrain may write them.
CYCLIC = GraphView(
    kinds={1: "task", 2: "subtask", 3: "evidence"},
    states={1: "active", 2: "active", 3: "active"},
    edges=frozenset({(1, 2), (2, 3), (3, 2), (3, 3)}),
)


def test_a_step_joins_a_graph_that_holds_a_cycle():
    step = patch([("a", "evidence"), ("b", "subtask")], [("3", "a"), ("1", "b"), ("a", "b")])
    assert patch_errors(CYCLIC, step) == []


def test_a_step_that_closes_a_new_cycle_is_refused_beside_an_old_one():
    errors = patch_errors(CYCLIC, patch([("a", "evidence")], [("3", "a"), ("a", "1")]))
    assert errors == ["the edges would make a cycle"]


def test_only_subtask_and_evidence_nodes_are_added():
    with pytest.raises(ValidationError):
        patch([("a", "summary")], [("a", "2")])
    with pytest.raises(ValidationError):
        patch([("a", "task")], [("a", "2")])


def test_the_schema_bound_to_a_graph_refuses_what_breaks_a_rule():
    schema = schema_for(MemoryPatch, GRAPH)
    with pytest.raises(ValidationError, match="node 4 is folded"):
        schema.model_validate({"add_nodes": [], "add_edges": [{"src": "4", "dst": "2"}]})
    assert schema.model_validate({"add_nodes": [], "add_edges": [{"src": "1", "dst": "3"}]}).add_edges


def recall(flush=(), folds=()) -> FlushAndFoldOp:
    return FlushAndFoldOp.model_validate(
        {
            "flush_ops": [{"id": node} for node in flush],
            "fold_ops": [{"ids": list(ids), "notes": NOTE} for ids in folds],
        }
    )


def test_a_valid_recall_has_no_errors():
    assert recall_errors(GRAPH, recall(flush=[3], folds=[[2]])) == []


@pytest.mark.parametrize(
    ("flush", "folds", "error"),
    [
        ([9], [], "node 9 does not exist"),
        ([1], [], "node 1 is the task"),
        ([], [[1, 2]], "node 1 is the task"),
        ([4], [], "node 4 is folded, not active"),
        ([], [[5]], "node 5 is flushed, not active"),
        ([2], [[2, 3]], "nodes 2 are in more than one operation"),
        ([], [[2], [2, 3]], "nodes 2 are in more than one operation"),
    ],
)
def test_each_recall_rule(flush, folds, error):
    errors = recall_errors(GRAPH, recall(flush, folds))
    assert any(error in message for message in errors), errors


def folded_one_by_one(edges, folded, summary_id):
    """A fold as its rule reads: each crossing edge, in order, moved to the summary unless the
    pair is there already or the kept edges would lead from its dst back to its src."""
    crossing = [(src in folded) != (dst in folded) for src, dst, _ in edges]
    pairs = [(src, dst) for (src, dst, _), moving in zip(edges, crossing, strict=True) if not moving]
    kept, left_out = [], []
    for (src, dst, why), moving in zip(edges, crossing, strict=True):
        if not moving:
            kept.append((src, dst, why))
            continue
        moved = (summary_id if src in folded else src, summary_id if dst in folded else dst)
        reached, frontier = {moved[1]}, [moved[1]]
        while frontier:
            node = frontier.pop()
            for a, b in pairs:
                if a == node and b not in reached:
                    reached.add(b)
                    frontier.append(b)
        if moved in pairs or moved[0] in reached:
            left_out.append([src, dst])
        else:
            pairs.append(moved)
            kept.append((*moved, why))
    return kept, left_out


@pytest.mark.parametrize("seed", range(200))
def test_a_fold_keeps_the_edges_its_rule_keeps(seed):
    """Random graphs with repeats and cycles, as an import may bring them."""
    rng = random.Random(seed)
    nodes = range(1, rng.randint(3, 12))
    edges = [(rng.choice(nodes), rng.choice(nodes), f"e{i}") for i in range(rng.randint(1, 30))]
    folded = set(rng.sample(list(nodes), rng.randint(1, len(nodes) - 1)))
    assert folded_edges(edges, folded, 100) == folded_one_by_one(edges, folded, 100)


def test_a_request_without_the_graph_s_data_is_answered_offline_with_nothing_to_do():
    bare = Reading(query="", context="")

    assert MemoryPatch.offline_reply(purpose="memorize", reading=bare) == {"add_nodes": [], "add_edges": []}
    assert FlushAndFoldOp.offline_reply(purpose="recall", reading=bare) == {"flush_ops": [], "fold_ops": []}
