"""The time a question names or asks for (pure): "in May 2023", "last week", "yesterday", "on 8
May", "two weeks ago", "before March 2024", each a window of days resolved against a reference
date; whether it asks when; and whether a passage names a time, as an answer to when does.
Explained in docs/retrieval.md ("Time")."""

import re
from calendar import monthrange
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta

from memory.logic.dates import DATE_PATTERN, MONTH, MONTHS, ORDINAL, date_of, first_date


@dataclass(frozen=True)
class Window:
    """The days from `first` to `last`, both included."""

    first: date
    last: date

    def holds(self, day: date) -> bool:
        return self.first <= day <= self.last


Resolve = Callable[[date], Window]


@dataclass(frozen=True)
class Named:
    """A time a question names, at [start, end) of it: `resolve` gives its days from the reference
    date (the day the question is asked from), which `relative` ones depend on ("last week",
    "in May"); the others ("in May 2023") do not."""

    start: int
    end: int
    resolve: Resolve
    relative: bool


def day_window(day: date) -> Window:
    return Window(day, day)


def month_window(year: int, month: int) -> Window:
    return Window(date(year, month, 1), date(year, month, monthrange(year, month)[1]))


def year_window(year: int) -> Window:
    return Window(date(year, 1, 1), date(year, 12, 31))


def week_window(day: date) -> Window:
    """Monday to Sunday of the day's week."""
    monday = day - timedelta(days=day.weekday())
    return Window(monday, monday + timedelta(days=6))


def months_before(day: date, count: int) -> tuple[int, int]:
    """The year and month `count` months before the day's."""
    index = day.year * 12 + day.month - 1 - count
    return index // 12, index % 12 + 1


WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8}
NUMBERS |= {"nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "couple": 2, "few": 3}
NUMBER = (
    r"\d{1,3}|(?:a\s+)?couple(?:\s+of)?|(?:a\s+)?few|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
)
UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}


def _count(text: str) -> int:
    words = text.lower().split()
    # "a couple of": the last word that counts is the count.
    return int(words[0]) if words[0].isdigit() else NUMBERS[next(w for w in reversed(words) if w in NUMBERS)]


def _full(match: re.Match[str], before: str) -> tuple[Resolve, bool] | None:
    day = date_of(match)
    return None if day is None else (lambda _: day_window(day), False)


def _month_year(match: re.Match[str], before: str) -> tuple[Resolve, bool] | None:
    window = month_window(int(match["year"]), MONTHS[match["month"].lower()])
    return lambda _: window, False


def _last_day_of(month: int, day: int, reference: date) -> Window:
    """The latest `day` of `month` on or before the reference (29 February: of a leap year)."""
    for year in range(reference.year, reference.year - 9, -1):
        try:
            found = date(year, month, day)
        except ValueError:
            continue
        if found <= reference:
            return day_window(found)
    return day_window(date(reference.year - 1, month, min(day, 28)))


def _day_month(match: re.Match[str], before: str) -> tuple[Resolve, bool] | None:
    month = MONTHS[(match["month"] or match["month_first"]).lower()]
    day = int(match["day"] or match["day_after"])
    if not 1 <= day <= monthrange(2000, month)[1]:  # 2000: a leap year, so 29 February is a day
        return None
    return (lambda reference: _last_day_of(month, day, reference)), True


# A month or a year alone is a time only after one of these ("in May", "since 2021"): "May I"
# and "the 2023 report" name none. After "and" or "to" ("between May and June"), only a month
# written capitalised is one ("to march" is not).
MONTH_AFTER = re.compile(
    r"\b(in|during|of|last|this|early|late|mid|since|before|after|until|till|by|from|through|throughout|between)"
    r"[\s-]+(?:the\s+month\s+of\s+)?$",
    re.IGNORECASE,
)
MONTH_JOINED = re.compile(r"\b(?:and|to|or)\s+$|[-–—]\s*$", re.IGNORECASE)
YEAR_AFTER = re.compile(
    r"\b(?:in|during|of|since|before|after|until|till|by|from|through|throughout|between|and|to|year)\s+$",
    re.IGNORECASE,
)


def _month_alone(match: re.Match[str], before: str) -> tuple[Resolve, bool] | None:
    after = MONTH_AFTER.search(before)
    if after is None and not (match["month"][0].isupper() and MONTH_JOINED.search(before)):
        return None
    month, strictly = MONTHS[match["month"].lower()], after is not None and after[1].lower() == "last"

    def resolve(reference: date) -> Window:
        # The latest such month begun by the reference; "last May", asked in May, is a year ago.
        year = reference.year if (month, strictly) < (reference.month, True) else reference.year - 1
        return month_window(year, month)

    return resolve, True


