"""The time a question names, resolved against a reference date, and whether it asks when (pure)."""

from datetime import date

import pytest

from memory.logic.asked_time import Window, asks_when, named_times, names_time, said_when, windows

WEDNESDAY = date(2023, 5, 17)  # the reference date of these questions


def window(first: str, last: str) -> Window:
    return Window(date.fromisoformat(first), date.fromisoformat(last))


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What did Ana say in May 2023?", [window("2023-05-01", "2023-05-31")]),
        ("Where was I on Monday, 8 May 2023?", [window("2023-05-08", "2023-05-08")]),
        ("What happened on 2023-05-08?", [window("2023-05-08", "2023-05-08")]),
        ("What did I do in 2022?", [window("2022-01-01", "2022-12-31")]),
        ("What did we decide last week?", [window("2023-05-08", "2023-05-14")]),
        ("What did we decide this week?", [window("2023-05-15", "2023-05-21")]),
        ("What happened yesterday?", [window("2023-05-16", "2023-05-16")]),
        ("And the day before yesterday?", [window("2023-05-15", "2023-05-15")]),
        ("What did I say today?", [window("2023-05-17", "2023-05-17")]),
        ("What did I eat on 8 May?", [window("2023-05-08", "2023-05-08")]),
        ("What happened on the 20th of May?", [window("2022-05-20", "2022-05-20")]),  # not yet this year
        ("What did I buy two weeks ago?", [window("2023-05-01", "2023-05-07")]),
        ("Who called 3 days ago?", [window("2023-05-14", "2023-05-14")]),
        ("What happened a couple of days ago?", [window("2023-05-15", "2023-05-15")]),
        ("What did we plan a month ago?", [window("2023-04-01", "2023-04-30")]),
        ("What did I do in the last 3 days?", [window("2023-05-15", "2023-05-17")]),
        ("What happened in the past few days?", [window("2023-05-15", "2023-05-17")]),
        ("What changed in the past week?", [window("2023-05-11", "2023-05-17")]),
        ("What did we do last month?", [window("2023-04-01", "2023-04-30")]),
        ("And last year?", [window("2022-01-01", "2022-12-31")]),
        ("What did we do last weekend?", [window("2023-05-13", "2023-05-14")]),
        ("What happened last Monday?", [window("2023-05-15", "2023-05-15")]),
        ("What happened on Wednesday?", [window("2023-05-17", "2023-05-17")]),
        ("What happened last Wednesday?", [window("2023-05-10", "2023-05-10")]),
        ("What did we do in March?", [window("2023-03-01", "2023-03-31")]),
        ("What did we do in May?", [window("2023-05-01", "2023-05-31")]),
        ("What did we do last May?", [window("2022-05-01", "2022-05-31")]),
        ("What did we do in June?", [window("2022-06-01", "2022-06-30")]),  # the last June begun
        ("What happened before March 2024?", [window("0001-01-01", "2024-02-29")]),
        ("What happened after 8 May 2023?", [window("2023-05-09", "9999-12-31")]),
        ("What changed since last week?", [window("2023-05-08", "9999-12-31")]),
        ("What was done until April 2023?", [window("0001-01-01", "2023-04-30")]),
        ("What did we do between May and June 2023?", [window("2023-05-01", "2023-06-30")]),
        ("What happened from April to June 2023?", [window("2023-04-01", "2023-06-30")]),
        ("In May 2023 and in August 2023?", [window("2023-05-01", "2023-05-31"), window("2023-08-01", "2023-08-31")]),
    ],
)
def test_a_named_time_is_a_window_of_days_resolved_against_the_reference(question, expected):
    assert windows(question, WEDNESDAY) == expected


@pytest.mark.parametrize(
    "question",
    [
        "May I ask where Ana lives?",
        "What is in the 2023 report?",
        "Did we have to march there?",
        "Which port, 8080 or 2020?",
        "What did Ana say?",
        "How many Mondays are in a year?",
    ],
)
def test_words_that_only_look_like_times_name_none(question):
    assert named_times(question) == []


@pytest.mark.parametrize(
    ("question", "reference"),
    [
        ("What happened in the last 999 years?", date(900, 1, 1)),
        ("What happened after 9999-12-31?", WEDNESDAY),
        ("What happened before 0001-01-01?", WEDNESDAY),
        ("What happened on 8 May?", date(1, 1, 1)),
        ("What happened last year?", date(1, 3, 1)),
        ("What happened two months ago?", date(1, 1, 20)),
    ],
)
def test_a_time_before_year_1_or_after_9999_is_left_out(question, reference):
    assert named_times(question) and windows(question, reference) == []


def test_relative_times_depend_on_the_reference_and_written_ones_do_not():
    assert [named.relative for named in named_times("in May 2023, or last week, or on 8 May")] == [False, True, True]
    assert windows("last week", date(2024, 1, 3)) == [window("2023-12-25", "2023-12-31")]
    assert windows("in May 2023", date(2030, 1, 1)) == [window("2023-05-01", "2023-05-31")]
    assert windows("on 29 February", date(2023, 5, 17)) == [window("2020-02-29", "2020-02-29")]


@pytest.mark.parametrize(
    ("question", "asks"),
    [
        ("When did Ana move to Porto?", True),
        ("when was the release", True),
        ("What date is the launch?", True),
        ("Which year did we start?", True),
        ("How long ago did Bo call?", True),
        ("How many days did the trip take?", True),
        ("What did Ana say when she left?", False),
        ("How long is the bridge?", False),
        ("Where does Ana live?", False),
    ],
)
def test_a_question_asking_for_a_time_is_told_apart(question, asks):
    assert asks_when(question) is asks


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("We moved on 3 June", True),
        ("the release is 2023-06-01", True),
        ("I went to the support group yesterday", True),
        ("back on Monday", True),
        ("that was three weeks ago", True),
        ("since 2019", True),
        ("the call is at 3pm", True),
        ("we moved to Porto", False),
        ("you may go now", False),
        ("port 80 is open", False),
    ],
)
def test_a_passage_saying_a_time_is_told_apart(text, says):
    assert names_time(text) is says


MAY_8 = date(2023, 5, 8)


@pytest.mark.parametrize(
    ("question", "answer", "evidence", "said"),
    [
        ("When did Ana move?", "Ana: we moved yesterday.", MAY_8, "2023-05-08: Ana: we moved yesterday."),
        ("When did Ana move?", "Ana moved on 3 May 2023.", MAY_8, "Ana moved on 3 May 2023."),  # it says already
        ("When did Ana move?", "Ana: we moved yesterday.", None, "Ana: we moved yesterday."),  # nothing dates it
        ("Where did Ana move?", "Ana: we moved to Porto.", MAY_8, "Ana: we moved to Porto."),  # not asked when
    ],
)
def test_an_answer_to_when_is_headed_by_its_evidence_s_date_unless_it_writes_one(question, answer, evidence, said):
    assert said_when(question, answer, evidence) == said
