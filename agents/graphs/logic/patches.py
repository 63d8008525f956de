"""The operations an LLM proposes on a reasoning graph (seed 004): a MemoryPatch from memorize,
a FlushAndFoldOp from recall; and their validation, whole, against the graph as it is.
Explained in docs/graphs.md."""

from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, TypeVar

from pydantic import BaseModel, Field, model_validator

from agents.graphs.models import NodeKind, NodeState
from memsite.text.reading import Reading

MAX_TEXT = 8_000
Bound = TypeVar("Bound", bound=BaseModel)  # a reply schema, to be bound to a graph


class Notes(BaseModel):
    role: str = Field(min_length=1, max_length=64)
    content: str = Field(max_length=MAX_TEXT)


class AddNodeOp(BaseModel):
    tmp_id: str = Field(min_length=1, max_length=64)
    kind: Literal["subtask", "evidence"]
    thought: list[Notes] = Field(min_length=1, max_length=20)


class AddEdgeOp(BaseModel):
    src: str = Field(min_length=1, max_length=64)  # a node id or a tmp_id
    dst: str = Field(min_length=1, max_length=64)
    rationale: str = Field(default="", max_length=1_000)


class FlushOp(BaseModel):
    id: int
    rationale: str = Field(default="", max_length=1_000)


class FoldOp(BaseModel):
    ids: list[int] = Field(min_length=1, max_length=200)
    notes: list[Notes] = Field(min_length=1, max_length=20)
    rationale: str = Field(default="", max_length=1_000)


@dataclass(frozen=True)
class GraphView:
    """What validation needs of a graph: its nodes' kinds and states, and its edges."""

    kinds: dict[int, str]
    states: dict[int, str]
    edges: frozenset[tuple[int, int]] = field(default_factory=frozenset)

    @property
    def task_ids(self) -> set[int]:
        return {node for node, kind in self.kinds.items() if kind == NodeKind.TASK}

    @property
    def active(self) -> set[int]:
        return {node for node, state in self.states.items() if state == NodeState.ACTIVE}


def on_a_cycle(edges: Iterable[tuple[Hashable, Hashable]], new: Iterable[tuple[Hashable, Hashable]]) -> bool:
    """Whether one of the `new` edges (among `edges`) lies on a cycle: its dst leads back to its
    src. Cycles of the other edges do not count: an imported graph may hold them, and a step
    must still be added to it."""
    outgoing: dict[Hashable, list[Hashable]] = {}
    for src, dst in edges:
        outgoing.setdefault(src, []).append(dst)
    for src, dst in new:
        seen, frontier = {dst}, [dst]
        while frontier:
            node = frontier.pop()
            if node == src:
                return True
            for nxt in outgoing.get(node, ()):
                if nxt not in seen:
                    seen.add(nxt)
                    frontier.append(nxt)
    return False


Edge = tuple[int, int, str | None]  # src, dst, rationale


def folded_edges(edges: list[Edge], folded: set[int], summary_id: int) -> tuple[list[Edge], list[list[int]]]:
    """The edges, in their order, once `folded` is folded into `summary_id`: those that crossed
    into the folded set meet the summary instead; those inside stay with the folded nodes. One
    that would repeat a pair or lie on a cycle is left out, and listed: memsite's own folds make
    neither, though an imported graph may hold both.

    Every moved edge touches the summary, so it closes a cycle exactly when the summary already
    reaches its src (or its dst reaches the summary). Both sets grow as edges are kept, each node
    entering once, so a fold costs one pass over the graph however many edges it moves."""

    def crosses(src: int, dst: int) -> bool:
        return (src in folded) != (dst in folded)

    fixed = [(src, dst) for src, dst, _ in edges if not crosses(src, dst)]
    pairs = set(fixed)
    after, before = _adjacency(fixed), _adjacency((dst, src) for src, dst in fixed)
    reached, reaching = {summary_id}, {summary_id}  # what the summary reaches; what reaches it
    kept, left_out = [], []
    for src, dst, why in edges:
        if not crosses(src, dst):
            kept.append((src, dst, why))
            continue
        moved = (summary_id if src in folded else src, summary_id if dst in folded else dst)
        into = moved[1] == summary_id
        if moved in pairs or (moved[0] in reached if into else moved[1] in reaching):
            left_out.append([src, dst])
            continue
        pairs.add(moved)
        kept.append((*moved, why))
        if into:
            _spread(reaching, moved[0], before)
        else:
            _spread(reached, moved[1], after)
    return kept, left_out


