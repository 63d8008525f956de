"""A reasoning graph laid out for the dashboard as inline SVG drawn on the server: the task at
the top and a layer per depth below it; no layout library, no queries, only numbers for the
template. Also here: the gauge of the rebuilt context's tokens against its trigger and target.
Explained in docs/graphs.md."""

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Protocol

from agents.graphs.models import NodeState

NODE_WIDTH = 184
NODE_HEIGHT = 64
GAP_X = 24  # between the boxes of a row
GAP_ROWS = 22  # between the rows of one wrapped layer
GAP_LAYERS = 58  # between layers: room for the edges
MARGIN = 18  # also the room above a layer for its band
PER_ROW = 4
LINE_CHARS = 26  # what a line of the box holds at the drawing's font size
LINES = 2
TITLE_CHARS = 400


class NodeLike(Protocol):
    node_id: int
    kind: str
    state: str
    thought: str | list
    related_turn_ids: list
    folded_into: int | None


class EdgeLike(Protocol):
    src: int
    dst: int
    rationale: str | None  # None: an imported edge whose model gave none


@dataclass(frozen=True)
class DrawnNode:
    node_id: int
    kind: str
    state: str
    depth: int
    x: int  # the box's top left corner
    y: int
    width: int
    height: int
    lines: list[str]  # the thought's opening words, a box's width a line
    text: str  # the thought as one line, cut to TITLE_CHARS
    turn_count: int
    folded_into: int | None

    @property
    def cx(self) -> float:
        return self.x + self.width / 2

    @property
    def cy(self) -> float:
        return self.y + self.height / 2

    @property
    def bottom(self) -> int:
        return self.y + self.height

    @property
    def state_label(self) -> str:
        if self.state == NodeState.FOLDED and self.folded_into:
            return f"folded into node {self.folded_into}"
        return self.state

    @property
    def title(self) -> str:
        """What a pointer resting on the node shows."""
        return f"Node {self.node_id} · {self.kind} · {self.state_label}\n{self.text}"

    @property
    def label(self) -> str:
        """The node in words, for screen readers."""
        return f"Node {self.node_id}, {self.kind}, {self.state_label}: {' '.join(self.lines)}"


@dataclass(frozen=True)
class DrawnEdge:
    src: int
    dst: int
    rationale: str | None
    x1: str
    y1: str
    x2: str
    y2: str
    path: str  # a <path>'s d: a curve from (x1, y1) to (x2, y2)
    faded: bool  # an end is folded or flushed

    @property
    def title(self) -> str:
        return f"{self.src} → {self.dst}" + (f": {self.rationale}" if self.rationale else "")


@dataclass(frozen=True)
class Layer:
    depth: int
    y: int  # the top of its first row
    height: int  # from the top of its first row to the bottom of its last
    label: str


@dataclass(frozen=True)
class GraphDrawing:
    width: int
    height: int
    nodes: list[DrawnNode]
    edges: list[DrawnEdge]
    layers: list[Layer]

    @property
    def description(self) -> str:
        counts = {state: sum(1 for node in self.nodes if node.state == state) for state in NodeState.values}
        states = ", ".join(f"{count} {state}" for state, count in counts.items() if count)
        return (
            f"Reasoning graph of {len(self.nodes)} node{'s' if len(self.nodes) != 1 else ''} ({states}) "
            f"in {len(self.layers)} layer{'s' if len(self.layers) != 1 else ''}, "
            f"with {len(self.edges)} edge{'s' if len(self.edges) != 1 else ''}."
        )


