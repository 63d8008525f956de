"""The dates memory speaks of, read from a field, a description and a text's lines (pure)."""

from datetime import date

import pytest

from memory.logic.dates import HEADER_CHARS, Timeline, document_date, first_date, iso_date

MAY_8 = date(2023, 5, 8)


@pytest.mark.parametrize(
    "written",
    [
        "2023-05-08",
        "Date: 2023-05-08",
        "2023/05/08 (Mon) 14:02",
        "2023.05.08",
        "2023-05-08T14:02:00Z",
        "8 May 2023",
        "8th of May, 2023",
        "08-May-2023",
        "Monday, 8 May 2023",
        "May 8, 2023, 1:56 pm",
        "may 8th 2023",
        "1:56 pm on 8 May, 2023",
        "Session 17 with Ana and Bo, 8 May 2023",
        "Sept. 30, 2023 was later; 8 May 2023 first",  # the first written, not the earliest
    ],
)
def test_the_first_date_written_is_read_in_its_usual_forms(written):
    expected = date(2023, 9, 30) if written.startswith("Sept") else MAY_8
    assert first_date(written) == expected


@pytest.mark.parametrize(
    "written",
    [
        "05/08/2023",  # May or August: the text does not say
        "2023-02-30",  # no such day
        "8 May",  # no year
        "in May 2023",  # no day
        "version 12023-05-08",  # a longer number
        "2023-13-01",  # no such month
    ],
)
def test_what_names_no_single_day_is_no_date(written):
    assert first_date(written) is None


def test_a_documents_date_is_the_given_one_then_the_description_s_then_its_first_lines():
    text = "# Standup\n\nDate: 2023-05-09\n\nAna: the build is green."
    assert document_date(given=MAY_8, description="10 May 2023", text=text) == MAY_8
    assert document_date(given=None, description="Standup of 10 May 2023", text=text) == date(2023, 5, 10)
    assert document_date(given=None, description="Standup", text=text) == date(2023, 5, 9)
    assert document_date(given=None, description="", text="Ana: hi") is None


@pytest.mark.parametrize(
    ("text", "day"),
    [
        ("# Session 17 with Ana and Bo, 8 May 2023\nAna: hi", MAY_8),  # a title: a date anywhere in it
        ("# Standup\n\n> Date: 2023-05-08\nAna: hi", MAY_8),  # below it, a line that begins with one
        ("\n\n\n\n\n\ntitle\n\n2023/05/08 (Mon) 14:02\nAna: hi", MAY_8),  # blank lines are not lines
        ("Ana: the call went well.\nBo: next one on 3 June 2023, then.", None),  # said in a sentence
        ("\n".join(f"line {n}" for n in range(5)) + "\nDate: 2023-05-08", None),  # the sixth line
        ("title\n" + "x" * HEADER_CHARS + "\nDate: 2023-05-08", None),  # past the first 1,000 characters
    ],
)
def test_a_text_s_first_lines_date_it_by_its_title_or_a_line_that_begins_with_a_date(text, day):
    assert document_date(given=None, description="", text=text) == day


@pytest.mark.parametrize(
    ("value", "day"),
    [
        ("2023-05-08", MAY_8),
        (" 2023-05-08 ", MAY_8),
        ("2023-05-08T14:02:00", MAY_8),
        ("2023-05-08T23:30:00-05:00", MAY_8),  # the day as written, not moved by its zone
        ("2023-05-08T01:00:00+09:00", MAY_8),
        ("2023-05-08 14:02", MAY_8),
    ],
)
def test_an_iso_date_or_date_and_time_is_its_day_as_written(value, day):
    assert iso_date(value) == day


@pytest.mark.parametrize("value", ["", "8 May 2023", "2023-02-30", "2023/05/08", "yesterday", "20230508x"])
def test_anything_else_is_no_iso_date(value):
    with pytest.raises(ValueError, match="ISO 8601"):
        iso_date(value)


TEXT = """# Sessions
Ana: before any date
Date: 2023-05-07
Ana: on the seventh
[2023-05-08 14:02] Bo: a log line dates itself
Bo: and the line after it
**Date:** 9 May 2023
- Session date: May 10, 2023
## Thursday, 11 May 2023
1:56 pm on 12 May, 2023
2023/05/13 (Sat) 02:21
We met on 3 June 2023, said in the middle of a line
Today - no date on this line
> Day: 14 May 2023
"""


def test_each_place_in_a_text_is_dated_by_the_last_dated_line_at_or_above_it():
    timeline = Timeline(TEXT, start_date=date(2023, 1, 1))

    def at(line: str) -> date | None:
        return timeline.at(TEXT.index(line))

    assert at("# Sessions") == at("Ana: before any date") == date(2023, 1, 1)
    assert at("Date: 2023-05-07") == at("Ana: on the seventh") == date(2023, 5, 7)
    assert at("[2023-05-08") == at("Bo: and the line after") == MAY_8
    assert at("**Date:**") == date(2023, 5, 9)
    assert at("- Session date") == date(2023, 5, 10)
    assert at("## Thursday") == date(2023, 5, 11)
    assert at("1:56 pm") == date(2023, 5, 12)
    assert at("2023/05/13") == at("We met on 3 June") == at("Today - no date") == date(2023, 5, 13)
    assert at("> Day:") == date(2023, 5, 14)
    assert Timeline("Ana: hi\nBo: yo", start_date=None).at(5) is None
