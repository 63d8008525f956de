"""Every passage carries the date it speaks of: its node's (given, or read from the description
or the text's first lines), or the last dated line's above it; and it follows every write."""

from datetime import date

import pytest

from memory import services
from memory.index.writes import index_nodes, index_rebuild
from memory.models import Node, Passage
from tests.factories import DocumentFactory, NodeFactory, system

pytestmark = pytest.mark.django_db

MAY_7, MAY_8, MAY_9 = date(2023, 5, 7), date(2023, 5, 8), date(2023, 5, 9)


@pytest.fixture(autouse=True)
def full_text_only(settings):
    settings.MEMSITE_EMBEDDINGS = "off"


def dates(node: Node) -> list[tuple[str, date | None]]:
    """(text, date) of the node's passages, label first."""
    return list(Passage.objects.filter(node=node).order_by("seq").values_list("text", "date"))


def rows(node: Node) -> dict[str, tuple[int, date | None]]:
    return {text: (pk, day) for pk, text, day in Passage.objects.filter(node=node).values_list("id", "text", "date")}


# A paragraph a passage, whatever else cuts the text (passages.py): a dated line dates the
# passages from its own on.
LOG = (
    "Ana and Bo, a week of calls, a paragraph a call, so that each is a passage.\n\n"
    "Date: 2023-05-08\n\n"
    "Ana: the first call of the week went on for quite a while, about the move.\n\n"
    "[2023-05-09 14:02] Bo: a timestamped line dates itself and what follows it.\n\n"
    "Ana: and this line, said after it, is of the ninth as well, of course.\n"
)
PARTS = ("a week of calls", "the first call", "timestamped", "and this line")


def days(node: Node) -> list[date | None]:
    """The date of the node's label passage, then of its passage holding each of PARTS."""
    passages = Passage.objects.filter(node=node)
    return [passages.get(kind="label").date, *(passages.get(text__contains=part).date for part in PARTS)]


def test_a_document_is_dated_by_its_given_date_then_its_description_then_its_first_lines():
    text = b"Ana: we talked about the move to Porto for a long while that evening."
    given = DocumentFactory(description="Session of 9 May 2023", content=text, date=MAY_7)
    described = DocumentFactory(description="Session of 9 May 2023", content=text)
    headed = DocumentFactory(description="A session", content=b"# 8 May 2023\n" + text)
    undated = DocumentFactory(description="A session", content=text)
    folder = NodeFactory(description="Notes of 8 May 2023")

    assert {day for _, day in dates(given)} == {MAY_7}
    assert {day for _, day in dates(described)} == {MAY_9}
    assert {day for _, day in dates(headed)} == {MAY_8}
    assert {day for _, day in dates(undated)} == {None}
    assert dates(folder) == [(f"{folder.name}\nNotes of 8 May 2023", MAY_8)]


def test_a_dated_line_dates_the_passages_after_it_until_the_next():
    log = DocumentFactory(description="Calls", content=LOG.encode(), date=MAY_7)

    assert days(log) == [MAY_7, MAY_7, MAY_8, MAY_9, MAY_9]


def test_a_new_date_dates_the_node_and_its_passages_again_in_the_same_rows():
    log = DocumentFactory(description="Calls", content=LOG.encode())
    before = rows(log)
    assert days(log) == [MAY_8, MAY_8, MAY_8, MAY_9, MAY_9]  # its first lines' date

    services.node_update(node=log, date=MAY_7, by=system())
    assert days(log) == [MAY_7, MAY_7, MAY_8, MAY_9, MAY_9]
    assert {text: pk for text, (pk, _) in rows(log).items()} == {text: pk for text, (pk, _) in before.items()}

    services.node_update(node=log, description="Calls of 1 May 2023", by=system())  # the given date still rules
    assert days(log)[1] == MAY_7
    services.node_update(node=log, date=None, by=system())  # taken away: the description's is read
    assert days(log) == [date(2023, 5, 1), date(2023, 5, 1), MAY_8, MAY_9, MAY_9]
    assert Node.objects.get(pk=log.pk).date is None


def test_a_description_memsite_wrote_dates_nothing():
    undated = DocumentFactory(description="", content=b"Ana: the call went well.\nBo: next one on 3 June 2023.")
    headed = DocumentFactory(description="", content=b"Date: 2023-05-08\nBo: next one on 3 June 2023, then.")

    for node in (undated, headed):  # as the description service writes one (services/descriptions.py)
        Node.objects.filter(pk=node.pk).update(description="Next call on 1 July 2023", description_auto=True)
        index_nodes([node.pk], labels_only=True)

    assert {day for _, day in dates(undated)} == {None}
    assert {day for _, day in dates(headed)} == {MAY_8}


def test_an_update_that_gives_the_date_it_has_changes_nothing():
    doc = DocumentFactory(content=b"one line", date=MAY_8)
    assert services.node_update(node=doc, date=MAY_8, by=system()).version == doc.version


def test_a_dated_line_written_above_dates_the_kept_passages_below_it_again():
    log = DocumentFactory(description="Calls", content=LOG.encode(), date=MAY_7)
    before = rows(log)
    edited = LOG.replace("Ana: the first call", "## 1 May 2023\n\nAna: the first call")
    edited = edited.replace("[2023-05-09 14:02] ", "")

    services.node_content_set(node=log, data=edited.encode(), by=system())

    after = rows(log)
    may_1 = date(2023, 5, 1)
    assert days(log) == [MAY_7, MAY_7, may_1, may_1, may_1]
    for kept in (
        "Ana: the first call of the week went on for quite a while, about the move.",
        LOG.split("\n\n")[-1].strip(),
    ):
        assert after[kept] == (before[kept][0], may_1)  # its row kept, dated again


def test_a_rename_keeps_the_dates():
    log = DocumentFactory(description="Calls", content=LOG.encode(), date=MAY_7)
    services.node_update(node=log, name="calls.md", by=system())
    assert days(log) == [MAY_7, MAY_7, MAY_8, MAY_9, MAY_9]


def test_rebuild_dates_what_was_left_undated_as_the_writes_date_it():
    log = DocumentFactory(description="Calls", content=LOG.encode(), date=MAY_7)
    headed = DocumentFactory(description="", content=b"Date: 8 May 2023\nAna: hi")
    written = {node.pk: dates(node) for node in (log, headed)}
    ids = set(Passage.objects.values_list("id", flat=True))
    Passage.objects.update(date=None)  # as a database migrated before dates would hold them

    assert index_rebuild() == 0
    assert {node.pk: dates(node) for node in (log, headed)} == written
    assert set(Passage.objects.values_list("id", flat=True)) == ids