def _number(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def thought_plain(thought: str | list) -> str:
    """A thought as one line of text: a string as it is, notes by their contents."""
    if isinstance(thought, str):
        text = thought
    else:
        text = " ".join(str(note.get("content", "")) for note in thought if isinstance(note, Mapping))
    return " ".join(text.split())


def wrap_lines(text: str, *, width: int = LINE_CHARS, lines: int = LINES) -> list[str]:
    """The opening words of `text` on at most `lines` lines of `width` characters; an ellipsis
    ends the last when there is more. A word longer than a line is cut."""
    words = text.split()
    result: list[str] = []
    current = ""
    index = 0
    while index < len(words) and len(result) < lines:
        word = words[index]
        candidate = f"{current} {word}" if current else word
        if len(candidate) <= width:
            current, index = candidate, index + 1
        elif not current:  # a word longer than the line
            current, words[index] = word[:width], word[width:]
        else:
            result.append(current)
            current = ""
    if current and len(result) < lines:
        result.append(current)
    if index < len(words):  # more than fits: the last line ends with an ellipsis, at a word's end
        last = result[-1]
        if len(last) >= width:
            cut = last[: width - 1]
            last = cut.rsplit(" ", 1)[0] if " " in cut else cut
        result[-1] = last.rstrip() + "…"
    return result


def _barycentre(node: int, above: Mapping[int, int], links: Mapping[int, Iterable[int]]) -> tuple[int, float, int]:
    """A node's sort key in its layer: the mean position of its neighbours in the layer above,
    then its id; a node with none there goes after those with some."""
    positions = [above[other] for other in links.get(node, ()) if other in above]
    if not positions:
        return (1, 0.0, node)
    return (0, sum(positions) / len(positions), node)


def layer_order(layers: Mapping[int, Sequence[int]], links: Mapping[int, Iterable[int]]) -> dict[int, list[int]]:
    """Each layer's nodes in drawing order: the first by id, each next by the mean position of
    its neighbours in the layer above (ties and nodes with none there by id, those last)."""
    ordered: dict[int, list[int]] = {}
    above: dict[int, int] = {}
    for depth in sorted(layers):
        if above:
            ordered[depth] = sorted(layers[depth], key=partial(_barycentre, above=above, links=links))
        else:
            ordered[depth] = sorted(layers[depth])
        above = {node: position for position, node in enumerate(ordered[depth])}
    return ordered


def _layers(node_ids: Sequence[int], depths: Mapping[int, int]) -> tuple[dict[int, list[int]], int | None]:
    """The nodes of each depth, and the depth given to the nodes `depths` leaves out, one below
    the deepest (None when it leaves out none)."""
    deepest = max((depths[node] for node in node_ids if node in depths), default=-1)
    layers: dict[int, list[int]] = {}
    for node in node_ids:
        layers.setdefault(depths.get(node, deepest + 1), []).append(node)
    unreached = deepest + 1 if any(node not in depths for node in node_ids) else None
    return layers, unreached


def _links(edges: Iterable[EdgeLike]) -> dict[int, set[int]]:
    """Each node's neighbours, whichever way the edge between them points."""
    links: dict[int, set[int]] = {}
    for edge in edges:
        links.setdefault(edge.src, set()).add(edge.dst)
        links.setdefault(edge.dst, set()).add(edge.src)
    return links


def _span(count: int, size: int, gap: int) -> int:
    """The length of `count` boxes of `size` in a line, `gap` apart."""
    return count * size + (count - 1) * gap


def _layer_label(depth: int, unreached: bool) -> str:
    if unreached:
        return "not linked to the task"
    return "task" if depth == 0 else f"depth {depth}"


def _drawn_node(node: NodeLike, *, depth: int, x: int, y: int) -> DrawnNode:
    text = thought_plain(node.thought)
    return DrawnNode(
        node_id=node.node_id,
        kind=node.kind,
        state=node.state,
        depth=depth,
        x=x,
        y=y,
        width=NODE_WIDTH,
        height=NODE_HEIGHT,
        lines=wrap_lines(text),
        text=text if len(text) <= TITLE_CHARS else text[: TITLE_CHARS - 1].rstrip() + "…",
        turn_count=len(node.related_turn_ids),
        folded_into=node.folded_into,
    )


def _placed_row(row: Sequence[NodeLike], *, depth: int, y: int, inner: int) -> list[DrawnNode]:
    """A row's boxes, left to right, centred in the drawing's `inner` width."""
    left = MARGIN + (inner - _span(len(row), NODE_WIDTH, GAP_X)) // 2
    return [
        _drawn_node(node, depth=depth, x=left + column * (NODE_WIDTH + GAP_X), y=y) for column, node in enumerate(row)
    ]


def _placed_layers(
    order: Mapping[int, Sequence[int]],
    by_id: Mapping[int, NodeLike],
    *,
    per_row: int,
    inner: int,
    unreached: int | None,
) -> tuple[list[DrawnNode], list[Layer]]:
    """Every node's box in drawing order, and the layers' bands: each layer below the last,
    wrapped onto rows of `per_row` boxes."""
    nodes: list[DrawnNode] = []
    layers: list[Layer] = []
    y = MARGIN
    for depth, members in order.items():
        rows = [members[start : start + per_row] for start in range(0, len(members), per_row)]
        height = _span(len(rows), NODE_HEIGHT, GAP_ROWS)
        layers.append(Layer(depth=depth, y=y, height=height, label=_layer_label(depth, depth == unreached)))
        for row in rows:
            nodes += _placed_row([by_id[node] for node in row], depth=depth, y=y, inner=inner)
            y += NODE_HEIGHT + GAP_ROWS
        y += GAP_LAYERS - GAP_ROWS
    return nodes, layers


def _edge_path(src: DrawnNode, dst: DrawnNode) -> tuple[float, float, float, float, str]:
    """From the side of `src` facing `dst` to the side of `dst` facing `src`: the bottom to
    the top when one is above the other; two boxes of a row are joined over the top."""
    if src.bottom <= dst.y:  # src above
        x1, y1, x2, y2 = src.cx, src.bottom, dst.cx, dst.y
    elif dst.bottom <= src.y:  # src below
        x1, y1, x2, y2 = src.cx, src.y, dst.cx, dst.bottom
    else:  # the same row: an arc over it
        x1, y1, x2, y2 = src.cx, src.y, dst.cx, dst.y
        lift = min(GAP_LAYERS - 12, 18 + abs(x2 - x1) / 8)
        path = (
            f"M{_number(x1)},{_number(y1)} C{_number(x1)},{_number(y1 - lift)} "
            f"{_number(x2)},{_number(y2 - lift)} {_number(x2)},{_number(y2)}"
        )
        return x1, y1, x2, y2, path
    bend = (y2 - y1) / 2
    path = (
        f"M{_number(x1)},{_number(y1)} C{_number(x1)},{_number(y1 + bend)} "
        f"{_number(x2)},{_number(y2 - bend)} {_number(x2)},{_number(y2)}"
    )
    return x1, y1, x2, y2, path


def _drawn_edge(edge: EdgeLike, src: DrawnNode, dst: DrawnNode) -> DrawnEdge:
    x1, y1, x2, y2, path = _edge_path(src, dst)
    return DrawnEdge(
        src=edge.src,
        dst=edge.dst,
        rationale=edge.rationale,
        x1=_number(x1),
        y1=_number(y1),
        x2=_number(x2),
        y2=_number(y2),
        path=path,
        faded=src.state != NodeState.ACTIVE or dst.state != NodeState.ACTIVE,
    )


def graph_drawing(
    nodes: Sequence[NodeLike],
    edges: Sequence[EdgeLike],
    depths: Mapping[int, int],
    *,
    per_row: int = PER_ROW,
) -> GraphDrawing:
    """Where each node and edge is drawn. `depths` is the node's layer (a node it leaves out
    goes below the deepest); an edge to a node that is not drawn is left out."""
    by_id = {node.node_id: node for node in nodes}
    layers, unreached = _layers(list(by_id), depths)
    drawn_edges = [edge for edge in edges if edge.src in by_id and edge.dst in by_id and edge.src != edge.dst]
    order = layer_order(layers, _links(drawn_edges))

    per_row = max(per_row, 1)
    columns = min(max((len(row) for row in order.values()), default=1), per_row)
    inner = _span(columns, NODE_WIDTH, GAP_X)
    placed, drawn_layers = _placed_layers(order, by_id, per_row=per_row, inner=inner, unreached=unreached)
    last = drawn_layers[-1] if drawn_layers else None
    height = last.y + last.height + MARGIN if last else 2 * MARGIN

    boxes = {node.node_id: node for node in placed}
    return GraphDrawing(
        width=inner + 2 * MARGIN,
        height=height,
        nodes=placed,
        edges=[_drawn_edge(edge, boxes[edge.src], boxes[edge.dst]) for edge in drawn_edges],
        layers=drawn_layers,
    )


# -- the context gauge -------------------------------------------------------------------------


@dataclass(frozen=True)
class GaugePart:
    key: str
    label: str
    tokens: int
    share: str  # of the gauge's length, a CSS percentage


@dataclass(frozen=True)
class ContextGauge:
    tokens: int
    trigger: int
    target: int
    parts: list[GaugePart]  # what the context holds, then the room left below the scale
    markers: list[GaugePart]  # the target and the trigger

    @property
    def over_trigger(self) -> bool:
        return self.tokens > self.trigger

    @property
    def over_target(self) -> bool:
        return self.tokens > self.target


def _share(tokens: int, scale: int) -> str:
    return f"{100 * max(tokens, 0) / scale:.3f}%"


def context_gauge(*, tokens: int, stand_in_tokens: int, trigger: int, target: int) -> ContextGauge:
    """The context's tokens on a scale a fifth longer than the trigger (or than the context,
    when it is past the trigger): the turns sent as they were, the notes and summaries that
    stand for the others, and the room left; the target and the trigger marked."""
    scale = max(int(max(trigger, tokens) * 1.2), 1)
    stand_ins = min(max(stand_in_tokens, 0), max(tokens, 0))
    raw = max(tokens - stand_ins, 0)
    parts = [
        GaugePart(key="turns", label="turns as sent", tokens=raw, share=_share(raw, scale)),
        GaugePart(key="stand_ins", label="notes and summaries", tokens=stand_ins, share=_share(stand_ins, scale)),
        GaugePart(
            key="room", label="room", tokens=scale - raw - stand_ins, share=_share(scale - raw - stand_ins, scale)
        ),
    ]
    markers = [
        GaugePart(key="target", label="recall target", tokens=target, share=_share(target, scale)),
        GaugePart(key="trigger", label="recall trigger", tokens=trigger, share=_share(trigger, scale)),
    ]
    return ContextGauge(tokens=tokens, trigger=trigger, target=target, parts=parts, markers=markers)
