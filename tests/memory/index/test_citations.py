"""Where in a node an answer came from (memory/index/citations.py `locate`, `date_at`): pure."""

from datetime import date

from memory.index.citations import Held, date_at, locate

TEXT = "Codes we use.\n\n| code | when |\n|---|---|\n| 404 | no such resource |\n| 409 | a conflict |"
TABLE = TEXT.index("| code")
PASSAGES = [Held(0, 13, "Codes we use."), Held(TABLE, len(TEXT), TEXT[TABLE:], date(2023, 5, 8))]


def cited(answer: str) -> list[str]:
    return [TEXT[start:end] for start, end in locate(answer, PASSAGES)]


def test_a_sentence_quoted_word_for_word_is_cited_where_it_is():
    assert cited("| 409 | a conflict |") == ["| 409 | a conflict |"]


def test_lines_joined_into_one_answer_are_each_cited_not_their_whole_passage():
    assert cited("| code | when | | 404 | no such resource |") == ["| code | when |", "| 404 | no such resource |"]


def test_an_answer_in_other_words_cites_the_passage_sharing_most_of_its_words():
    assert cited("A conflict has code 409 in this table") == [TEXT[TABLE:]]
    assert cited("Nothing in common here at all") == []


def test_a_citation_is_dated_by_the_passage_it_starts_in():
    [start, _] = locate("| 409 | a conflict |", PASSAGES)[0]
    assert date_at(start, PASSAGES) == date(2023, 5, 8)
    assert date_at(0, PASSAGES) is None  # an undated passage
    assert date_at(len(TEXT), PASSAGES) is None  # past the text's end
