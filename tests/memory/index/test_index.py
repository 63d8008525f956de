"""The content index follows every write, and retrieval stays in its scope."""

import io

import numpy as np
import pytest
from django.db import transaction
from django.utils import timezone

from memory import selectors, services
from memory.index import vectors
from memory.index.embeddings import embedder
from memory.index.passages import cut
from memory.index.retrieve import retrieve
from memory.index.writes import embed_pending, index_rebuild
from memory.models import Node, Passage
from memsite.errors import InvalidInput
from memsite.llm.models import LLMCall
from memsite.spaces import services as space_services
from memsite.spaces.models import Space
from tests.archives import tar_gz
from tests.factories import DocumentFactory, NodeFactory, ProjectFactory, acting, default_space, system

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def full_text_only(settings):
    settings.MEMSITE_EMBEDDINGS = "off"


def found(query, **kwargs) -> list[str]:
    return [hit.node_id for hit in retrieve(by=system(), query=query, **kwargs)]


def passages(node) -> list[tuple]:
    return list(Passage.objects.filter(node=node).order_by("seq").values_list("seq", "kind", "start", "end", "text"))


def test_a_created_document_is_found_by_its_content():
    doc = DocumentFactory(name="session-1", description="Session 1", content=b"Ana: my sister adopted a greyhound.")
    other = DocumentFactory(content=b"Nothing about dogs here, only weather.")
    assert found("greyhound adoption") == [doc.pk]
    hit = retrieve(by=system(), query="greyhound")[0]
    assert hit.kind == "content" and hit.fulltext is not None and hit.vector is None
    assert "greyhound" in hit.snippet and hit.path.endswith("/session-1")
    assert other.pk not in found("greyhound")


def test_a_content_put_replaces_the_old_words():
    doc = DocumentFactory(content=b"The launch code is alpha.")
    services.node_content_set(node=doc, data=b"The launch code is bravo.", by=system())
    assert found("bravo") == [doc.pk]
    assert found("alpha") == []


def test_rename_and_description_change_the_label_passage_only():
    doc = DocumentFactory(name="draft.md", description="", content=b"body text")

    def content_ids() -> list[int]:  # a row written again gets a new id, even with the same text
        return list(Passage.objects.filter(node=doc, kind="content").order_by("seq").values_list("id", flat=True))

    content_before, ids_before = passages(doc)[1:], content_ids()
    services.node_update(node=doc, name="quarterly.md", description="revenue figures", by=system())
    assert found("quarterly revenue") == [doc.pk]
    assert found("draft") == []
    assert passages(doc)[1:] == content_before
    assert ids_before and content_ids() == ids_before


def test_moving_a_node_moves_it_out_of_a_scope():
    left, right = NodeFactory(name="left"), NodeFactory(name="right")
    doc = DocumentFactory(parent=left, content=b"zebra crossing")
    assert found("zebra", start=left) == [doc.pk]
    services.node_move(node=doc, parent=right, by=system())
    assert found("zebra", start=left) == []
    assert found("zebra", start=right) == [doc.pk]


def test_deleting_a_branch_deletes_its_passages():
    folder = NodeFactory()
    doc = DocumentFactory(parent=folder, content=b"walrus")
    services.node_delete(node=folder, by=system())
    assert not Passage.objects.filter(node_id=doc.pk).exists()
    assert found("walrus") == []


def test_a_rolled_back_write_leaves_no_passage():
    with pytest.raises(RuntimeError), transaction.atomic():
        DocumentFactory(content=b"platypus")
        raise RuntimeError
    assert found("platypus") == []
    assert not Passage.objects.filter(text__contains="platypus").exists()


