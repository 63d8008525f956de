"""Snapshots in seed 004's JSON format, which is MemoBrain's `save_memory`: what MemoBrain's
own code writes imports and exports unchanged, and what memsite cannot keep as a graph is
refused. Explained in docs/graphs.md."""

from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator, with_config
from typing_extensions import TypedDict  # pydantic reads typing's TypedDict only from Python 3.12

from agents.graphs.models import NodeKind, NodeState
from memsite.errors import InvalidInput, cut
from memsite.storable import unstorable

MAX_NODES = 10_000
MAX_EDGES = 50_000
MAX_NOTES = 1_000  # notes in one node's thought
MAX_PROBLEMS = 10  # a refusal names at most this many of a snapshot's problems
ACTIVE_BY_STATE: dict[str, bool | str] = {NodeState.ACTIVE: True, NodeState.FOLDED: False, NodeState.FLUSHED: "Flushed"}


# Node ids are stored as positive 32-bit integers, and the graph's next id is one past the largest.
MAX_NODE_ID = 2**31 - 2


@with_config(ConfigDict(extra="allow"))
class SnapshotNote(TypedDict):
    """A note as MemoBrain's schema has it; other keys are kept as they are."""

    role: str
    content: str


# Lists stop at their first bad item (fail_fast): a refusal costs no more for a long list.
NOTES = TypeAdapter(Annotated[list[SnapshotNote], Field(max_length=MAX_NOTES, fail_fast=True)])


class SnapshotNode(BaseModel):
    """A node; a thought that is a list is checked note by note after (`NOTES`), so that a
    refusal names the note and not the string the thought might have been."""

    node_id: int = Field(ge=1, le=MAX_NODE_ID)
    kind: Literal["task", "subtask", "evidence", "summary"]
    thought: Any
    related_turn_ids: list[int] = Field(default_factory=list, max_length=100_000, fail_fast=True)
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
    def _text_or_notes(cls, thought: Any) -> Any:
        if not isinstance(thought, str | list):
            # ValueError: what pydantic reports as the field's error (a TypeError it would not)
            raise ValueError("must be a string or a list of notes {role, content}")  # noqa: TRY004
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
    rationale: str | None = ""  # MemoBrain writes null when the model gave none


class _Outline(BaseModel):
    """The snapshot's top level. Its nodes are checked one by one after (`_nodes`): pydantic
    checks every entry of a dict before its length, and names every bad one."""

    nodes: dict[Any, Any]
    edges: list[SnapshotEdge] = Field(default_factory=list, max_length=MAX_EDGES, fail_fast=True)

    @field_validator("nodes", mode="before")
    @classmethod
    def _few_nodes(cls, nodes: Any) -> Any:
        if isinstance(nodes, dict) and len(nodes) > MAX_NODES:
            raise ValueError(f"at most {MAX_NODES} nodes, not {len(nodes)}")
        return nodes


NODE_KEY = TypeAdapter(int)


def _state(active: bool | str) -> str:
    if active is True:
        return NodeState.ACTIVE
    return NodeState.FOLDED if active is False else NodeState.FLUSHED


def _checked(validate: Callable[[Any], Any], value: Any, where: tuple) -> Any:
    """`validate(value)`, or InvalidInput naming the first problem (of the few a fail-fast
    model collects) at its place in the snapshot."""
    try:
        return validate(value)
    except ValidationError as error:
        first = error.errors(include_url=False, include_input=False, include_context=False)[0]
        place = ".".join(str(part) for part in (*where, *first["loc"])) or "the snapshot"
        message = first["msg"].removeprefix("Value error, ")
        raise InvalidInput(f"Invalid snapshot at {cut(place)}: {message}.") from None


def _parsed(document: Any) -> tuple[dict[int, SnapshotNode], list[SnapshotEdge]]:
    """The snapshot's nodes by key and its edges, refused at the first invalid one."""
    outline = _checked(_Outline.model_validate, document, ())
    nodes = {}
    for key, node in outline.nodes.items():
        # The place of a bad key as pydantic names it: nodes.<key>.[key]
        number = _checked(NODE_KEY.validate_python, key, ("nodes", key, "[key]"))
        nodes[number] = _checked(SnapshotNode.model_validate, node, ("nodes", key))
        if isinstance(nodes[number].thought, list):
            _checked(NOTES.validate_python, nodes[number].thought, ("nodes", key, "thought"))
    return nodes, outline.edges


def _problems(nodes: dict[int, SnapshotNode], edges: list[SnapshotEdge]) -> list[str]:
    """What makes the snapshot no graph memsite can keep, up to MAX_PROBLEMS of it."""
    problems = [f"node {key} says its node_id is {node.node_id}" for key, node in nodes.items() if key != node.node_id]
    tasks = [key for key, node in nodes.items() if node.kind == NodeKind.TASK]
    if len(tasks) != 1:
        problems.append(f"a graph has one task node, this snapshot has {len(tasks)}")
    for number, edge in enumerate(edges):
        if len(problems) >= MAX_PROBLEMS:
            break
        for end in dict.fromkeys((edge.src, edge.dst)):
            if end not in nodes:
                problems.append(f"edge {number} names node {end}, which is not in the snapshot")
    return problems


def _folded_into(node: SnapshotNode, summaries: list[SnapshotNode]) -> int | None:
    """The first summary whose turns include all of a folded node's."""
    turns = set(node.related_turn_ids)
    return next(
        (
            summary.node_id
            for summary in summaries
            if summary.node_id != node.node_id and turns <= set(summary.related_turn_ids)
        ),
        None,
    )


def snapshot_read(document: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The nodes and edges of a snapshot, checked whole; InvalidInput says what is wrong."""
    problem = unstorable(document)
    if problem is not None:
        raise InvalidInput(f"Invalid snapshot: {cut(problem)}.")
    nodes, edges = _parsed(document)
    problems = _problems(nodes, edges)
    if problems:
        raise InvalidInput("Invalid snapshot: " + "; ".join(problems[:MAX_PROBLEMS]) + ".")
    summaries = sorted(
        (node for node in nodes.values() if node.kind == NodeKind.SUMMARY),
        key=lambda summary: summary.node_id,
    )
    rows = []
    for node in nodes.values():
        state = _state(node.active)
        rows.append(
            {
                "node_id": node.node_id,
                "kind": node.kind,
                "thought": node.thought,  # as it came: a note's keys beyond role and content too
                "related_turn_ids": node.related_turn_ids,
                "state": state,
                "folded_into": _folded_into(node, summaries) if state == NodeState.FOLDED else None,
            }
        )
    return rows, [edge.model_dump() for edge in edges]


def snapshot_document(nodes: Sequence[Mapping[str, Any]], edges: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The seed's format, nodes keyed by their id in order, edges in theirs: what MemoBrain's
    `load_memory` reads back to the same graph."""
    return {
        "nodes": {
            str(node["node_id"]): {
                "node_id": node["node_id"],
                "kind": node["kind"],
                "related_turn_ids": node["related_turn_ids"],  # the keys in save_memory's order
                "thought": node["thought"],
                "active": ACTIVE_BY_STATE[node["state"]],
            }
            for node in sorted(nodes, key=lambda node: node["node_id"])
        },
        "edges": [{"src": edge["src"], "dst": edge["dst"], "rationale": edge["rationale"]} for edge in edges],
    }
