"""The agent's context rebuilt from its reasoning graph: the stored turns in order, where the
turns of flushed steps give way to their notes and the turns of folded steps to the summary
that folded them. The first and last turns are always sent as they were.
Explained in docs/graphs.md."""

from collections.abc import Sequence
from dataclasses import dataclass

from agents.context.logic.wire import wire_tokens
from agents.graphs.models import NodeKind, NodeState
from memsite.llm.tokens import TOKENS_REPLY_PRIMING, TokenCounter


@dataclass(frozen=True)
class TurnRow:
    turn_id: int
    role: str
    content: str
    token_count: int


@dataclass(frozen=True)
class NodeRow:
    node_id: int
    kind: str
    thought: str | list
    related_turn_ids: list[int]
    state: str
    folded_into: int | None


@dataclass(frozen=True)
class StandIn:
    node_id: int
    turn_ids: list[int]  # the turns it stands for in this context
    tokens: int


@dataclass(frozen=True)
class GraphContext:
    messages: list[dict]
    tokens: int
    raw_turns: list[int]
    stand_ins: list[StandIn]


def notes_text(thought: str | list) -> str:
    if isinstance(thought, str):
        return thought
    return "\n".join(f"{note.get('role', '')}: {note.get('content', '')}" for note in thought)


def _stand_in_of(turn_id: int, owners: dict[int, list[NodeRow]], nodes: dict[int, NodeRow]) -> NodeRow | None:
    steps = owners.get(turn_id, [])
    if not steps or any(step.state == NodeState.ACTIVE for step in steps):
        return None
    step = min(steps, key=lambda node: node.node_id)
    seen = set()
    while step.state == NodeState.FOLDED and step.folded_into in nodes and step.node_id not in seen:
        seen.add(step.node_id)
        step = nodes[step.folded_into]
    return step


def graph_context(
    *, turns: Sequence[TurnRow], nodes: Sequence[NodeRow], counter: TokenCounter, head: int, tail: int
) -> GraphContext:
    by_id = {node.node_id: node for node in nodes}
    owners: dict[int, list[NodeRow]] = {}
    for node in nodes:
        if node.kind in (NodeKind.SUBTASK, NodeKind.EVIDENCE):
            for turn_id in node.related_turn_ids:
                owners.setdefault(turn_id, []).append(node)
    protected = {turn.turn_id for turn in [*turns[:head], *(turns[-tail:] if tail else [])]}
    messages: list[dict] = []
    raw: list[int] = []
    covered: dict[int, list[int]] = {}
    placed: dict[int, int] = {}  # stand-in node id -> index of its message
    tokens = TOKENS_REPLY_PRIMING
    for turn in turns:
        stand_in = None if turn.turn_id in protected else _stand_in_of(turn.turn_id, owners, by_id)
        if stand_in is None:
            messages.append({"role": turn.role, "content": turn.content})
            raw.append(turn.turn_id)
            tokens += turn.token_count
            continue
        covered.setdefault(stand_in.node_id, []).append(turn.turn_id)
        if stand_in.node_id not in placed:
            placed[stand_in.node_id] = len(messages)
            label = "summary of earlier steps" if stand_in.kind == NodeKind.SUMMARY else "notes of a flushed step"
            messages.append({"role": "system", "content": f"[{label}]\n{notes_text(stand_in.thought)}"})
    stand_ins = []
    for node_id, index in placed.items():
        cost = wire_tokens(counter, messages[index])
        tokens += cost
        stand_ins.append(StandIn(node_id=node_id, turn_ids=covered[node_id], tokens=cost))
    return GraphContext(messages=messages, tokens=tokens, raw_turns=raw, stand_ins=stand_ins)