def test_an_archive_import_indexes_its_text_files_and_a_failed_one_nothing(user):
    project = ProjectFactory()
    archive = tar_gz({"src/app.py": b"def compute_tax(): pass\n", "logo.png": b"\x89PNG\x00\x00binary"})
    services.project_import(project=project, archive=io.BytesIO(archive), by=acting(user))
    assert [hit.name for hit in retrieve(by=system(), query="compute_tax")] == ["app.py"]
    assert not Passage.objects.filter(node__name="logo.png", kind="content").exists()
    before = Passage.objects.count()
    with pytest.raises(InvalidInput):
        services.project_import(
            project=project, archive=io.BytesIO(tar_gz({"a.py": b"x", "../b.py": b"y"})), by=acting(user)
        )
    assert Passage.objects.count() == before


def test_rebuild_equals_incremental():
    folder = NodeFactory()
    docs = [DocumentFactory(parent=folder, content=(f"para {n}\n\n" * 300).encode()) for n in range(3)]
    services.node_update(node=docs[0], description="renamed", by=system())
    services.node_content_set(node=docs[1], data=b"short now", by=system())
    incremental = sorted(Passage.objects.values_list("node_id", "seq", "kind", "start", "end", "text"))
    index_rebuild()
    assert sorted(Passage.objects.values_list("node_id", "seq", "kind", "start", "end", "text")) == incremental


def test_scope_never_returns_a_node_outside_the_start_subtree():
    inside, outside = NodeFactory(), NodeFactory()
    nested = NodeFactory(parent=inside)
    for parent in (inside, nested, outside):
        for n in range(5):
            DocumentFactory(parent=parent, content=f"shared keyword mango {n}".encode())
    inside_ids = set(Node.objects.filter(path__startswith=inside.path).values_list("pk", flat=True))
    hits = retrieve(by=system(), query="mango keyword", start=inside, k=100)
    assert len(hits) == 10 and {hit.node_id for hit in hits} <= inside_ids


def test_types_filter():
    folder = NodeFactory(name="mango-folder", description="mango")
    DocumentFactory(parent=folder, content=b"mango")
    assert {hit.type for hit in retrieve(by=system(), query="mango", types=["document"])} == {"document"}
    assert {hit.type for hit in retrieve(by=system(), query="mango", types=["folder"])} == {"folder"}


@pytest.mark.parametrize("scoped", [False, True], ids=["whole tree", "in a scope"])
def test_embeddings_find_what_full_text_cannot_and_keep_to_the_scope(settings, scoped):
    settings.MEMSITE_EMBEDDINGS = "local"
    pets, weather = NodeFactory(name="pets"), NodeFactory(name="weather")
    dog = DocumentFactory(parent=pets, content=b"Bo: we finally adopted a greyhound from the shelter.")
    DocumentFactory(parent=weather, content=b"Ana: it rained all week and the trains were late.")
    elsewhere = DocumentFactory(parent=weather, content=b"Ana: my sister adopted a puppy last spring.")
    assert embed_pending() == Passage.objects.count()
    hits = retrieve(by=system(), query="Which dog did they get?", start=pets if scoped else None, k=5)
    best = next(hit for hit in hits if hit.kind == "content")
    assert best.node_id == dog.pk
    assert best.fulltext is None and best.vector > 0.3  # no shared word: found by meaning alone
    if scoped:
        assert {hit.node_id for hit in hits} <= {pets.pk, dog.pk}
    else:
        assert elsewhere.pk in {hit.node_id for hit in hits}


def test_words_too_common_to_tell_passages_apart_are_left_out(monkeypatch):
    from memory.index import fulltext

    monkeypatch.setattr(fulltext, "COMMON", 3)
    monkeypatch.setattr(fulltext, "COMMON_RANKED", 2)
    folder = NodeFactory()
    for n in range(5):
        DocumentFactory(parent=folder, content=f"weather report number {n}".encode())
    storm = DocumentFactory(parent=folder, content=b"weather report: a hailstorm")
    assert found("weather hailstorm", start=folder) == [storm.pk]  # "weather" is in six passages
    assert len(found("weather report", start=folder, k=100)) == 2  # common words alone: a bounded share
    assert found("weather nonexistentword", start=folder, k=100) != []  # a word found nowhere is no help


