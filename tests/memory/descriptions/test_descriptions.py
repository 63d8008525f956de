"""Descriptions memsite writes: which writes queue one, what the offline provider writes, and
that a description a person gave is never overwritten."""

import pytest
from django.core.cache import cache
from kombu.exceptions import OperationalError

from memory import services
from memory.models import Node, Passage, PendingDescription
from memory.services import descriptions
from memory.services.descriptions import (
    descriptions_sweep,
    descriptions_write_pending,
    node_describe,
)
from memsite.llm.errors import LLMError, Reason
from memsite.llm.models import LLMCall
from tests.factories import DocumentFactory, NodeFactory, ProjectFactory, UserFactory, acting, system

pytestmark = pytest.mark.django_db

SESSION = (
    b"Ana: I adopted a greyhound last week.\n"
    b"Bo: What did you name the greyhound?\n"
    b"Ana: Pixel. The greyhound sleeps all day and the greyhound eats twice a day.\n"
    b"Bo: Nice."
)


@pytest.fixture(autouse=True)
def offline(offline_llm, settings):
    settings.MEMSITE_EMBEDDINGS = "off"


def pending() -> set[str]:
    return set(PendingDescription.objects.values_list("node_id", flat=True))


def fresh(node) -> Node:
    return Node.objects.get(pk=node.pk)


def test_a_document_created_without_a_description_is_described_offline():
    user = UserFactory()
    doc = DocumentFactory(description="", content=SESSION, by=acting(user))
    assert pending() == {doc.pk}

    assert node_describe(node_id=doc.pk) is True

    node = fresh(doc)
    assert node.description_auto and pending() == set()
    assert node.description == "greyhound, ana, day, adopted, last \u2014 Ana: I adopted a greyhound last week."
    assert node.version == 1  # a change the client did not make: If-Match stays valid
    assert "adopted a greyhound" in Passage.objects.get(node=doc, kind=Passage.Kind.LABEL).text
    call = LLMCall.objects.get(purpose="describe")  # memsite's upkeep, not the writer's work
    assert (call.user, call.acted_as, call.space) == (None, LLMCall.ActedAs.SYSTEM, doc.space)


def test_a_text_project_file_is_described_and_a_binary_one_skipped():
    project = ProjectFactory()
    text = NodeFactory(
        parent=project,
        type="project_file_bytes",
        name="app.py",
        description="",
        context={"file_path": "app.py"},
        content=b"def serve_greyhound_photos():\n    return photos_of_greyhound()\n",
    )
    binary = NodeFactory(
        parent=project,
        type="project_file_bytes",
        name="logo.png",
        description="",
        context={"file_path": "logo.png"},
        content=b"\x89PNG\x00\x00greyhound",
    )

    assert descriptions_write_pending() == 2

    assert "serve_greyhound_photos" in fresh(text).description
    assert fresh(binary).description == "" and pending() == set()
    assert LLMCall.objects.filter(purpose="describe").count() == 1


def test_folders_and_nodes_with_their_own_description_are_not_queued():
    NodeFactory(type="folder", description="")
    DocumentFactory(description="Ana's notes", content=SESSION)

    assert pending() == set()


def test_a_bulk_create_queues_its_documents_without_a_description():
    folder = NodeFactory()
    specs = [
        services.NodeSpec(name="a.md", type="document", content=SESSION),
        services.NodeSpec(name="b.md", type="document", description="given", content=SESSION),
    ]

    services.node_bulk_create(parent=folder, specs=specs, by=system())

    assert pending() == {specs[0].node_id}


def test_a_persons_description_is_never_overwritten():
    doc = DocumentFactory(description="", content=SESSION)
    node_describe(node_id=doc.pk)

    services.node_update(node=doc, description="Ana's greyhound, in her words", by=system())
    services.node_content_set(node=doc, data=b"Ana: Pixel learnt to sit.", by=system())

    node = fresh(doc)
    assert node.description == "Ana's greyhound, in her words" and not node.description_auto
    assert pending() == set()


def test_a_persons_description_set_while_the_task_runs_wins(monkeypatch):
    doc = DocumentFactory(description="", content=SESSION)
    real_complete = descriptions.complete

    def person_writes_meanwhile(**kwargs):
        reply = real_complete(**kwargs)
        services.node_update(node=doc, description="Written by Ana", by=system())
        return reply

    monkeypatch.setattr(descriptions, "complete", person_writes_meanwhile)

    assert node_describe(node_id=doc.pk) is True

    node = fresh(doc)
    assert node.description == "Written by Ana" and not node.description_auto and pending() == set()


def test_a_description_left_unchanged_by_an_update_stays_memsites():
    doc = DocumentFactory(description="", content=SESSION)
    node_describe(node_id=doc.pk)

    services.node_update(node=doc, name="session-1.md", description=fresh(doc).description, by=system())

    assert fresh(doc).description_auto


