"""A content hit with its neighbours (`expand_tokens` of `/api/retrieve/`): the passages around
it in its node, nearest first, while they fit a token budget. A reply is read with the question
it answers, a paragraph with the ones that lead to it, in one call rather than a retrieve and a
read. Explained in docs/retrieval.md, "A hit with its neighbours"."""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cache
from typing import TYPE_CHECKING

from django.db.models import Q

from memory.models import Passage
from memsite.llm.tokens import offline_counter

if TYPE_CHECKING:
    from memory.index.retrieve import Hit

MAX_EXPAND_TOKENS = 4_000
EXPAND_TOKENS_HELP = (
    f"1 to {MAX_EXPAND_TOKENS}: each content hit also comes with its passage and the passages around it in its "
    "node (`expanded`), nearest first, the one before first, while they fit in this many tokens. Absent for none."
)
# Passages read on either side of a hit, at most: each costs a token at least, so a budget of n
# never takes more than n a side; and the read stays bounded, 65 rows a hit (6,500 for k = 100)
# however long its node.
MAX_REACH = 32
# Between two passages that do not touch in the node's text: a blank line, whatever whitespace
# the text has there (reading the text itself would read whole contents).
GAP = "\n\n"


@dataclass(frozen=True)
class Expansion:
    start: int  # character offsets into the node's text, of the first passage and past the last
    end: int
    text: str
    tokens: int  # the passages' tokens and their gaps', each counted alone


@dataclass(frozen=True)
class Piece:
    """A content passage of a node, as the expansion reads it."""

    id: int
    seq: int
    start: int
    end: int
    text: str


def joint(left: Piece, right: Piece) -> str:
    """What stands between two passages in order: nothing where they touch (a run of characters
    with no space in it, cut where it passed a passage's length), else a blank line."""
    return "" if left.end == right.start else GAP


def expansion(pieces: Sequence[Piece], at: int, *, budget: int, count: Callable[[str], int]) -> Expansion:
    """`pieces[at]` with the passages around it in `pieces` (one node's, in order), by
    distance, the one before ahead of the one after at the same distance (the question before
    the reply that answers it), each taken while the tokens stay within `budget`: a side whose
    next passage does not fit takes no more, the other goes on. The hit itself is always kept,
    however many tokens it holds."""
    first = last = at
    total = count(pieces[at].text)
    growing = [-1, 1]
    while growing:
        for side in tuple(growing):
            edge = first if side < 0 else last
            near = edge + side
            if not 0 <= near < len(pieces):
                growing.remove(side)
                continue
            left, right = (pieces[near], pieces[edge]) if side < 0 else (pieces[edge], pieces[near])
            cost = count(pieces[near].text) + count(joint(left, right))
            if total + cost > budget:
                growing.remove(side)
                continue
            total += cost
            first, last = min(first, near), max(last, near)
    kept = pieces[first : last + 1]
    text = kept[0].text + "".join(joint(left, right) + right.text for left, right in zip(kept, kept[1:], strict=False))
    return Expansion(start=kept[0].start, end=kept[-1].end, text=text, tokens=total)


def expanded(hits: list["Hit"], *, tokens: int | None) -> list["Hit"]:
    """The hits, each content hit with its neighbours within `tokens` tokens (label hits, a
    node's name and description, have none); as they are when `tokens` is None. Two hits of one
    node may cover each other: each keeps its own expansion."""
    if tokens is None:
        return hits
    content = [hit for hit in hits if hit.kind == Passage.Kind.CONTENT]
    reach = min(MAX_REACH, tokens)
    pieces = _neighbours(content, reach=reach)
    count = cache(offline_counter().count)  # a passage near two hits is counted once
    found = {hit.passage_id: _expansion(hit, pieces.get(hit.node_id, []), reach, tokens, count) for hit in content}
    return [replace(hit, expanded=found[hit.passage_id]) if hit.passage_id in found else hit for hit in hits]


def _expansion(hit: "Hit", pieces: list[Piece], reach: int, budget: int, count: Callable[[str], int]) -> Expansion:
    """The hit's expansion among its node's pieces; the hit alone if a write since the ranking
    took its passage away."""
    own = next((piece for piece in pieces if piece.id == hit.passage_id), None)
    if own is None:
        return expansion([Piece(hit.passage_id, hit.seq, hit.start, hit.end, hit.text)], 0, budget=budget, count=count)
    # Another hit of the node may have read further: its rows are no neighbours of this one.
    window = [piece for piece in pieces if abs(piece.seq - own.seq) <= reach]
    return expansion(window, window.index(own), budget=budget, count=count)


def _neighbours(hits: list["Hit"], *, reach: int) -> dict[str, list[Piece]]:
    """The content passages within `reach` places of each hit, by node in order: one query, a
    range of the (node, seq) index a hit, however long the nodes."""
    if not hits:
        return {}
    around = Q()
    for hit in hits:
        around |= Q(node_id=hit.node_id, seq__range=(max(1, hit.seq - reach), hit.seq + reach))
    rows = (
        Passage.objects.filter(around, kind=Passage.Kind.CONTENT)
        .order_by("node_id", "seq")
        .values_list("node_id", "id", "seq", "start", "end", "text")
    )
    pieces: dict[str, list[Piece]] = {}
    for node_id, pk, seq, start, end, text in rows:
        pieces.setdefault(node_id, []).append(Piece(pk, seq, start, end, text))
    return pieces
