"""What a chat reply may draw on: the brain's facts and episodes and the space's passages, each
an item with the id a reply cites it by (`fact:3`, `episode:7`, `node:<id>`). Pure: the chat
service reads the items, the prompt fits them. Explained in docs/brains.md."""

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

FACT, EPISODE, NODE = "fact", "episode", "node"
KINDS = (FACT, EPISODE, NODE)
# What a stored citation's ref may be: a seq, a node's id. An imported memory.json's chat lines
# may say anything: a citation of another shape is not shown.
REFS = {FACT: re.compile(r"[0-9]{1,19}"), EPISODE: re.compile(r"[0-9]{1,19}"), NODE: re.compile(r"[\w-]{1,64}")}
LABEL_CHARS = 200


@dataclass(frozen=True)
class MemoryItem:
    kind: str  # fact, episode or node (a passage of a node's text)
    ref: str  # a fact's or episode's seq, a node's id
    text: str
    label: str = ""  # a node's readable path; an episode's type

    @property
    def id(self) -> str:
        return f"{self.kind}:{self.ref}"

    def citation(self) -> dict[str, str]:
        """What a reply line keeps of an item it cites: enough to link to it."""
        label = self.label if self.kind == NODE and self.label else f"{self.kind} {self.ref}"
        return {"id": self.id, "kind": self.kind, "ref": self.ref, "label": label}


def citations_kept(cited: Iterable[Any], given: Sequence[MemoryItem]) -> list[dict[str, str]]:
    """The citations of the items a reply cites among those its prompt gave, once each, in the
    reply's order: an id the prompt did not give (invented, or cut to fit) is dropped."""
    by_id = {item.id: item for item in given}
    kept: dict[str, dict[str, str]] = {}
    for entry in cited:
        key = entry.strip() if isinstance(entry, str) else None
        if key in by_id and key not in kept:
            kept[key] = by_id[key].citation()
    return list(kept.values())


def citations_shown(entry: Any) -> list[dict[str, str]]:
    """The well-formed citations a stored chat entry keeps (`kind`, `ref`, `label`)."""
    cited = entry.get("citations") if isinstance(entry, dict) else None
    shown = []
    for citation in cited if isinstance(cited, list) else []:
        if not isinstance(citation, dict):
            continue
        kind, ref, label = citation.get("kind"), citation.get("ref"), citation.get("label")
        if kind in REFS and isinstance(ref, str) and REFS[kind].fullmatch(ref):
            label = label[:LABEL_CHARS] if isinstance(label, str) and label.strip() else f"{kind} {ref}"
            shown.append({"kind": kind, "ref": ref, "label": label})
    return shown


def anchor(kind: str, ref: str) -> str:
    """The id of a fact's or episode's entry on the brain page (`fact-3`)."""
    return f"{kind}-{ref}"


def records_cited(entries: Iterable[Any]) -> set[tuple[str, int]]:
    """The facts and episodes that chat entries cite, as (kind, seq)."""
    return {
        (citation["kind"], int(citation["ref"]))
        for entry in entries
        for citation in citations_shown(entry)
        if citation["kind"] != NODE
    }


@dataclass(frozen=True)
class Citable:
    """What chat citations of facts and episodes may link to: the anchors of the entries the
    brain page shows, and the cited entries' texts by anchor (for those it does not show)."""

    shown: frozenset[str] = frozenset()
    texts: Mapping[str, str] = field(default_factory=dict)
