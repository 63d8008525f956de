"""Where in a node an answer came from (memory/index/citations.py `locate`): pure."""

from memory.index.citations import locate

TEXT = "Codes we use.\n\n| code | when |\n|---|---|\n| 404 | no such resource |\n| 409 | a conflict |"
TABLE = TEXT.index("| code")
PASSAGES = [(0, 13, "Codes we use."), (TABLE, len(TEXT), TEXT[TABLE:])]


def cited(answer: str) -> list[str]:
    return [TEXT[start:end] for start, end in locate(answer, PASSAGES)]


def test_a_sentence_quoted_word_for_word_is_cited_where_it_is():
    assert cited("| 409 | a conflict |") == ["| 409 | a conflict |"]


def test_lines_joined_into_one_answer_are_each_cited_not_their_whole_passage():
    assert cited("| code | when | | 404 | no such resource |") == ["| code | when |", "| 404 | no such resource |"]


def test_an_answer_in_other_words_cites_the_passage_sharing_most_of_its_words():
    assert cited("A conflict has code 409 in this table") == [TEXT[TABLE:]]
    assert cited("Nothing in common here at all") == []