def give_vectors() -> dict[int, bytes]:
    """A vector for every passage waiting for one, as the embedding task writes it; every
    passage's vector by id."""
    for pk in Passage.objects.filter(vector__isnull=True).values_list("id", flat=True):
        vector = np.full(4, pk, dtype=np.float32).tobytes()
        Passage.objects.filter(pk=pk).update(vector=vector, embedded_at=timezone.now())
    return {pk: bytes(vector) for pk, vector in Passage.objects.values_list("id", "vector")}


def content_passages(node) -> list[tuple]:
    rows = Passage.objects.filter(node=node, kind="content").order_by("seq")
    return list(rows.values_list("seq", "start", "end", "text"))


def cut_afresh(text: str) -> list[tuple]:
    return [(seq, piece.start, piece.end, piece.text) for seq, piece in enumerate(cut(text), start=1)]


LINES = [f"line {n:02d} holds a fact of its own, said just once" for n in range(30)]  # a passage each, a paragraph each


def test_an_append_writes_only_the_new_passage_and_keeps_the_others_with_their_vectors():
    doc = DocumentFactory(content="\n\n".join(LINES).encode())
    before = give_vectors()
    text = "\n\n".join([*LINES, "an appended line, long enough to be a passage alone"])
    services.node_content_set(node=doc, data=text.encode(), by=system())
    after = give_vectors()
    assert content_passages(doc) == cut_afresh(text)
    assert {pk: after[pk] for pk in before} == before  # every passage kept, its vector with it
    assert [Passage.objects.get(pk=pk).text for pk in after.keys() - before.keys()] == [
        "an appended line, long enough to be a passage alone"
    ]


def test_lines_moved_changed_and_repeated_keep_their_rows_in_their_new_places():
    repeated = "this line is said twice in the document, word for word"
    doc = DocumentFactory(content="\n\n".join([*LINES, repeated, repeated]).encode())
    old = list(Passage.objects.filter(node=doc, kind="content").values_list("id", "text"))
    edited = [line.replace("fact", "changed fact") if line.startswith("line 20") else line for line in LINES]
    text = "\n\n".join(["a new first line, long enough to stand alone", *edited[:10], *edited[11:], repeated, repeated])
    services.node_content_set(node=doc, data=text.encode(), by=system())
    assert content_passages(doc) == cut_afresh(text)
    new = list(Passage.objects.filter(node=doc, kind="content").values_list("id", "text"))
    kept = [(pk, line) for pk, line in old if line not in (LINES[10], LINES[20])]
    assert set(kept) <= set(new)  # moved a line down, or two for the repeated one: same rows
    assert len(set(new) - set(kept)) == 2  # the new first line and the changed one
    index_rebuild()
    assert list(Passage.objects.filter(node=doc, kind="content").values_list("id", "text")) == new


def test_content_that_turns_binary_or_empty_leaves_the_label_alone():
    doc = DocumentFactory(name="notes.md", content="\n\n".join(LINES).encode())
    label_id = Passage.objects.get(node=doc, kind="label").pk
    services.node_content_set(node=doc, data=b"\x00 read as binary, as git would", by=system())
    assert content_passages(doc) == [] and Passage.objects.get(node=doc).pk == label_id
    services.node_content_set(node=doc, data=LINES[0].encode(), by=system())
    services.node_content_set(node=doc, data=b"", by=system())
    assert content_passages(doc) == [] and Passage.objects.get(node=doc).pk == label_id