def test_a_content_change_describes_an_auto_description_again():
    doc = DocumentFactory(description="", content=SESSION)
    node_describe(node_id=doc.pk)

    services.node_content_set(
        node=doc, data=b"Bo: the kayak trip on the river was cold. Bo paddled the kayak for hours.", by=system()
    )
    assert pending() == {doc.pk}
    node_describe(node_id=doc.pk)

    node = fresh(doc)
    assert "kayak" in node.description and "greyhound" not in node.description and node.description_auto


def test_content_changed_during_the_call_is_described_next_time(monkeypatch):
    doc = DocumentFactory(description="", content=SESSION)
    real_complete = descriptions.complete

    def content_changes_meanwhile(**kwargs):
        reply = real_complete(**kwargs)
        services.node_content_set(node=doc, data=b"Bo: the kayak trip on the river was cold.", by=system())
        return reply

    monkeypatch.setattr(descriptions, "complete", content_changes_meanwhile)
    assert node_describe(node_id=doc.pk) is False
    assert fresh(doc).description == "" and pending() == {doc.pk}

    monkeypatch.undo()
    node_describe(node_id=doc.pk)
    assert "kayak" in fresh(doc).description


def test_an_emptied_description_is_written_again():
    doc = DocumentFactory(description="Ana's notes", content=SESSION)

    services.node_update(node=doc, description="", by=system())
    node_describe(node_id=doc.pk)

    assert "greyhound" in fresh(doc).description and fresh(doc).description_auto


def failing(reason: Reason):
    def complete(**kwargs):
        raise LLMError(reason, "no model today")

    return complete


def test_failed_calls_give_up_after_a_few_and_a_spent_budget_waits(monkeypatch):
    broken, broke = DocumentFactory(description="", content=SESSION), DocumentFactory(description="", content=SESSION)

    monkeypatch.setattr(descriptions, "complete", failing(Reason.SERVER_ERROR))
    for _ in range(descriptions.MAX_ATTEMPTS):
        node_describe(node_id=broken.pk)
    monkeypatch.setattr(descriptions, "complete", failing(Reason.BUDGET_SPENT))
    for _ in range(descriptions.MAX_ATTEMPTS + 1):
        node_describe(node_id=broke.pk)

    assert pending() == {broke.pk} and PendingDescription.objects.get().attempts == 0
    assert PendingDescription.objects.get().waiting_for_budget
    assert fresh(broken).description == fresh(broke).description == ""


def test_a_run_that_moves_nothing_does_not_queue_itself_again(monkeypatch, django_capture_on_commit_callbacks):
    from memory import tasks

    for _ in range(2):
        DocumentFactory(description="", content=SESSION)
    published = []
    monkeypatch.setattr(tasks.descriptions_write, "delay", lambda: published.append(True))
    monkeypatch.setattr(descriptions, "complete", failing(Reason.SERVER_ERROR))

    with django_capture_on_commit_callbacks(execute=True):
        assert descriptions_write_pending(limit=2) == 0

    assert published == [] and len(pending()) == 2


def test_a_run_that_takes_its_whole_share_queues_itself_for_the_rest(monkeypatch, django_capture_on_commit_callbacks):
    from memory import tasks

    for _ in range(3):
        DocumentFactory(description="", content=SESSION)
    published = []
    monkeypatch.setattr(tasks.descriptions_write, "delay", lambda: published.append(True))

    with django_capture_on_commit_callbacks(execute=True):
        assert descriptions_write_pending(limit=2) == 2

    assert published == [True] and len(pending()) == 1
    assert cache.add(descriptions.LOCK, True)  # the lock is free again


def test_one_task_at_a_time():
    doc = DocumentFactory(description="", content=SESSION)
    cache.add(descriptions.LOCK, True)

    assert descriptions_write_pending() == 0
    assert pending() == {doc.pk}


def test_with_the_broker_down_the_write_stands_and_the_sweep_queues_it_later(
    monkeypatch, django_capture_on_commit_callbacks
):
    from memory import tasks

    def broker_down():
        raise OperationalError("connection refused")

    monkeypatch.setattr(tasks.descriptions_write, "delay", broker_down)
    with django_capture_on_commit_callbacks(execute=True):
        doc = DocumentFactory(description="", content=SESSION)
    assert fresh(doc).name == doc.name and pending() == {doc.pk}

    published = []
    monkeypatch.setattr(tasks.descriptions_write, "delay", lambda: published.append(True))
    descriptions_sweep()
    assert published == [True]


def test_an_empty_document_is_left_undescribed_without_error(user):
    empty = DocumentFactory(description="", content=b"", by=acting(user))
    node_describe(node_id=empty.pk)
    empty.refresh_from_db()
    assert empty.description == "" and not empty.description_auto
    assert not PendingDescription.objects.filter(node=empty).exists()  # taken off the queue, not retried
