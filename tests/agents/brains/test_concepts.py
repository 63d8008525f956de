"""The concepts a thought adds: `agents.brains.logic.concepts`."""

from agents.brains.logic.concepts import STOP_WORDS, key_terms


def test_concepts_are_the_most_frequent_words_as_written_in_order_of_appearance():
    assert key_terms("Rivers feed lakes; rivers carve valleys, lakes keep water 2024 2024") == [
        "rivers",
        "lakes",
        "feed",
    ]


def test_a_stem_is_named_by_its_most_frequent_form_and_counted_with_its_other_forms():
    # "deployment" and "deploying" count with "deployments" (4 in all, more than "notes").
    text = "Notes, notes, notes. The deployments: a deployment, deploying deployments."

    assert key_terms(text) == ["deployments", "notes"]
    # Equal counts: the form written first.
    assert key_terms("recurring themes, recurring; recur") == ["recurring", "themes"]


def test_stop_words_digits_short_words_and_the_frame_of_a_reflection_are_no_concepts():
    assert {"them", "themselves", "about", "would", "nothing"} <= STOP_WORDS
    assert key_terms("Them, themselves, about them: would they? 12345 a an to of it") == []
    assert key_terms("I recalled the places I explored for my goal and listed their children.") == []


def test_paths_and_urls_are_no_concepts_but_words_joined_by_underscores_are():
    text = "Read /projects/todo-api/app.py and https://docs.example.org/guide: user_preferences matter."

    assert key_terms(text) == ["user", "preferences", "matter"]
