"""A hit with its neighbours: which passages the budget takes (pure), and the one read that finds
them for every hit of a retrieval."""

import pytest

from memory.index.expand import MAX_REACH, Piece, expanded, expansion
from memory.index.retrieve import retrieve
from memsite.llm.tokens import offline_counter
from tests.factories import DocumentFactory, NodeFactory, system


def words(text: str) -> int:
    """A token a word, and one a blank line: easy to reckon budgets with."""
    return len(text.split()) + text.count("\n\n")


def node_of(*texts: str) -> tuple[str, list[Piece]]:
    """A node's text of these paragraphs, a blank line apart, and its pieces."""
    pieces, at = [], 0
    for seq, text in enumerate(texts, start=1):
        pieces.append(Piece(id=100 + seq, seq=seq, start=at, end=at + len(text), text=text))
        at += len(text) + 2
    return "\n\n".join(texts), pieces


def test_neighbours_come_nearest_first_the_one_before_ahead_of_the_one_after():
    text, pieces = node_of("a", "b", "c", "d", "e", "f", "g")
    # d, then c and e (2 each with their blank line), then b: f would make 9.
    span = expansion(pieces, 3, budget=7, count=words)
    assert (span.text, span.tokens) == ("b\n\nc\n\nd\n\ne", 7)
    assert text[span.start : span.end] == span.text


def test_a_side_whose_next_passage_does_not_fit_stops_while_the_other_goes_on():
    text, pieces = node_of("far before", "one two three four five six seven eight", "hit", "after", "later", "last")
    span = expansion(pieces, 2, budget=5, count=words)
    assert (span.text, span.tokens) == ("hit\n\nafter\n\nlater", 5)
    assert text[span.start : span.end] == span.text


def test_a_passage_over_the_budget_alone_comes_alone():
    text, pieces = node_of("before", "a reply of many words, more than the budget", "after")
    span = expansion(pieces, 1, budget=3, count=words)
    assert (span.start, span.end, span.text) == (pieces[1].start, pieces[1].end, pieces[1].text)
    assert span.tokens == 9


def test_the_budget_is_never_passed_and_a_node_s_edge_leaves_the_other_side():
    _, pieces = node_of("first", "second", "third", "fourth")
    for budget in range(1, 12):
        span = expansion(pieces, 0, budget=budget, count=words)
        assert span.tokens <= budget and span.text.startswith("first")
    assert expansion(pieces, 0, budget=7, count=words).text == "first\n\nsecond\n\nthird\n\nfourth"


def test_passages_that_touch_are_joined_as_the_node_has_them():
    # A line longer than a passage is cut between words, or anywhere where it has none.
    pieces = [Piece(1, 1, 0, 5, "abcde"), Piece(2, 2, 5, 9, "fghi"), Piece(3, 3, 11, 14, "jkl")]
    span = expansion(pieces, 0, budget=14, count=len)
    assert (span.start, span.end, span.text, span.tokens) == (0, 14, "abcdefghi\n\njkl", 14)
    assert expansion(pieces, 0, budget=13, count=len).text == "abcdefghi"


@pytest.mark.django_db
def test_one_read_expands_every_content_hit_within_its_own_reach(settings, django_assert_num_queries):
    settings.MEMSITE_EMBEDDINGS = "off"
    paragraphs = [f"Paragraph {n} says enough to stand as a passage of its own, without any other." for n in range(80)]
    paragraphs[1] += " It names the albatross."
    paragraphs[69] += " It names the ocelot."
    text = "\n\n".join(paragraphs)
    folder = NodeFactory(name="zoo", description="")
    DocumentFactory(parent=folder, name="long", description="", content=text.encode())
    DocumentFactory(parent=folder, name="albatross", description="", content=b"")
    hits = retrieve(query="albatross ocelot", by=system(), k=5)
    assert {(hit.kind, hit.seq) for hit in hits} == {("content", 2), ("content", 70), ("label", 0)}

    with django_assert_num_queries(1):
        found = {hit.seq: hit.expanded for hit in expanded(hits, tokens=4_000)}

    assert found[0] is None  # a node's name and description have no neighbours
    # Budget to spare: each takes MAX_REACH passages either side, none of the other hit's beyond.
    assert found[2] is not None and found[2].text == "\n\n".join(paragraphs[: 2 + MAX_REACH])
    assert found[70] is not None and found[70].text == "\n\n".join(paragraphs[69 - MAX_REACH :])
    counter = offline_counter()
    for span in (found[2], found[70]):
        assert text[span.start : span.end] == span.text
        assert span.tokens == sum(map(counter.count, span.text.split("\n\n"))) + span.text.count("\n\n")
        assert counter.count(span.text) <= span.tokens <= 4_000
    assert [hit.expanded for hit in expanded(hits, tokens=None)] == [None, None, None]