def test_an_archive_import_indexes_each_node_once(user, monkeypatch):
    from memory.index import writes
    from memory.services import archives
    from memory.services import nodes as node_services

    project = ProjectFactory()
    indexed, inserted = [], []

    def counted(node_ids, **kwargs):
        indexed.extend(node_ids)
        return writes.index_nodes(node_ids, **kwargs)

    def insert_rows(model, fields, rows, **kwargs):
        inserted.extend(rows)
        return writes_insert(model, fields, rows, **kwargs)

    writes_insert = writes.insert_rows
    monkeypatch.setattr(node_services, "index_nodes", counted)
    monkeypatch.setattr(archives, "index_nodes", counted)
    monkeypatch.setattr(writes, "insert_rows", insert_rows)
    files = {f"src/module_{n}.py": f"def compute_{n}():\n    return {n}\n".encode() for n in range(3)}
    services.project_import(project=project, archive=io.BytesIO(tar_gz(files)), by=acting(user))
    created = set(
        Node.objects.filter(path__startswith=project.path).exclude(pk=project.pk).values_list("pk", flat=True)
    )
    assert sorted(indexed) == sorted(created)  # the folder by node_bulk_create, the files by the import
    assert len(inserted) == Passage.objects.filter(node_id__in=created).count()  # each passage written once
    assert [hit.name for hit in retrieve(by=system(), query="compute_1")] == ["module_1.py"]


def test_each_process_s_vectors_follow_an_append_without_stale_rows():
    vectors.forget()
    doc = DocumentFactory(content="\n\n".join(LINES).encode())
    give_vectors()
    assert len(vectors.current().ids) == Passage.objects.count()
    first = Passage.objects.get(node=doc, text=LINES[0]).pk
    text = "\n\n".join([*LINES[1:], "a line that is new, and long enough"])
    services.node_content_set(node=doc, data=text.encode(), by=system())
    stored = give_vectors()
    matrix = vectors.current()  # the rows embedded since merged in, the table not read again
    assert set(matrix.ids.tolist()) == {*stored, first}  # a deleted row stays until the next whole read
    for pk, vector in zip(matrix.ids.tolist(), matrix.vectors, strict=True):
        assert pk == first or vector.tobytes() == stored[pk]


def test_vectors_embedded_after_an_empty_look_are_merged_in():
    vectors.forget()
    assert len(vectors.current().ids) == 0  # a fresh index: nothing embedded yet
    DocumentFactory(content="\n\n".join(LINES).encode())
    stored = give_vectors()
    matrix = vectors.current()
    assert sorted(matrix.ids.tolist()) == sorted(stored)
    for pk, vector in zip(matrix.ids.tolist(), matrix.vectors, strict=True):
        assert vector.tobytes() == stored[pk]


def test_rebuild_embeds_under_the_embedding_task_s_lock(monkeypatch):
    from django.core.cache import cache
    from django.core.management import call_command

    from memory.index import writes

    DocumentFactory(content=b"a document with passages to embed")
    limits = []
    monkeypatch.setattr(writes, "embed_pending", lambda *, limit: limits.append(limit) or 7)
    out = io.StringIO()
    assert cache.add(writes.EMBED_LOCK, True)  # a task is embedding
    try:
        call_command("index_rebuild", "--embed", stdout=out)
    finally:
        cache.delete(writes.EMBED_LOCK)
    assert limits == [] and "0 passages embedded." in out.getvalue()
    call_command("index_rebuild", "--embed", stdout=out)
    assert limits == [None] and "7 passages embedded." in out.getvalue()
    assert cache.add(writes.EMBED_LOCK, True)  # let go once done
    cache.delete(writes.EMBED_LOCK)


def test_postgresql_statistics_spare_counting_a_word_they_know_common(monkeypatch):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from memory.index import fulltext

    if connection.vendor != "postgresql":
        pytest.skip("ANALYZE's lexeme statistics are PostgreSQL's; SQLite counts every word")
    monkeypatch.setattr(fulltext, "COMMON", 3)
    monkeypatch.setattr(fulltext, "_stats", (float("-inf"), 3, frozenset()))
    folder = NodeFactory()
    for n in range(8):
        DocumentFactory(parent=folder, content=f"weather report number {n}".encode())
    storm = DocumentFactory(parent=folder, content=b"weather report: a hailstorm")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memory_passage")
    assert "weather" in fulltext._common_stems()
    with CaptureQueriesContext(connection) as queries:
        assert fulltext._matches(["weather", "hailstorm"], space_id=None) == {"weather": 3, "hailstorm": 1}
    assert queries.captured_queries[-1]["sql"].count("count(*)") == 1  # hailstorm's alone
    assert found("weather hailstorm", start=folder) == [storm.pk]


