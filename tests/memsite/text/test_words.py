"""A text's content words: stop words out, as roots or light stems, the most frequent first."""

from memsite.text.stems import root
from memsite.text.words import content_words, frequent_words, overlap, roots, terms, words


def test_content_words_leave_out_stop_words_a_prompts_words_and_single_characters():
    text = "Please reply in JSON: where is the red Kayak? A red kayak, x 2"

    assert content_words(text) == ["red", "kayak", "red", "kayak"]


def test_roots_stems_and_words_follow_the_content_words_in_order():
    text = "The kayaks ran, running home."

    assert words(text) == [("kayak", "kayaks"), ("ran", "ran"), ("runn", "running"), ("home", "home")]
    assert terms(text) == ["kayak", "ran", "runn", "home"]
    assert roots(text) == [root("kayak"), "run", "run", root("home")]


def test_overlap_prefers_a_short_precise_text_to_one_mentioning_everything():
    query = frozenset(terms("red kayak"))

    precise = overlap(query, "red kayak")
    sprawling = overlap(query, "red kayak blue boat green canoe yellow raft")

    assert precise > sprawling > 0
    assert overlap(query, "kayak kayak kayak") == overlap(query, "kayak") == 1.0  # repeats count once


def test_overlap_is_nothing_without_terms_on_either_side():
    assert overlap(frozenset(), "red kayak") == 0.0
    assert overlap(frozenset({"red"}), "the of and") == 0.0


def test_frequent_words_come_most_frequent_first_as_first_written_ties_in_order():
    text = "Kayaks on the lake. The kayak leaked; lake water, more lake. 2024 2024 2024 go go go"

    assert frequent_words(text) == ("lake", "kayaks", "leaked", "water")
    assert frequent_words(text, count=1) == ("lake",)
