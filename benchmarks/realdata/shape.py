"""The one shape every set's loader gives (pure: no database, no files): folders, documents with
the text a node would write, units (the set's gold: a message, a session, a memory, a function,
a paragraph) with their character spans in their document's text, and questions with their
gold units, gold answer, candidate restriction and split."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property

# The untouched slice: the folders (or questions) whose stable hash falls in one bucket of five.
SLICES = 5


@dataclass(frozen=True)
class Folder:
    key: str  # the folder's name under the set's node, unique in the set
    description: str  # says nothing of content: "Chat 7"


@dataclass(frozen=True)
class Document:
    key: str  # its path under the set's node, "chat-07/session-01.md"
    description: str  # "Session 1 of chat 7"
    text: str

    @property
    def folder(self) -> str:
        return self.key.partition("/")[0]


@dataclass(frozen=True)
class Unit:
    key: str  # unique in the set
    document: str  # the key of the document it is in
    start: int  # character offsets in that document's text
    end: int


@dataclass(frozen=True)
class Question:
    key: str  # unique in the set
    text: str
    category: str
    gold: tuple[str, ...]  # unit keys
    untouched: bool
    scope: str = ""  # the folder it is asked in; "" for the whole set
    answer: str = ""  # the set's gold answer, for reading
    # The gold answer's accepted forms, each the parts an answer must hold (a name and its
    # aliases are three forms of one part); none where the set gives no short answer.
    accepted: tuple[tuple[str, ...], ...] = ()
    # The documents it may be answered from, where the set restricts them (RealMem: the sessions
    # before the query's); None: every document in its scope.
    candidates: frozenset[str] | None = None


@dataclass(frozen=True)
class Dataset:
    name: str
    where: str  # the internal folder the set goes under: user, projects or references
    folders: tuple[Folder, ...]
    documents: tuple[Document, ...]
    units: tuple[Unit, ...]
    questions: tuple[Question, ...]
    split: str  # what the untouched slice is, for the report
    # Whether a question only needs its own folder loaded (conversations asked within their
    # chat or persona), so that fewer questions load fewer folders.
    by_folder: bool = False
    dropped: dict[str, int] = field(default_factory=dict)  # questions (or memories) left out, by why

    @cached_property
    def whole_documents(self) -> bool:
        """Whether each unit is a whole document (a session, a memory, a function): a node that
        wants such units asks for the best nodes, not passages."""
        return all(unit.start == 0 and unit.end == len(self.document(unit.document).text) for unit in self.units)

    def text_of(self, unit: Unit) -> str:
        return self.document(unit.document).text[unit.start : unit.end]

    def document(self, key: str) -> Document:
        return self._documents[key]

    @cached_property
    def _documents(self) -> dict[str, Document]:
        return {document.key: document for document in self.documents}


def stable_hash(*parts: str) -> int:
    """The same number for the same parts on every machine and run (Python's hash() is salted)."""
    return int(hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:16], 16)


def untouched(set_name: str, key: str) -> bool:
    """Whether `key` (a folder, or a question where the set has no folders to split) falls in the
    untouched fifth of `set_name`: never looked at while tuning, reported beside the rest."""
    return stable_hash(set_name, key) % SLICES == 0


class TextWriter:
    """A document's text written a piece at a time, each piece's span kept."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.length = 0

    def write(self, piece: str, *, after: str = "\n") -> tuple[int, int]:
        """Append `piece` then `after`; the piece's span (without `after`)."""
        start = self.length
        self.parts += [piece, after]
        self.length += len(piece) + len(after)
        return start, start + len(piece)

    def text(self) -> str:
        return "".join(self.parts)


def bounded(dataset: Dataset, max_questions: int) -> Dataset:
    """At most `max_questions` of the dataset's questions (`sample`); a set asked by folder keeps
    only the folders of the questions taken, whole, the fewest that hold them, so that fewer
    questions cost less indexing. Other sets keep every document: their questions share them."""
    if len(dataset.questions) <= max_questions:
        return dataset
    questions = sample(dataset.name, dataset.questions, max_questions, by_folder=dataset.by_folder)
    if not dataset.by_folder:
        return replace(dataset, questions=questions)
    folders = {q.scope for q in questions}
    documents = tuple(d for d in dataset.documents if d.folder in folders)
    kept = {d.key for d in documents}
    return replace(
        dataset,
        folders=tuple(f for f in dataset.folders if f.key in folders),
        documents=documents,
        units=tuple(u for u in dataset.units if u.document in kept),
        questions=questions,
    )


def sample(name: str, questions: Sequence[Question], count: int, *, by_folder: bool = False) -> tuple[Question, ...]:
    """At most `count` of the questions, in their order: a fifth of them (rounded up) from the
    untouched slice, the rest from the tuned part, each part's taken in stable-hash order (with
    `by_folder`, a folder's at a time, folders in stable-hash order)."""
    share = -(-count // SLICES)
    quotas = {True: share, False: max(count - share, 0)}
    keys: set[str] = set()
    for part, quota in quotas.items():
        pool = [q for q in questions if q.untouched == part]
        keys.update(q.key for q in _taken(name, pool, quota, by_folder))
    return tuple(q for q in questions if q.key in keys)


def _taken(name: str, pool: Sequence[Question], quota: int, by_folder: bool) -> list[Question]:
    if not by_folder:
        return sorted(pool, key=lambda q: stable_hash(name, q.key))[:quota]
    taken: list[Question] = []
    for folder in sorted({q.scope for q in pool}, key=lambda key: stable_hash(name, key)):
        if len(taken) >= quota:
            break
        mine = sorted((q for q in pool if q.scope == folder), key=lambda q: stable_hash(name, q.key))
        taken += mine[: quota - len(taken)]
    return taken


def flattened(value: object) -> Iterable[object]:
    """The leaves of nested lists and dicts, in order (BEAM's evidence comes in both)."""
    if isinstance(value, dict):
        for item in value.values():
            yield from flattened(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from flattened(item)
    elif value is not None:
        yield value