# -- embedding with the server: each space's passages charged to it -----------------------------


@pytest.fixture
def two_spaces(settings, openai_gateway, user) -> tuple[Space, Space]:
    """The default space and another, each with passages waiting for their vectors."""
    settings.MEMSITE_EMBEDDINGS = "server"
    other = space_services.space_create(user=user, slug="other", name="Other")
    DocumentFactory(content=b"ours: a greyhound")
    DocumentFactory(parent=selectors.node_internal_folder(space=other, name="swarmstar"), content=b"theirs: a kestrel")
    return default_space(), other


def _pending(space: Space) -> int:
    return Passage.objects.filter(node__space=space, vector__isnull=True).count()


def test_each_space_s_passages_are_embedded_in_calls_of_memsite_s_own_in_it(two_spaces, openai_gateway):
    ours, theirs = two_spaces
    waiting = {ours.pk: _pending(ours), theirs.pk: _pending(theirs)}

    assert embed_pending(batch=1_000) == sum(waiting.values())

    calls = LLMCall.objects.filter(purpose="embed")
    charged = sorted(calls.values_list("space_id", "user_id", "acted_as"))
    assert charged == sorted([(ours.pk, None, "system"), (theirs.pk, None, "system")])
    for call in calls:
        assert len(call.messages) == waiting[call.space_id]  # one text a passage of its space
    assert not Passage.objects.filter(vector__isnull=True).exists()


def test_a_space_whose_budget_is_spent_waits_and_the_others_go_on(two_spaces, openai_gateway):
    ours, theirs = two_spaces
    theirs.llm_daily_calls = 1
    theirs.save()
    embedder().embed(["the space's one call today"], by=system(theirs))
    waiting = {ours.pk: _pending(ours), theirs.pk: _pending(theirs)}

    # Small batches, some of theirs before some of ours: a spent space holds up no one else's.
    assert embed_pending(batch=3) == waiting[ours.pk]

    assert _pending(ours) == 0 and _pending(theirs) == waiting[theirs.pk]
    assert set(LLMCall.objects.filter(purpose="embed").values_list("space_id", flat=True)) == {ours.pk, theirs.pk}
    assert LLMCall.objects.filter(space=theirs).count() == 1  # refused before anything was sent
    theirs.llm_daily_calls = None
    theirs.save()
    assert embed_pending() == waiting[theirs.pk] and _pending(theirs) == 0


def test_a_backlog_in_one_space_holds_up_no_other_spaces_passages(settings, openai_gateway, user):
    settings.MEMSITE_EMBEDDINGS = "server"
    embed_pending()  # the default space's: two spaces wait, no third
    theirs = space_services.space_create(user=user, slug="theirs", name="Theirs")
    for number in range(10):
        DocumentFactory(
            parent=selectors.node_internal_folder(space=theirs, name="swarmstar"),
            content=f"theirs: kestrel sighting {number}".encode(),
        )
    ours = space_services.space_create(user=user, slug="ours", name="Ours")  # queued after theirs
    DocumentFactory(parent=selectors.node_internal_folder(space=ours, name="swarmstar"), content=b"a greyhound")
    waiting = _pending(ours)
    assert _pending(theirs) > 2 * waiting  # oldest first, theirs would fill the pass

    # One pass of twice ours, in batches of ours: the spaces take turns.
    assert embed_pending(batch=waiting, limit=2 * waiting) == 2 * waiting

    assert _pending(ours) == 0