def _adjacency(edges: Iterable[tuple[int, int]]) -> dict[int, list[int]]:
    adjacency: dict[int, list[int]] = {}
    for src, dst in edges:
        adjacency.setdefault(src, []).append(dst)
    return adjacency


def _spread(seen: set[int], start: int, adjacency: dict[int, list[int]]) -> None:
    """Add `start` and what it leads to along `adjacency` to `seen`, skipping what is in it."""
    frontier = [start] if start not in seen else []
    seen.update(frontier)
    while frontier:
        for nxt in adjacency.get(frontier.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                frontier.append(nxt)


def _unlinked(tmp_ids: list[str], ends: list[tuple[str, str]]) -> list[str]:
    """New nodes that the patch's edges, in either direction, do not join to an existing node."""
    neighbours: dict[str, set[str]] = {}
    for src, dst in ends:
        neighbours.setdefault(src, set()).add(dst)
        neighbours.setdefault(dst, set()).add(src)
    reached = {end for pair in ends for end in pair if end not in tmp_ids}
    frontier = list(reached)
    while frontier:
        for nxt in neighbours.get(frontier.pop(), ()):
            if nxt not in reached:
                reached.add(nxt)
                frontier.append(nxt)
    return [tmp for tmp in dict.fromkeys(tmp_ids) if tmp not in reached]


class MemoryPatch(BaseModel):
    add_nodes: list[AddNodeOp] = Field(default_factory=list, max_length=20)
    add_edges: list[AddEdgeOp] = Field(default_factory=list, max_length=40)

    graph: ClassVar[GraphView | None] = None  # set on the schema made for one graph

    @classmethod
    def offline_reply(cls, *, purpose: str, reading: Reading) -> dict[str, Any]:
        """One evidence node of the pair's notes under the newest active subtask; under the task,
        with a subtask of the assistant's note, when there is none (the reading gives all three;
        a request without them adds nothing)."""
        if not isinstance(reading.given, dict):
            return {"add_nodes": [], "add_edges": []}
        notes = reading.given["notes"]
        parent = reading.given["subtask"]
        if parent is not None:
            return {
                "add_nodes": [{"tmp_id": "e1", "kind": "evidence", "thought": notes}],
                "add_edges": [{"src": "e1", "dst": str(parent), "rationale": "support"}],
            }
        return {
            "add_nodes": [
                {"tmp_id": "s1", "kind": "subtask", "thought": notes[:1]},
                {"tmp_id": "e1", "kind": "evidence", "thought": notes},
            ],
            "add_edges": [
                {"src": str(reading.given["task"]), "dst": "s1", "rationale": "decompose"},
                {"src": "e1", "dst": "s1", "rationale": "support"},
            ],
        }

    @model_validator(mode="after")
    def _fits_the_graph(self) -> "MemoryPatch":
        if self.graph is not None:
            errors = patch_errors(self.graph, self)
            if errors:
                raise ValueError("; ".join(errors))
        return self


def patch_errors(graph: GraphView, patch: MemoryPatch) -> list[str]:
    """Every rule the patch breaks, against `graph`: temporary ids unique, every reference
    resolved, edges only between existing active nodes or the patch's own, no self-loops, no
    repeated pairs, no new cycles."""
    errors = []
    tmp_ids = [node.tmp_id for node in patch.add_nodes]
    duplicates = sorted({tmp for tmp in tmp_ids if tmp_ids.count(tmp) > 1})
    if duplicates:
        errors.append(f"temporary ids must be unique: {', '.join(duplicates)} repeat")
    clashing = sorted(tmp for tmp in tmp_ids if tmp.isdigit())
    if clashing:
        errors.append(f"temporary ids must not be numbers, which name existing nodes: {', '.join(clashing)}")
    active = graph.active
    existing = graph.edges
    ends: list[tuple[str, str]] = []
    for number, edge in enumerate(patch.add_edges):
        for end in (edge.src, edge.dst):
            if end in tmp_ids:
                continue
            if not end.isdigit() or int(end) not in graph.kinds:
                errors.append(f"edge {number}: {end!r} is neither an existing node nor a new node's tmp_id")
            elif int(end) not in active:
                errors.append(f"edge {number}: node {end} is {graph.states[int(end)]}, not active")
        if edge.src == edge.dst:
            errors.append(f"edge {number} links {edge.src} to itself")
        elif edge.src.isdigit() and edge.dst.isdigit() and (int(edge.src), int(edge.dst)) in existing:
            errors.append(f"edge {number}: {edge.src} -> {edge.dst} is already in the graph")
        ends.append((edge.src, edge.dst))
    pairs = [(src, dst) for src, dst in ends]
    if len(set(pairs)) != len(pairs):
        errors.append("an edge repeats")
    unlinked = _unlinked(tmp_ids, ends)
    if unlinked:
        errors.append(f"new nodes {', '.join(unlinked)} are not linked to the graph's nodes")
    if not errors and on_a_cycle([(str(src), str(dst)) for src, dst in existing] + ends, ends):
        errors.append("the edges would make a cycle")
    return errors


class FlushAndFoldOp(BaseModel):
    flush_ops: list[FlushOp] = Field(default_factory=list, max_length=100)
    fold_ops: list[FoldOp] = Field(default_factory=list, max_length=20)

    graph: ClassVar[GraphView | None] = None

    @classmethod
    def offline_reply(cls, *, purpose: str, reading: Reading) -> dict[str, Any]:
        """Fold the oldest foldable nodes (the reading gives them) into one summary of their first lines."""
        foldable: list[tuple[int, str]] = reading.given or []
        if len(foldable) < 2:
            return {"flush_ops": [], "fold_ops": []}
        lines = " ".join(text.split(".")[0][:200] for _, text in foldable)
        return {
            "flush_ops": [],
            "fold_ops": [
                {
                    "ids": [node for node, _ in foldable],
                    "notes": [{"role": "system", "content": lines[:MAX_TEXT]}],
                    "rationale": "the oldest finished steps, folded",
                }
            ],
        }

    @model_validator(mode="after")
    def _fits_the_graph(self) -> "FlushAndFoldOp":
        if self.graph is not None:
            errors = recall_errors(self.graph, self)
            if errors:
                raise ValueError("; ".join(errors))
        return self


def recall_errors(graph: GraphView, op: FlushAndFoldOp) -> list[str]:
    """Ids exist and are active; each node in at most one operation; the task never."""
    errors = []
    named = [flush.id for flush in op.flush_ops] + [node for fold in op.fold_ops for node in fold.ids]
    for node in dict.fromkeys(named):
        if node not in graph.kinds:
            errors.append(f"node {node} does not exist")
        elif node in graph.task_ids:
            errors.append(f"node {node} is the task, which is never flushed or folded")
        elif node not in graph.active:
            errors.append(f"node {node} is {graph.states[node]}, not active")
    repeated = sorted({node for node in named if named.count(node) > 1})
    if repeated:
        errors.append(f"nodes {', '.join(map(str, repeated))} are in more than one operation")
    return errors


def schema_for(base: type[Bound], graph: GraphView) -> type[Bound]:
    """`base` bound to `graph`, which its replies are checked against."""
    return type(base.__name__, (base,), {"graph": graph, "__module__": __name__})
