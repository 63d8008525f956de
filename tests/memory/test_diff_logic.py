"""A line diff of two versions' texts: unified hunks that take the old text to the new one,
bounded in the lines compared and shown."""

import difflib
import re

from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from memory.logic import diff
from memory.logic.diff import Kind, line_diff

HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@$")


def with_newlines(found: diff.LineDiff) -> list[tuple[Kind, str]]:
    """The diff's lines with their newlines: every one has its own but a line followed by the
    no-newline mark."""
    lines: list[tuple[Kind, str]] = []
    for line in found.lines:
        if line.kind is Kind.NO_NEWLINE:
            lines[-1] = (lines[-1][0], lines[-1][1].removesuffix("\n"))
        else:
            lines.append((line.kind, line.text if line.kind is Kind.HUNK else line.text + "\n"))
    return lines


def patched(old: str, found: diff.LineDiff) -> str:
    """`old` with the diff's hunks applied, each at the line its header names, its context and
    removed lines checked against `old`."""
    lines, out, at = old.splitlines(keepends=True), [], 0
    for kind, text in with_newlines(found):
        if kind is Kind.HUNK:
            match = HUNK.match(text)
            assert match, text
            start, length = int(match.group(1)), int(match.group(2) or 1)
            start = start - 1 if length else start  # an empty side names the line before it
            out += lines[at:start]
            at = start
        elif kind is Kind.ADDED:
            out.append(text)
        else:
            assert lines[at] == text, (at, text)
            if kind is Kind.SAME:
                out.append(text)
            at += 1
    return "".join(out + lines[at:])


texts = st.lists(st.sampled_from(["a", "b", "c", "", "long line"]), max_size=30).map("\n".join)


@hypothesis_settings(max_examples=300, derandomize=True, database=None, deadline=None)
@given(texts, texts)
def test_the_hunks_take_the_old_text_to_the_new(old, new):
    found = line_diff(old, new)
    assert not found.cut and found.compared_all
    assert patched(old, found) == new
    assert (found.lines == ()) == (old == new)


def test_a_small_change_reads_as_diff_u_has_it():
    old = "".join(f"line {number}\n" for number in range(1, 30))
    new = old.replace("line 12", "line twelve").replace("line 27", "line 27\nline 27b")
    expected = "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True), "v1", "v2"))
    assert line_diff(old, new).unified("v1", "v2") == expected


def test_the_same_texts_have_no_diff():
    assert line_diff("same\n", "same\n").unified("v1", "v2") == ""


def test_a_lost_last_newline_is_a_change_as_diff_u_writes_it():
    found = line_diff("one\ntext\n", "one\ntext")
    assert found.unified("v1", "v2") == (
        "--- v1\n+++ v2\n@@ -1,2 +1,2 @@\n one\n-text\n+text\n\\ No newline at end of file\n"
    )


def test_what_is_shown_is_cut_at_its_lines(monkeypatch):
    monkeypatch.setattr(diff, "LINES_SHOWN", 10)
    found = line_diff("", "\n".join(str(number) for number in range(100)))
    assert len(found.lines) == 10 and found.cut and found.compared_all


def test_what_is_shown_is_cut_at_its_characters(monkeypatch):
    monkeypatch.setattr(diff, "CHARS_SHOWN", 1_000)
    found = line_diff("short", "x" * 5_000)
    assert sum(len(line.text) for line in found.lines) == 1_000 and found.cut
    assert found.lines[-1].text == "x" * (1_000 - sum(len(line.text) for line in found.lines[:-1]))


def test_only_the_first_lines_past_what_the_texts_share_are_compared(monkeypatch):
    monkeypatch.setattr(diff, "LINES_COMPARED", 50)
    shared = "\n".join(f"shared {number}" for number in range(1_000))
    old = shared + "\n" + "\n".join(f"old {number}" for number in range(100))
    new = shared + "\n" + "\n".join(f"new {number}" for number in range(100))
    found = line_diff(old, new)
    assert not found.compared_all and not found.cut
    assert found.lines[0].text.startswith("@@ -998,")  # at the change, past the 1,000 shared lines
    assert sum(line.kind is Kind.REMOVED for line in found.lines) == 50 - diff.CONTEXT_LINES


def test_a_change_at_the_end_of_a_long_text_is_all_compared(monkeypatch):
    monkeypatch.setattr(diff, "LINES_COMPARED", 50)
    old = "".join(f"line {number}\n" for number in range(10_000))
    found = line_diff(old, old + "the end\n")
    assert found.compared_all
    assert [line.text for line in found.lines if line.kind is Kind.ADDED] == ["the end"]
