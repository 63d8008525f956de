"""A line diff of two texts in unified form, bounded: what a document's history shows of a
change, on its page and through the API. Pure."""

import difflib
from dataclasses import dataclass
from enum import StrEnum

CONTEXT_LINES = 3
# Lines compared at most of each text, past the start and end they share. difflib's matching
# grows with the square of the lines when many repeat: two texts of 5,000 such lines take
# seconds, 2,000 a tenth of one. A small change to a long text is all in the part compared.
LINES_COMPARED = 2_000
# What is shown at most: a diff is read, not downloaded.
LINES_SHOWN = 1_000
CHARS_SHOWN = 100_000


class Kind(StrEnum):
    SAME = "same"
    ADDED = "added"
    REMOVED = "removed"
    HUNK = "hunk"  # the `@@ -a,b +c,d @@` line a group of changes starts with
    NO_NEWLINE = "no-newline"  # after the line above it, a text's last, which has no newline


MARKS = {Kind.SAME: " ", Kind.ADDED: "+", Kind.REMOVED: "-", Kind.HUNK: "", Kind.NO_NEWLINE: ""}
NO_NEWLINE = "\\ No newline at end of file"
# The lines each of difflib's opcodes shows, and of which text: `a`, the old, or `b`, the new.
OPCODE_LINES: dict[str, tuple[tuple[Kind, str], ...]] = {
    "equal": ((Kind.SAME, "a"),),
    "delete": ((Kind.REMOVED, "a"),),
    "insert": ((Kind.ADDED, "b"),),
    "replace": ((Kind.REMOVED, "a"), (Kind.ADDED, "b")),
}


@dataclass(frozen=True)
class DiffLine:
    kind: Kind
    text: str

    @property
    def marked(self) -> str:
        """The line as a unified diff writes it."""
        return MARKS[self.kind] + self.text


@dataclass(frozen=True)
class LineDiff:
    lines: tuple[DiffLine, ...]
    cut: bool = False  # there was more to show than LINES_SHOWN lines or CHARS_SHOWN characters
    compared_all: bool = True  # False: only the first LINES_COMPARED lines that differ were compared

    def unified(self, old_label: str, new_label: str) -> str:
        """The diff as a unified diff's text; empty when the texts are the same."""
        if not self.lines:
            return ""
        return "\n".join([f"--- {old_label}", f"+++ {new_label}", *(line.marked for line in self.lines)]) + "\n"


def _lines(text: str) -> list[str]:
    """The text's lines, each with its newline: the last has none when the text does not end
    with one, so that a text that gained or lost its last newline differs. Split on "\n"
    alone, as `diff` does."""
    *ended, last = text.split("\n")
    return [line + "\n" for line in ended] + ([last] if last else [])


def _shared_start(a: list[str], b: list[str]) -> int:
    shared = 0
    for old, new in zip(a, b, strict=False):
        if old != new:
            break
        shared += 1
    return shared


def _range(start: int, length: int) -> str:
    """A side's range in a hunk line, as `diff -u` writes it (`start` from 0)."""
    if length == 1:
        return str(start + 1)
    return f"{start + 1 if length else start},{length}"


def line_diff(old: str, new: str) -> LineDiff:
    """`new` against `old`, line by line, in hunks with CONTEXT_LINES of context."""
    if old == new:
        return LineDiff(())
    a, b = _lines(old), _lines(new)
    start = _shared_start(a, b)
    end = _shared_start(a[start:][::-1], b[start:][::-1])
    first = max(0, start - CONTEXT_LINES)  # with the context the first change needs
    kept_end = max(0, end - CONTEXT_LINES)
    a, b = a[first : len(a) - kept_end], b[first : len(b) - kept_end]
    compared_all = len(a) <= LINES_COMPARED and len(b) <= LINES_COMPARED
    a, b = a[:LINES_COMPARED], b[:LINES_COMPARED]
    shown = _Shown()
    for group in difflib.SequenceMatcher(None, a, b).get_grouped_opcodes(CONTEXT_LINES):
        a_start, a_end, b_start, b_end = group[0][1], group[-1][2], group[0][3], group[-1][4]
        shown.add(
            Kind.HUNK, f"@@ -{_range(first + a_start, a_end - a_start)} +{_range(first + b_start, b_end - b_start)} @@"
        )
        for tag, i1, i2, j1, j2 in group:
            sides = {"a": a[i1:i2], "b": b[j1:j2]}
            for kind, side in OPCODE_LINES[tag]:
                for text in sides[side]:
                    shown.add(kind, text.removesuffix("\n"))
                    if not text.endswith("\n"):
                        shown.add(Kind.NO_NEWLINE, NO_NEWLINE)
        if shown.cut:
            break
    return LineDiff(tuple(shown.lines), cut=shown.cut, compared_all=compared_all)


class _Shown:
    """The lines shown so far, within LINES_SHOWN and CHARS_SHOWN."""

    def __init__(self) -> None:
        self.lines: list[DiffLine] = []
        self.chars = 0
        self.cut = False

    def add(self, kind: Kind, text: str) -> None:
        if self.cut:
            return
        room = CHARS_SHOWN - self.chars
        if len(self.lines) >= LINES_SHOWN or room <= 0:
            self.cut = True
            return
        if len(text) > room:
            text, self.cut = text[:room], True
        self.lines.append(DiffLine(kind, text))
        self.chars += len(text)
