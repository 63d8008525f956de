"""What a question names: pure functions."""

import pytest

from memory.index.naming import names, outermost, without


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("What is Elif's occupation?", ["elif"]),
        ("When does Carla travel to Seoul?", ["carla", "seoul"]),
        ("Describe the API of Porto's tram", ["api", "porto"]),  # the first word names nothing for sure
        ("what is elif's occupation?", []),
        ("Who is Bo? Where does Bo live? Ask Ana.", ["bo", "ana"]),  # sentence starts are not names
        ("What did I say to Dev?", ["dev"]),  # "I" is a function word
        ("Is the port 8081 open?", []),
    ],
)
def test_names_are_capitalised_words_past_a_sentence_start(query, expected):
    assert names(query) == expected


def test_without_takes_the_names_out_with_their_possessive():
    assert without("What is Elif's occupation?", ["elif"]) == "What is occupation?"
    assert without("When does CARLA travel to Seoul’s old town?", ["carla", "seoul"]) == "When does travel to old town?"
    assert without("Who is Bob?", ["bo"]) == "Who is Bob?"  # whole words only
    assert without("Who is Bo?", []) == "Who is Bo?"


def test_outermost_keeps_the_paths_with_no_ancestor_among_them():
    assert outermost(["0001", "00010001", "000100010002", "0002", "00020003", "0003"]) == ["0001", "0002", "0003"]
    assert outermost([]) == []