def _year_alone(match: re.Match[str], before: str) -> tuple[Resolve, bool] | None:
    if YEAR_AFTER.search(before) is None:
        return None
    window = year_window(int(match["year"]))
    return lambda _: window, False


def _day_word(match: re.Match[str], before: str) -> tuple[Resolve, bool] | None:
    back = 2 if "before" in match[0].lower() else 1 if match[0].lower() == "yesterday" else 0
    return (lambda reference: day_window(reference - timedelta(days=back))), True


def _calendar(unit: str, reference: date, back: int) -> Window:
    """The calendar week, weekend, month or year `back` of them before the reference's."""
    if unit == "week":
        return week_window(reference - timedelta(days=7 * back))
    if unit == "weekend":
        saturday = reference - timedelta(days=(reference.weekday() - 5) % 7 + 7 * back)
        return Window(saturday, saturday + timedelta(days=1))
    if unit == "month":
        return month_window(*months_before(reference, back))
    return year_window(reference.year - back)


def _recent(match: re.Match[str], before: str) -> tuple[Resolve, bool] | None:
    unit, which = match["unit"].lower(), match["which"].lower()
    if unit != "weekend" and (which == "past" or (match["the"] and which == "last")):  # the seven days to now
        days = UNIT_DAYS.get(unit, 2)
        return (lambda reference: Window(reference - timedelta(days=days - 1), reference)), True
    # "last weekend", asked on a weekday, is the one just past, as "this weekend" is on a Sunday.
    back = 0 if which == "this" or unit == "weekend" else 1
    return (lambda reference: _calendar(unit, reference, back)), True


def _span(match: re.Match[str], before: str) -> tuple[Resolve, bool] | None:
    days = _count(match["count"]) * UNIT_DAYS[match["unit"].lower()]
    return (lambda reference: Window(reference - timedelta(days=days - 1), reference)), True


def _ago(match: re.Match[str], before: str) -> tuple[Resolve, bool] | None:
    count, unit = _count(match["count"]), match["unit"].lower()
    if unit == "day":
        return (lambda reference: day_window(reference - timedelta(days=count))), True
    return (lambda reference: _calendar(unit, reference, count)), True


def _weekday(match: re.Match[str], before: str) -> tuple[Resolve, bool] | None:
    weekday, strictly = WEEKDAYS.index(match["weekday"].lower()), bool(match["last"])

    def resolve(reference: date) -> Window:
        back = (reference.weekday() - weekday) % 7 or (7 if strictly else 0)
        return day_window(reference - timedelta(days=back))

    return resolve, True


UNIT = r"(?P<unit>day|week|month|year)s?"
DAY_WORD = r"the\s+day\s+before\s+yesterday|yesterday|today|tonight|this\s+(?:morning|afternoon|evening)"
RECENT = r"(?P<the>the\s+)?(?P<which>this|last|past|previous)\s+(?P<unit>weekend|week|month|year)"
DAY_MONTH = (
    rf"\b(?P<day>\d{{1,2}}){ORDINAL}(?:\s+of)?\s+(?P<month>{MONTH})\b"
    rf"|\b(?P<month_first>{MONTH})\.?\s+(?P<day_after>\d{{1,2}}){ORDINAL}\b(?![:.]\d)"
)
Build = Callable[[re.Match[str], str], tuple[Resolve, bool] | None]
# Most specific first: a phrase found is not found again inside a longer one found before it.
PATTERNS: list[tuple[re.Pattern[str], Build]] = [
    (re.compile(rf"(?:\b(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?,?\s+)?(?:{DATE_PATTERN})", re.I), _full),
    (re.compile(rf"\b(?P<month>{MONTH})\.?,?\s+(?:of\s+)?(?P<year>\d{{4}})(?!\d)", re.I), _month_year),
    (re.compile(rf"\b(?:the\s+)?(?:last|past)\s+(?P<count>{NUMBER})\s+{UNIT}\b", re.I), _span),
    (re.compile(rf"\b(?P<count>{NUMBER})\s+{UNIT}\s+ago\b", re.I), _ago),
    (re.compile(rf"\b{RECENT}\b", re.I), _recent),
    (re.compile(rf"\b(?:{DAY_WORD})\b", re.I), _day_word),
    (re.compile(DAY_MONTH, re.I), _day_month),
    (re.compile(rf"\b(?:(?P<last>last|past)\s+|(?:this|on)\s+)?(?P<weekday>{'|'.join(WEEKDAYS)})\b", re.I), _weekday),
    (re.compile(rf"\b(?P<month>{MONTH})\b", re.I), _month_alone),
    (re.compile(r"\b(?P<year>(?:19|20)\d{2})\b(?![-/.]\d)"), _year_alone),
]


