"""Time in retrieval: a window of days keeps only the passages dated in it, in both rankings; a
question naming a time raises the passages dated in it, and one asking when those saying a time."""

from dataclasses import replace
from datetime import date

import pytest
from django.utils import timezone

from memory.index import times, vectors
from memory.index.fulltext import Scope
from memory.index.retrieve import rankings, retrieve
from memory.index.writes import embed_pending
from memsite.errors import InvalidInput
from tests.factories import DocumentFactory, NodeFactory, default_space, system

pytestmark = pytest.mark.django_db

APRIL_20, MAY_24, JUNE_2 = date(2023, 4, 20), date(2023, 5, 24), date(2023, 6, 2)


@pytest.fixture
def full_text_only(settings):
    settings.MEMSITE_EMBEDDINGS = "off"


@pytest.fixture
def walks(full_text_only) -> dict[date, str]:
    """Three sessions, each dated, each saying where Ana walked the greyhound; May's line is the
    longest, so full text ranks it last of the three when nothing else counts."""
    folder = NodeFactory(name="diary", description="")
    lines = {
        APRIL_20: "Ana: I walked the greyhound by the river.",
        MAY_24: "Ana: I walked the greyhound by the old harbour, all the long way round.",
        JUNE_2: "Ana: I walked the greyhound in the park, twice.",
    }
    return {
        day: DocumentFactory(parent=folder, name=f"entry-{n}", description="", content=line.encode(), date=day).pk
        for n, (day, line) in enumerate(lines.items())
    }


def ranked(query: str, **kwargs) -> list[str]:
    return [hit.node_id for hit in retrieve(by=system(), query=query, **kwargs)]


def test_a_window_keeps_the_passages_dated_in_it_both_days_included(walks):
    DocumentFactory(description="", content=b"Ana: I walked the greyhound, on no day in particular.")
    query = "Where did Ana walk the greyhound?"

    assert len(ranked(query)) == 4  # with no window, the undated note is found too
    assert ranked(query, after=MAY_24, before=MAY_24) == [walks[MAY_24]]
    assert set(ranked(query, after=MAY_24)) == {walks[MAY_24], walks[JUNE_2]}
    assert set(ranked(query, before=MAY_24)) == {walks[APRIL_20], walks[MAY_24]}
    assert ranked(query, after=date(2023, 5, 25), before=date(2023, 6, 1)) == []


def test_a_window_keeps_the_passages_after_a_dated_line_of_a_longer_text(full_text_only):
    log = DocumentFactory(
        description="",
        content=b"Date: 2023-05-08\nAna: the greyhound slept all day, from the morning on, in the sun.\n"
        b"Date: 2023-05-09\nAna: the greyhound ran all day, from the morning on, in the rain.",
    )
    [hit] = retrieve(by=system(), query="greyhound", after=date(2023, 5, 9))
    assert (hit.node_id, hit.date) == (log.pk, date(2023, 5, 9)) and "rain" in hit.text


def test_a_window_later_than_it_begins_is_refused(walks):
    with pytest.raises(InvalidInput, match="later than"):
        retrieve(by=system(), query="greyhound", after=JUNE_2, before=MAY_24)


@pytest.fixture
def embedded(settings, walks):
    settings.MEMSITE_EMBEDDINGS = "local"
    vectors.forget()
    embed_pending()
    yield walks
    vectors.forget()


@pytest.mark.parametrize("scored_alone_up_to", [vectors.SCOPE_SCAN_MAX, 3])
def test_the_nearest_vectors_keep_to_the_window_whether_scored_alone_or_filtered_after(
    embedded, monkeypatch, scored_alone_up_to
):
    # At 3, the window's four passages (two labels, two lines) are too many to score alone: the
    # whole space is scored, and its best filtered.
    monkeypatch.setattr(vectors, "SCOPE_SCAN_MAX", scored_alone_up_to)
    query = "Which dog went out for a stroll?"  # no word of it is in the index: meaning alone ranks

    hits = retrieve(by=system(), query=query, after=MAY_24)

    assert {hit.node_id for hit in hits} == {embedded[MAY_24], embedded[JUNE_2]}
    assert all(hit.fulltext is None and hit.vector is not None and hit.date >= MAY_24 for hit in hits)


def test_a_time_the_question_names_raises_the_passages_dated_in_it(walks, monkeypatch):
    plain = ranked("Where did Ana walk the greyhound?")
    assert plain[-1] == walks[MAY_24]

    assert ranked("Where did Ana walk the greyhound in May 2023?")[0] == walks[MAY_24]
    assert ranked("Where did Ana walk the greyhound on 2 June 2023?")[0] == walks[JUNE_2]
    # Relative to the newest date of the scope (2 June, a Friday), not to today.
    assert ranked("Where did Ana walk the greyhound last week?")[0] == walks[MAY_24]
    assert ranked("Where did Ana walk the greyhound in the last 3 days?")[0] == walks[JUNE_2]

    monkeypatch.setattr(times, "TIME_BOOST", 0.0)  # the benchmark's switch
    assert ranked("Where did Ana walk the greyhound in May 2023?") == plain


def test_the_boost_is_a_piece_of_the_rankings_that_can_be_left_out(walks):
    found = rankings(
        "Where did Ana walk the greyhound in May 2023?", scope=Scope(default_space().pk), limit=10, by=system()
    )
    plain = rankings("Where did Ana walk the greyhound?", scope=Scope(default_space().pk), limit=10, by=system())

    assert found.timely == {pk for pk, _ in found.full_text if pk in set(_dated(MAY_24))}
    assert [pk for pk, _ in replace(found, timely=frozenset()).fused()] != [pk for pk, _ in found.fused()]
    assert plain.timely == frozenset()


def _dated(day: date) -> list[int]:
    from memory.models import Passage

    return list(Passage.objects.filter(date=day).values_list("id", flat=True))


def test_a_time_past_the_calendar_s_ends_raises_nothing(walks):
    plain = ranked("Where did Ana walk the greyhound?")
    assert ranked("Where did Ana walk the greyhound after 31 December 9999?") == plain


def test_a_window_given_is_not_overruled_by_the_time_the_question_names(walks):
    scope = Scope(space_id=default_space().pk, after=APRIL_20)
    assert times.timely("the greyhound in May 2023", scope=scope, candidates=_dated(MAY_24)) == frozenset()


def test_what_the_question_counts_from_is_the_scope_s_newest_date_not_after_today(walks):
    space = default_space().pk
    assert times.reference_date(Scope(space_id=space)) == JUNE_2
    DocumentFactory(description="", content=b"a plan", date=date(2999, 1, 1))  # a date to come is no "now"
    assert times.reference_date(Scope(space_id=space)) == JUNE_2
    april = NodeFactory(description="")
    DocumentFactory(parent=april, description="", content=b"x", date=APRIL_20)
    assert times.reference_date(Scope(space_id=space, path=april.path)) == APRIL_20
    empty = NodeFactory(description="")
    assert times.reference_date(Scope(space_id=space, path=empty.path)) == timezone.localdate()


def test_a_question_asking_when_raises_the_passages_saying_a_time(full_text_only):
    folder = NodeFactory(description="")
    plain = DocumentFactory(parent=folder, description="", content=b"Ana: we moved to Porto.")
    timed = DocumentFactory(parent=folder, description="", content=b"Ana: we moved to Porto, back on a Monday in 2019.")

    assert ranked("Did Ana move to Porto?") == [plain.pk, timed.pk]
    assert ranked("When did Ana move to Porto?") == [timed.pk, plain.pk]
