"""Which passages the memory page's search box lists (memory/logic/find.py)."""

from dataclasses import dataclass

from memory.logic.find import worth_listing


@dataclass(frozen=True)
class Hit:
    name: str
    fulltext: float | None = None
    vector: float | None = None


def names(hits) -> list[str]:
    return [hit.name for hit in worth_listing(hits)]


def test_a_passage_a_word_found_is_listed_however_far_its_meaning():
    hits = [Hit("word", fulltext=1.5, vector=0.02), Hit("name", fulltext=0.4, vector=0.01)]
    assert names(hits) == ["word", "name"]


def test_passages_found_by_meaning_alone_are_listed_near_the_best_of_them():
    hits = [Hit("a", vector=0.38), Hit("b", vector=0.34), Hit("c", vector=0.23), Hit("d", vector=0.06)]
    assert names(hits) == ["a", "b"]


def test_no_passage_is_listed_for_meaning_alone_below_the_floor():
    hits = [Hit("zebra", vector=0.16), Hit("other", vector=0.11)]
    assert names(hits) == []


def test_the_order_is_kept():
    hits = [Hit("b", vector=0.3), Hit("word", fulltext=1.0), Hit("a", vector=0.35)]
    assert names(hits) == ["b", "word", "a"]