def named_times(question: str) -> list[Named]:
    """The times the question names, in its order ("May 2023" in "8 May 2023" is not one more)."""
    found: list[Named] = []
    for pattern, build in PATTERNS:
        for match in pattern.finditer(question):
            if any(match.start() < named.end and named.start < match.end() for named in found):
                continue
            built = build(match, question[: match.start()])
            if built is not None:
                found.append(Named(match.start(), match.end(), *built))
    return sorted(found, key=lambda named: named.start)


# "before May 2023" is every day before it, "since last week" every day from it on.
BOUND = re.compile(
    r"\b(before|prior\s+to|earlier\s+than|after|later\s+than|since|from|until|till|by)\s+(?:the\s+)?$", re.I
)
JOINED = re.compile(r"^\s*(?:and|to|until|till|through|-|–|—)\s*(?:the\s+)?$", re.I)
SPAN_START = re.compile(r"\b(?:between|from)\s+(?:the\s+)?$", re.I)


def _bounded(window: Window, before: str) -> Window:
    bound = BOUND.search(before)
    word = bound[1].lower().split()[0] if bound else ""
    if word in ("before", "prior", "earlier"):
        return Window(date.min, window.first - timedelta(days=1))
    if word in ("after", "later"):
        return Window(window.last + timedelta(days=1), date.max)
    if word in ("since", "from"):
        return Window(window.first, date.max)
    if word in ("until", "till", "by"):
        return Window(date.min, window.last)
    return window


def windows(question: str, reference: date) -> list[Window]:
    """The windows of the times the question names, resolved against `reference`, each
    widened by a word before it ("before", "since"); "between May and June 2023" (or "from ...
    to ...") is one window from the first to the last. A time that would fall before year 1 or
    after 9999 ("after 31 December 9999") names no day memory holds, and is left out."""
    named = named_times(question)
    found: list[Window] = []
    at = 0
    while at < len(named):
        this, following = named[at], named[at + 1] if at + 1 < len(named) else None
        joined = (
            following is not None
            and SPAN_START.search(question[: this.start]) is not None
            and JOINED.search(question[this.end : following.start]) is not None
        )
        try:
            if following is not None and joined:
                first, last = this.resolve(reference), following.resolve(reference)
                found.append(Window(min(first.first, last.first), max(first.last, last.last)))
            else:
                found.append(_bounded(this.resolve(reference), question[: this.start]))
        except (OverflowError, ValueError):
            pass
        at += 2 if joined else 1
    return found


ASKS_WHEN = re.compile(
    r"\bwhen\s+(?:did|do|does|was|were|is|are|will|would|has|have|had|can|could)\b"
    r"|\b(?:what|which)\s+(?:date|day|time|year|month|week)\b"
    r"|\bhow\s+(?:long\s+(?:ago|since|before|after)|many\s+(?:days|weeks|months|years)\b)",
    re.IGNORECASE,
)
# What an answer to "when" says: a date, a month, a weekday, a year, a day word, a clock time,
# or a time counted back ("three days ago", "last week"). A month name is taken capitalised
# only ("may" is mostly a verb).
TIME_SAID = re.compile(
    rf"(?i:{DATE_PATTERN})"
    r"|\b(?:January|February|March|April|May|June|July|August|September|October|November|December)\b"
    rf"|\b(?i:{'|'.join(WEEKDAYS)}|yesterday|today|tonight|tomorrow|ago)\b"
    r"|\b(?i:last|next|this)\s+(?i:week|weekend|month|year)\b"
    r"|\b(?:19|20)\d{2}\b"
    r"|\b\d{1,2}(?::\d{2})?\s*(?i:[ap]\.?m)\b"
)


def asks_when(question: str) -> bool:
    """Whether the question asks for a time: "When did ...", "What date ...", "How long ago ..."."""
    return ASKS_WHEN.search(question) is not None


def names_time(text: str) -> bool:
    """Whether the text says a time, as an answer to when does."""
    return TIME_SAID.search(text) is not None


def said_when(question: str, answer: str, evidence: date | None) -> str:
    """The answer, headed by the date of its evidence where the question asks when and the
    answer itself writes no date: "We moved yesterday." says when only beside the day it was said."""
    if evidence is None or not asks_when(question) or first_date(answer) is not None:
        return answer
    return f"{evidence.isoformat()}: {answer}"
