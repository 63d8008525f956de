"""Where in a node an answer came from (memory/index/citations.py `locate`): pure."""

from datetime import date

from memory.index.citations import CitablePassage, locate

TEXT = "Codes we use.\n\n| code | when |\n|---|---|\n| 404 | no such resource |\n| 409 | a conflict |"
TABLE = TEXT.index("| code")
PASSAGES = [
    CitablePassage(0, 13, "Codes we use.", node="n1"),
    CitablePassage(TABLE, len(TEXT), TEXT[TABLE:], date(2023, 5, 8), "n1"),
]


def cited(answer: str) -> list[str]:
    return [TEXT[start:end] for _, start, end in locate(answer, PASSAGES)]


def test_a_sentence_quoted_word_for_word_is_cited_where_it_is():
    assert cited("| 409 | a conflict |") == ["| 409 | a conflict |"]


def test_lines_joined_into_one_answer_are_each_cited_not_their_whole_passage():
    assert cited("| code | when | | 404 | no such resource |") == ["| code | when |", "| 404 | no such resource |"]


def test_an_answer_in_other_words_cites_the_passage_sharing_most_of_its_words():
    assert cited("A conflict has code 409 in this table") == [TEXT[TABLE:]]
    assert cited("Nothing in common here at all") == []


def test_each_range_comes_with_the_passage_it_is_in_so_with_its_node_and_date():
    other = CitablePassage(0, 26, "Bo moved to Porto in May.", date(2023, 6, 1), "n2")
    [(passage, start, end)] = locate("| 409 | a conflict |", [*PASSAGES, other])
    assert passage == PASSAGES[1] and (passage.node, passage.date) == ("n1", date(2023, 5, 8))
    assert locate("Bo moved to Porto in May.", [*PASSAGES, other]) == [(other, 0, 25)]


def test_quoted_only_cites_no_passage_for_an_answer_in_other_words():
    assert locate("A conflict has code 409 in this table", PASSAGES, quoted_only=True) == []
    assert [TEXT[start:end] for _, start, end in locate("| 409 | a conflict |", PASSAGES, quoted_only=True)] == [
        "| 409 | a conflict |"
    ]
