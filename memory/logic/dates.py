"""The dates memory speaks of (pure): a date as the API takes it (ISO 8601), the first date a
description or a text's first lines give, and a text's dated lines ("Date: 2023-05-08", a
timestamped log line), each of which dates the passages after it until the next.
Explained in docs/retrieval.md ("Time")."""

import re
from bisect import bisect_right
from datetime import date, datetime

MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("jan", "january"),
            ("feb", "february"),
            ("mar", "march"),
            ("apr", "april"),
            ("may",),
            ("jun", "june"),
            ("jul", "july"),
            ("aug", "august"),
            ("sep", "sept", "september"),
            ("oct", "october"),
            ("nov", "november"),
            ("dec", "december"),
        ),
        start=1,
    )
    for name in names
}
MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
ORDINAL = r"(?:st|nd|rd|th)?"
# Written dates with a year: 2023-05-08 (or / or . between, a time after it or not), 8 May 2023
# (8th of May, 2023; 08-May-2023), May 8, 2023 (May 8th 2023). Numeric days and months in
# another order (05/08/2023) are left out: whether that is May or August, the text does not say.
DATE_PATTERN = (
    r"(?<![\d.])(?P<iso_year>\d{4})(?P<sep>[-/.])(?P<iso_month>\d{1,2})(?P=sep)(?P<iso_day>\d{1,2})(?!\d)"
    rf"|\b(?P<dm_day>\d{{1,2}}){ORDINAL}(?:\s+of)?[\s-]+(?P<dm_month>{MONTH})\.?,?[\s-]+(?P<dm_year>\d{{4}})(?!\d)"
    rf"|\b(?P<md_month>{MONTH})\.?\s+(?P<md_day>\d{{1,2}}){ORDINAL},?\s+(?P<md_year>\d{{4}})(?!\d)"
)
DATE = re.compile(DATE_PATTERN, re.IGNORECASE)
# A line that begins with a date says when what follows it happened: after markdown's marks
# (a heading, a quote, a list item), an opening bracket, a label ending in date, day or when
# ("Date:", "Session date -"), a time ("1:56 pm on 8 May, 2023") and a weekday. The label is
# whole words, so that a line of prose is passed over in a few steps, not a step a character.
DATED_LINE = re.compile(
    r"^[ \t>*#|_-]*[\[(]?"
    r"(?:(?:[a-z]+ ){0,4}(?:date|day|when)[*_]*\s*[:=–—-][*_]*\s*)?"
    r"(?:\d{1,2}[:.]\d{2}(?::\d{2})?\s*(?:[ap]\.?m\.?)?\s*(?:on\s+)?)?"
    r"(?:(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?,?\s+)?"
    rf"(?:{DATE_PATTERN})",
    re.IGNORECASE | re.MULTILINE,
)
# A document's date, when nothing else gives it, is read from its first lines.
HEADER_LINES = 5
HEADER_CHARS = 1_000


def date_of(match: re.Match[str]) -> date | None:
    """The date a match of DATE (or DATED_LINE) spells; None for one that is no day (2023-02-30)."""
    if match["iso_year"]:
        year, month, day = match["iso_year"], int(match["iso_month"]), match["iso_day"]
    elif match["dm_year"]:
        year, month, day = match["dm_year"], MONTHS[match["dm_month"].lower()], match["dm_day"]
    else:
        year, month, day = match["md_year"], MONTHS[match["md_month"].lower()], match["md_day"]
    try:
        return date(int(year), month, int(day))
    except ValueError:
        return None


def first_date(text: str) -> date | None:
    """The first date written in the text, anywhere in it."""
    return next((found for match in DATE.finditer(text) if (found := date_of(match)) is not None), None)


def header_date(text: str) -> date | None:
    """The date of a text's first HEADER_LINES lines that are not blank (within HEADER_CHARS):
    the first written in the first of them, a title ("Session 17, 8 May 2023"), else that of the
    first of the others that begins with one ("Date: 2023-05-08"). A date said in a sentence
    below the title ("next call on 3 June") is not the text's."""
    lines = [line for line in text[:HEADER_CHARS].splitlines() if line.strip()][:HEADER_LINES]
    if not lines:
        return None
    below = "\n".join(lines[1:])
    return first_date(lines[0]) or next(
        (found for match in DATED_LINE.finditer(below) if (found := date_of(match)) is not None), None
    )


def document_date(*, given: date | None, description: str, text: str) -> date | None:
    """The date a document speaks of: the one its writer gave, else the first in its
    description, else its text's first lines' (`header_date`). A description is a summary
    someone chose to write (a session's "8 May 2023, Ana and Bo"), so it comes before the text."""
    if given is not None:
        return given
    return first_date(description) or header_date(text)


def iso_date(value: str) -> date:
    """An ISO 8601 date ("2023-05-08") or date and time ("2023-05-08T14:02:00+02:00"), as the
    day it names where it was written (a time's zone does not move it to another day). Raises
    ValueError for anything else."""
    value = value.strip()
    try:
        return date.fromisoformat(value)
    except ValueError:
        pass
    try:
        return datetime.fromisoformat(value).date()
    except ValueError:
        raise ValueError("Not an ISO 8601 date, such as 2023-05-08 or 2023-05-08T14:02:00.") from None


class Timeline:
    """The date in force at each place of a text: the last dated line's at or before it, or the
    document's own date before the first."""

    def __init__(self, text: str, *, start_date: date | None) -> None:
        dated = [(match.start(), found) for match in DATED_LINE.finditer(text) if (found := date_of(match))]
        self.offsets = [offset for offset, _ in dated]
        self.dates = [start_date, *(found for _, found in dated)]

    def at(self, offset: int) -> date | None:
        return self.dates[bisect_right(self.offsets, offset)]
