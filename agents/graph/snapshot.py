"""Snapshots in seed 004's JSON format:

    {"nodes": {"<id>": {"node_id", "kind", "thought", "related_turn_ids", "active"}},
     "edges": [{"src", "dst", "rationale"}]}

`active` is true, false (folded) or "Flushed". A snapshot written by another tool imports: node
ids as numbers or numeric strings, `thought` as a string or a list of notes. The format does not
say which summary folded a node, so an import takes the first summary whose turns include all
of the node's."""

from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError, field_validator

from agents.graph.patches import MAX_TEXT, Notes, has_cycle
from agents.models.graphs import NodeKind, NodeState
from memsite.errors import InvalidInput
from memsite.storable import unstorable

MAX_NODES = 10_000
MAX_EDGES = 50_000
ACTIVE_BY_STATE = {NodeState.ACTIVE: True, NodeState.FOLDED: False, NodeState.FLUSHED: "Flushed"}


# Node ids are stored as positive 32-bit integers, and the graph's next id is one past the largest.
MAX_NODE_ID = 2**31 - 2


class SnapshotNode(BaseModel):
    node_id: int = Field(ge=1, le=MAX_NODE_ID)
    kind: Literal["task", "subtask", "evidence", "summary"]
    thought: str | list[Notes]
    related_turn_ids: list[int] = Field(default_factory=list, max_length=100_000)
    active: bool | Literal["Flushed"] = True

    @field_validator("active", mode="before")
    @classmethod
    def _active(cls, active: Any) -> Any:
        # Exactly the seed's three values: lax parsing would read "no" or 0 as false, a fold.
        if active is True or active is False or active == "Flushed":
            return active
        raise ValueError('must be true, false (folded) or "Flushed"')

    @field_validator("thought")
    @classmethod
    def _bounded(cls, thought: str | list[Notes]) -> str | list[Notes]:
        if isinstance(thought, str) and len(thought) > MAX_TEXT:
            raise ValueError(f"at most {MAX_TEXT} characters")
        return thought

    @field_validator("related_turn_ids")
    @classmethod
    def _turn_ids(cls, ids: list[int]) -> list[int]:
        if any(turn_id < 0 for turn_id in ids):
            raise ValueError("turn ids are 0 or more")
        return ids


class SnapshotEdge(BaseModel):
    src: int
    dst: int
    rationale: str = Field(default="", max_length=1_000)


class Snapshot(BaseModel):
    nodes: dict[int, SnapshotNode] = Field(max_length=MAX_NODES)
    edges: list[SnapshotEdge] = Field(default_factory=list, max_length=MAX_EDGES)


def _state(active: bool | str) -> str:
    if active is True:
        return NodeState.ACTIVE
    return NodeState.FOLDED if active is False else NodeState.FLUSHED


def snapshot_read(document: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The nodes and edges of a snapshot, checked whole; InvalidInput says what is wrong."""
    problem = unstorable(document)
    if problem is not None:
        raise InvalidInput(f"Invalid snapshot: {problem}.")
    try:
        snapshot = Snapshot.model_validate(document)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the snapshot"
        raise InvalidInput(f"Invalid snapshot at {where}: {first['msg'].removeprefix('Value error, ')}.") from None
    problems = []
    for key, node in snapshot.nodes.items():
        if key != node.node_id:
            problems.append(f"node {key} says its node_id is {node.node_id}")
        if node.kind == NodeKind.TASK and node.active is not True:
            problems.append(f"task node {key} must be active")
    tasks = [key for key, node in snapshot.nodes.items() if node.kind == NodeKind.TASK]
    if len(tasks) != 1:
        problems.append(f"a graph has one task node, this snapshot has {len(tasks)}")
    pairs = set()
    for number, edge in enumerate(snapshot.edges):
        for end in (edge.src, edge.dst):
            if end not in snapshot.nodes:
                problems.append(f"edge {number} names node {end}, which is not in the snapshot")
        if edge.src == edge.dst:
            problems.append(f"edge {number} links node {edge.src} to itself")
        if (edge.src, edge.dst) in pairs:
            problems.append(f"edge {number} repeats {edge.src} -> {edge.dst}")
        pairs.add((edge.src, edge.dst))
    if not problems and has_cycle([str(key) for key in snapshot.nodes], [(str(a), str(b)) for a, b in pairs]):
        problems.append("the edges make a cycle")
    if problems:
        raise InvalidInput("Invalid snapshot: " + "; ".join(problems[:10]) + ".")

    summaries = [node for node in snapshot.nodes.values() if node.kind == NodeKind.SUMMARY]
    nodes = []
    for node in snapshot.nodes.values():
        state = _state(node.active)
        folded_into = None
        if state == NodeState.FOLDED:
            turns = set(node.related_turn_ids)
            folded_into = next(
                (
                    summary.node_id
                    for summary in sorted(summaries, key=lambda summary: summary.node_id)
                    if summary.node_id != node.node_id and turns <= set(summary.related_turn_ids)
                ),
                None,
            )
        thought = node.thought if isinstance(node.thought, str) else [note.model_dump() for note in node.thought]
        nodes.append(
            {
                "node_id": node.node_id,
                "kind": node.kind,
                "thought": thought,
                "related_turn_ids": node.related_turn_ids,
                "state": state,
                "folded_into": folded_into,
            }
        )
    edges = [edge.model_dump() for edge in snapshot.edges]
    return nodes, edges


def snapshot_document(nodes: list[dict[str, Any]], edges: list[dict[str, Any]]) -> dict[str, Any]:
    """The seed's format, nodes keyed by their id in order."""
    return {
        "nodes": {
            str(node["node_id"]): {
                "node_id": node["node_id"],
                "kind": node["kind"],
                "thought": node["thought"],
                "related_turn_ids": node["related_turn_ids"],
                "active": ACTIVE_BY_STATE[node["state"]],
            }
            for node in sorted(nodes, key=lambda node: node["node_id"])
        },
        "edges": [{"src": edge["src"], "dst": edge["dst"], "rationale": edge["rationale"]} for edge in edges],
    }
