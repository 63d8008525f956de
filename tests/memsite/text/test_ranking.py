"""Units ranked for a question: the weighted share of its roots each holds, BM25 between equal
shares, raised by a close embedding when the caller has one."""

from collections.abc import Sequence

import pytest

from memsite.text.ranking import COSINE_FLOOR, COSINE_FULL, LEXICAL_WEIGHT, ONE_TERM, fuse, rank
from memsite.text.units import headed_units, unit


def texts(question: str, candidates: Sequence[str], **kwargs) -> list[str]:
    return [scored.text for scored in rank(question, [unit(text) for text in candidates], cosines=None, **kwargs)]


def test_a_unit_holding_the_question_scores_one_and_one_holding_nothing_zero():
    scored = rank("kayak", [unit("a blue boat"), unit("a red kayak")], cosines=None)

    assert [(entry.text, entry.score, entry.position) for entry in scored] == [
        ("a red kayak", 1.0, 1),
        ("a blue boat", 0.0, 0),
    ]


def test_the_rarer_term_of_the_question_weighs_more():
    candidates = ["Tom has a bicycle.", "Tom has a car.", "Tom has a dog.", "Ana repaired the bicycle."]

    # Bicycle alone ranks above Tom alone: fewer units hold it.
    assert texts("Tom bicycle", candidates)[:2] == ["Tom has a bicycle.", "Ana repaired the bicycle."]


def test_one_term_of_a_question_of_several_scores_at_most_one_term():
    [scored] = rank("red kayak trip", [unit("a red house")], cosines=None)

    assert 0 < scored.score <= ONE_TERM


def test_among_equal_shares_the_shorter_unit_comes_first_then_the_texts_order():
    long = "the kayak trip notes from a long summer on the river and lakes"

    assert texts("kayak", [long, "a kayak"]) == ["a kayak", long]
    assert texts("kayak", ["my kayak", "a kayak", "boat"]) == ["my kayak", "a kayak", "boat"]


def test_a_headings_terms_count_only_for_a_unit_holding_one_of_the_question():
    units = headed_units("# Kayak prices\n| model | 300 euros |\n| red model | 450 euros |")
    by_text = {scored.text: scored.score for scored in rank("red kayak price", units, cosines=None)}

    assert by_text["| model | 300 euros |"] == 0.0  # under the heading, but holding none itself
    assert by_text["| red model | 450 euros |"] > ONE_TERM  # red, and kayak and price by its heading


def closeness(meanings: dict[str, float]):
    calls = []

    def cosines(query: str, candidates: Sequence[str]) -> list[float]:
        calls.append((query, tuple(candidates)))
        return [meanings.get(text, 0.0) for text in candidates]

    return cosines, calls


def test_a_close_embedding_raises_a_paraphrase_sharing_no_word():
    paraphrase = "He got the cycle from a little store."
    cosines, calls = closeness({paraphrase: COSINE_FULL})

    scored = rank("Where did Tom purchase his bike?", [unit("Tom cooks pasta."), unit(paraphrase)], cosines=cosines)

    assert scored[0].text == paraphrase and scored[0].score == pytest.approx(1 - LEXICAL_WEIGHT)
    assert calls == [("Where did Tom purchase his bike?", ("Tom cooks pasta.", paraphrase))]


def test_a_far_embedding_never_demotes_a_unit_holding_the_question():
    cosines, _ = closeness({})  # every text far from the question

    assert [scored.score for scored in rank("kayak", [unit("a red kayak")], cosines=cosines)] == [1.0]


def test_without_a_model_the_score_is_lexical_and_no_units_ask_for_none():
    cosines, calls = closeness({})
    assert rank("kayak", [], cosines=cosines) == [] and calls == []

    no_model = rank("kayak", [unit("a red kayak"), unit("a blue boat")], cosines=lambda query, candidates: None)
    assert [scored.score for scored in no_model] == [1.0, 0.0]


def test_fusion_maps_cosines_between_the_floor_and_full_onto_the_semantic_share():
    assert fuse(0.0, COSINE_FLOOR) == 0.0 and fuse(0.0, 0.0) == 0.0
    assert fuse(0.0, COSINE_FULL) == pytest.approx(1 - LEXICAL_WEIGHT) == fuse(0.0, 1.0)
    assert fuse(0.8, 0.0) == 0.8  # the lexical share is a floor
    middle = (COSINE_FLOOR + COSINE_FULL) / 2
    assert fuse(0.5, middle) == pytest.approx(LEXICAL_WEIGHT * 0.5 + (1 - LEXICAL_WEIGHT) * 0.5)
