"""The memory tree's tools against seeded memory: what each answers, as the REST API answers it
where the API has the same call, and each refusal the API would give."""

import json
from datetime import date

import pytest
from rest_framework.test import APIClient

from memory import selectors
from memory.models import Node, NodeContent
from memsite.errors import Conflict, Forbidden, InvalidInput, NotFound, TooLarge
from memsite.llm.models import LLMCall
from memsite.spaces.logic import Role
from memsite.spaces.models import Space
from memsite.spaces.services import token_authenticate
from tests.factories import DocumentFactory, NodeFactory, ProjectFactory, default_space, token_for
from tests.memory.api.support import tree_state
from tests.tools.conftest import principal
from tools.registry import tool_call

pytestmark = pytest.mark.django_db

SESSION = "Bo: morning.\n\nAna: I moved to Lisbon last spring for the new job.\n"


@pytest.fixture
def logs():
    folder = NodeFactory(name="logs", description="Logs")
    return DocumentFactory(parent=folder, name="session-3", description="Session 3", content=SESSION.encode())


@pytest.fixture
def other_space():
    return Space.objects.create(slug="other", name="Other")


# -- memory_retrieve -----------------------------------------------------------------------------


def test_retrieve_answers_as_the_rest_api_does(call, editor, logs):
    result = call("memory_retrieve", query="Where did Ana move?", k=3)

    rest = APIClient()
    rest.credentials(HTTP_AUTHORIZATION=f"Token {token_for(editor.user)}")
    response = rest.post("/api/retrieve/", {"query": "Where did Ana move?", "k": 3}, format="json")
    assert json.loads(json.dumps(result)) == response.json()
    first = result["results"][0]
    assert first["node"] == logs.pk and first["path"] == "/swarmstar/logs/session-3"
    assert "Lisbon" in SESSION[first["start"] : first["end"]]


def test_retrieve_under_a_start_given_by_path(call):
    a, b = NodeFactory(name="a"), NodeFactory(name="b")
    DocumentFactory(parent=a, content=b"pelican")
    in_b = DocumentFactory(parent=b, content=b"pelican")

    result = call("memory_retrieve", query="pelican", start="/swarmstar/b")

    assert [hit["node"] for hit in result["results"]] == [in_b.pk]


def test_retrieve_per_node_answers_the_best_nodes_as_the_rest_api_does(call, editor):
    folder = NodeFactory(name="f")
    crowded = DocumentFactory(parent=folder, content="\n".join(f"pelican {n}" for n in range(12)).encode())
    other = DocumentFactory(parent=folder, content=b"one pelican")

    result = call("memory_retrieve", query="pelican", k=2, per_node=1)

    assert {hit["node"] for hit in result["results"]} == {crowded.pk, other.pk}
    rest = APIClient()
    rest.credentials(HTTP_AUTHORIZATION=f"Token {token_for(editor.user)}")
    response = rest.post("/api/retrieve/", {"query": "pelican", "k": 2, "per_node": 1}, format="json")
    assert json.loads(json.dumps(result)) == response.json()


def test_retrieve_expands_a_hit_as_the_rest_api_does_to_a_span_memory_read_reads(call, editor, logs):
    result = call("memory_retrieve", query="Where did Ana move?", k=1, expand_tokens=100)

    rest = APIClient()
    rest.credentials(HTTP_AUTHORIZATION=f"Token {token_for(editor.user)}")
    body = {"query": "Where did Ana move?", "k": 1, "expand_tokens": 100}
    assert json.loads(json.dumps(result)) == rest.post("/api/retrieve/", body, format="json").json()
    expanded = result["results"][0]["expanded"]
    assert expanded["text"] == SESSION.strip() and expanded["tokens"] <= 100
    read = call("memory_read", node=logs.pk, offset=expanded["start"], limit=expanded["end"] - expanded["start"])
    assert read["content"] == expanded["text"]
    with pytest.raises(InvalidInput) as refused:
        call("memory_retrieve", query="Lisbon", expand_tokens=0)
    assert "expand_tokens" in refused.value.data["arguments"]


def test_retrieve_in_a_window_of_days_answers_as_the_rest_api_does(call, editor):
    folder = NodeFactory(name="diary", description="")
    for day in ("2023-05-07", "2023-05-08", "2023-05-09"):
        DocumentFactory(
            parent=folder, name=day, description="", content=b"A pelican, seen.", date=date.fromisoformat(day)
        )
    window = {"query": "pelican", "after": "2023-05-08", "before": "2023-05-08"}

    result = call("memory_retrieve", **window)

    assert [hit["date"] for hit in result["results"]] == ["2023-05-08"]
    rest = APIClient()
    rest.credentials(HTTP_AUTHORIZATION=f"Token {token_for(editor.user)}")
    assert json.loads(json.dumps(result)) == rest.post("/api/retrieve/", window, format="json").json()


@pytest.mark.parametrize(
    ("window", "field", "message"),
    [
        ({"after": "8 May 2023"}, "after", "Not an ISO 8601 date"),
        ({"before": 20230508}, "before", "valid date"),
        ({"after": "2023-05-09", "before": "2023-05-08"}, None, "later than `before`"),
    ],
)
def test_retrieve_refuses_a_bad_window(call, window, field, message):
    with pytest.raises(InvalidInput) as refused:
        call("memory_retrieve", query="pelican", **window)
    named = refused.value.data["arguments"][field][0] if field else refused.value.message
    assert message in named


def test_the_query_s_embedding_is_charged_to_the_caller_and_their_token(settings, openai_gateway, monkeypatch, editor):
    settings.MEMSITE_EMBEDDINGS = "server"
    monkeypatch.setattr("memory.index.retrieve.query_cache", {})
    through_token = token_authenticate(key=token_for(editor.user))

    tool_call(through_token, "memory_retrieve", {"query": "pelican"})

    [call] = LLMCall.objects.filter(purpose="embed")
    assert (call.user_id, call.space_id, call.token_id) == (editor.user.pk, default_space().pk, through_token.token.pk)


# -- memory_read ---------------------------------------------------------------------------------


def test_read_by_path_or_id_gives_the_node_and_its_text(call, logs):
    by_path = call("memory_read", node="/swarmstar/logs/session-3")
    by_id = call("memory_read", node=logs.pk)

    assert by_path == by_id
    assert by_path["node"]["id"] == logs.pk and by_path["node"]["path"] == "/swarmstar/logs/session-3"
    assert by_path["node"]["version"] == 1 and by_path["node"]["description"] == "Session 3"
    assert (by_path["content"], by_path["offset"], by_path["end"]) == (SESSION, 0, len(SESSION))
    assert (by_path["total_chars"], by_path["binary"]) == (len(SESSION), False)


def test_read_gives_a_range_of_characters_and_says_how_many_there_are(call):
    text = "Ünïcode " * 5_000  # 40,000 characters, more bytes
    document = DocumentFactory(content=text.encode())

    first = call("memory_read", node=document.pk)
    rest = call("memory_read", node=document.pk, offset=first["end"], limit=100_000)
    past = call("memory_read", node=document.pk, offset=50_000)

    assert (first["offset"], first["end"], first["total_chars"]) == (0, 20_000, 40_000)
    assert first["content"] + rest["content"] == text and rest["end"] == 40_000
    assert (past["content"], past["end"]) == ("", 50_000)


def test_read_of_a_folder_or_of_bytes_gives_no_text(call):
    project = ProjectFactory(name="tool")
    binary = NodeFactory(
        parent=project,
        type="project_file_bytes",
        name="logo.png",
        context={"file_path": "logo.png"},
        content=b"\x89PNG\r\n\x1a\n\xff",
    )

    folder = call("memory_read", node="/projects/tool")
    image = call("memory_read", node=binary.pk)

    assert folder["node"]["is_folder"] and (folder["content"], folder["total_chars"], folder["binary"]) == (
        None,
        None,
        False,
    )
    assert image["node"]["content_size"] == 9 and (image["content"], image["binary"]) == (None, True)


@pytest.mark.parametrize("ref", ["/swarmstar/nowhere", "memory_" + "0" * 32])
def test_read_of_a_node_that_is_not_there_is_a_404(call, ref):
    with pytest.raises(NotFound, match="No memory node"):
        call("memory_read", node=ref)


def test_another_space_s_nodes_are_not_found_by_id_or_path(call, other_space, logs):
    outsider = principal(Role.OWNER, space=other_space)

    before = tree_state()
    for tool, arguments, message in [
        ("memory_read", {"node": logs.pk}, f"No memory node with id '{logs.pk}'."),
        ("memory_read", {"node": "/swarmstar/logs/session-3"}, "No memory node at '/swarmstar/logs/session-3'."),
        ("memory_list", {"node": logs.parent_id}, f"No memory node with id '{logs.parent_id}'."),
        ("memory_retrieve", {"query": "Lisbon", "start": logs.pk}, f"No memory node with id '{logs.pk}'."),
        (
            "memory_write",
            {"parent": logs.parent_id, "name": "x.md", "content": "x"},
            f"No memory node with id '{logs.parent_id}'.",
        ),
    ]:
        with pytest.raises(NotFound) as refused:
            call(tool, as_=outsider, **arguments)
        assert refused.value.message == message, tool
    assert tree_state() == before
    assert call("memory_retrieve", as_=outsider, query="Lisbon")["results"] == []


# -- memory_write --------------------------------------------------------------------------------


def test_write_creates_a_document_then_updates_it(call, editor, internal):
    created = call("memory_write", parent="/references", name="ports.md", content="# Ports\n", description="Ports")
    updated = call("memory_write", parent=internal["references"].pk, name="ports.md", content="# Ports\n\n8443\n")

    document = Node.objects.get(pk=created["node"]["id"])
    assert created["created"] and not updated["created"] and updated["node"]["id"] == document.pk
    assert (created["node"]["version"], updated["node"]["version"]) == (1, 2)
    assert updated["node"]["path"] == "/references/ports.md" and updated["node"]["children_ids"] == []
    assert bytes(NodeContent.objects.get(node=document).data) == b"# Ports\n\n8443\n"
    assert (document.type, document.description, document.created_by) == ("document", "Ports", editor.user)


def test_write_takes_folder_the_old_name_of_parent_but_not_both(call):
    written = call("memory_write", folder="/references", name="ports.md", content="# Ports\n")
    assert written["created"] and written["node"]["path"] == "/references/ports.md"

    with pytest.raises(InvalidInput) as refused:
        call("memory_write", folder="/references", parent="/references", name="more.md", content="x")
    assert "folder" in refused.value.data["arguments"]
    assert not Node.objects.filter(name="more.md").exists()


def test_write_replaces_content_and_description_together(call):
    document = DocumentFactory(name="plan.md", description="Old")

    result = call("memory_write", parent="/swarmstar", name="plan.md", content="New text.", description="New")

    assert result["node"]["description"] == "New" and result["node"]["version"] == 3
    assert call("memory_read", node=document.pk)["content"] == "New text."


def test_write_dates_a_document_made_or_there_and_null_keeps_its_date(call):
    made = call("memory_write", parent="/swarmstar", name="standup.md", content="Ana: green.", date="2023-05-08")
    kept = call("memory_write", parent="/swarmstar", name="standup.md", content="Ana: still green.")
    dated = call("memory_write", parent="/swarmstar", name="standup.md", date="2023-05-09T08:00:00")

    assert (made["node"]["date"], kept["node"]["date"], dated["node"]["date"]) == (
        "2023-05-08",
        "2023-05-08",
        "2023-05-09",
    )
    assert call("memory_read", node=made["node"]["id"])["content"] == "Ana: still green."
    hit = call("memory_retrieve", query="green")["results"][0]
    assert (hit["node"], hit["date"]) == (made["node"]["id"], "2023-05-09")


def test_write_of_a_description_alone_keeps_the_text(call):
    document = DocumentFactory(name="plan.md", content=b"Keep me.")

    result = call("memory_write", parent="/swarmstar", name="plan.md", description="Described")

    assert (result["node"]["description"], result["node"]["version"]) == ("Described", 2)
    assert call("memory_read", node=document.pk)["content"] == "Keep me."


def test_write_with_a_stale_version_is_a_409_and_writes_nothing(call):
    DocumentFactory(name="plan.md", content=b"First.")
    call("memory_write", parent="/swarmstar", name="plan.md", content="Second.", version=1)
    before = tree_state()

    with pytest.raises(Conflict, match="at version 2, not 1"):
        call("memory_write", parent="/swarmstar", name="plan.md", content="Third.", description="Late", version=1)
    with pytest.raises(Conflict, match="at version 2, not 1"):
        call("memory_write", parent="/swarmstar", name="plan.md", description="Late", version=1)
    with pytest.raises(Conflict, match="no child named 'gone.md'"):
        call("memory_write", parent="/swarmstar", name="gone.md", content="x", version=1)

    assert tree_state() == before


def test_write_refuses_what_is_not_a_document_or_nothing_to_write(call):
    NodeFactory(name="plans")
    DocumentFactory(name="plan.md")
    before = tree_state()

    with pytest.raises(Conflict, match="'plans' is a folder node, not a document"):
        call("memory_write", parent="/swarmstar", name="plans", content="x")
    with pytest.raises(InvalidInput, match="Nothing to write"):
        call("memory_write", parent="/swarmstar", name="plan.md")
    with pytest.raises(InvalidInput, match="must not contain '/'"):
        call("memory_write", parent="/swarmstar", name="plans/plan.md", content="x")
    with pytest.raises(NotFound):  # the top folders are the internal ones, which nobody makes
        call("memory_write", parent="/nowhere/notes", name="plan.md", content="x")
    with pytest.raises(NotFound):  # an id names a node that is there; only a path's folders are made
        call("memory_write", parent="memory_" + "0" * 32, name="plan.md", content="x")

    assert tree_state() == before


def test_write_makes_the_missing_folders_of_its_path(call):
    written = call("memory_write", parent="/swarmstar/nodes/me/notes", name="plan.md", content="# Plan\n")

    notes = selectors.node_resolve(space=default_space(), path="/swarmstar/nodes/me/notes")
    assert written["created"] and written["node"]["parent"] == notes.pk
    assert [node.type for node in [*selectors.node_ancestors(node=notes), notes]][1:] == ["folder"] * 3
    again = call("memory_write", parent="/swarmstar/nodes/me/notes", name="plan.md", content="# Plan 2\n")
    assert not again["created"] and again["node"]["id"] == written["node"]["id"]


def test_write_over_the_content_cap_is_a_413(call, settings):
    settings.MEMSITE_MAX_CONTENT_BYTES = 1_024
    before = tree_state()

    with pytest.raises(TooLarge):
        call("memory_write", parent="/swarmstar", name="big.md", content="x" * 1_025)

    assert tree_state() == before


def test_write_under_holds_a_token_to_its_folder(call):
    nodes = NodeFactory(name="nodes")
    mine, theirs = NodeFactory(parent=nodes, name="a"), NodeFactory(parent=nodes, name="b")
    DocumentFactory(parent=theirs, name="notes.md", content=b"Theirs.")
    scoped = principal(Role.EDITOR, write_under="/swarmstar/nodes/a/")

    written = call("memory_write", as_=scoped, parent="/swarmstar/nodes/a", name="notes.md", content="Mine.")
    before = tree_state()
    for folder, name in [
        ("/swarmstar/nodes/b", "notes.md"),
        ("/swarmstar/nodes/b", "new.md"),
        ("/swarmstar/nodes", "c.md"),
    ]:
        with pytest.raises(Forbidden, match="This token writes only under /swarmstar/nodes/a/."):
            call("memory_write", as_=scoped, parent=folder, name=name, content="Overwritten.")

    assert written["created"] and written["node"]["parent"] == mine.pk
    assert tree_state() == before


def test_a_token_makes_folders_only_under_its_own_and_a_refusal_makes_none(call):
    scoped = principal(Role.EDITOR, write_under="/swarmstar/nodes/a/")
    NodeFactory(parent=NodeFactory(name="nodes"), name="a")

    written = call("memory_write", as_=scoped, parent="/swarmstar/nodes/a/runs/1", name="log.md", content="ok")
    before = tree_state()
    with pytest.raises(Forbidden, match="This token writes only under /swarmstar/nodes/a/."):
        call("memory_write", as_=scoped, parent="/swarmstar/nodes/b/runs", name="log.md", content="x")
    with pytest.raises(Forbidden):
        call("memory_folder", as_=scoped, path="/swarmstar/other/deep")

    assert written["created"] and tree_state() == before


# -- memory_list ---------------------------------------------------------------------------------


def test_list_of_the_top_gives_the_roots(call):
    result = call("memory_list")

    assert result["node"] is None and result["next_cursor"] is None
    assert [(child["name"], child["path"]) for child in result["children"]] == [
        ("swarmstar", "/swarmstar"),
        ("user", "/user"),
        ("projects", "/projects"),
        ("references", "/references"),
    ]
    page = call("memory_list", limit=3)
    assert [child["name"] for child in call("memory_list", cursor=page["next_cursor"])["children"]] == ["references"]


def test_list_pages_through_a_folder_in_order(call, editor):
    folder = NodeFactory(name="many")
    names = [DocumentFactory(parent=folder, name=f"n{index:02}.md").name for index in range(7)]

    pages, cursor = [], None
    while True:
        page = call("memory_list", node="/swarmstar/many", limit=3, cursor=cursor)
        pages.append([child["name"] for child in page["children"]])
        cursor = page["next_cursor"]
        if cursor is None:
            break

    assert pages == [names[:3], names[3:6], names[6:]]
    assert page["node"]["path"] == "/swarmstar/many" and page["children"][0]["path"] == "/swarmstar/many/n06.md"
    rest = APIClient()
    rest.credentials(HTTP_AUTHORIZATION=f"Token {token_for(editor.user)}")
    children = rest.get(f"/api/nodes/{folder.pk}/children/?page_size=3").json()["results"]
    first = call("memory_list", node=folder.pk, limit=3)["children"]
    assert json.loads(json.dumps(first)) == children


@pytest.mark.parametrize("cursor", ["0001", "zzzz", "00010001000", "'; drop"])
def test_a_cursor_that_is_not_the_folder_s_is_a_400(call, cursor):
    NodeFactory(name="many")

    with pytest.raises(InvalidInput) as refused:
        call("memory_list", node="/swarmstar/many", cursor=cursor)

    assert "cursor" in refused.value.data


# -- memory_folder, memory_update, memory_move, memory_delete ------------------------------------


def test_folder_makes_the_folders_missing_and_gives_one_that_is_there(call):
    made = call("memory_folder", path="/swarmstar/nodes/a")
    there = call("memory_folder", path="/swarmstar/nodes/a")

    assert made["node"]["id"] == there["node"]["id"] and made["node"]["type"] == "folder"
    assert made["node"]["path"] == "/swarmstar/nodes/a"


def test_folder_refuses_a_path_through_a_document(call):
    DocumentFactory(name="plan.md")
    before = tree_state()

    with pytest.raises(InvalidInput, match="'/swarmstar/plan.md' is a document, not a folder"):
        call("memory_folder", path="/swarmstar/plan.md")
    with pytest.raises(InvalidInput):
        call("memory_folder", path="/swarmstar/plan.md/inside")

    assert tree_state() == before


def test_update_renames_and_describes_at_the_version_read(call):
    document = DocumentFactory(name="plan.md")

    renamed = call("memory_update", node="/swarmstar/plan.md", name="goals.md", version=document.version)
    described = call("memory_update", node=document.pk, description="The swarm's goals")
    dated = call("memory_update", node=document.pk, date="2023-05-08")

    assert renamed["node"]["path"] == "/swarmstar/goals.md"
    assert described["node"]["description"] == "The swarm's goals"
    assert (dated["node"]["date"], dated["node"]["version"]) == ("2023-05-08", 4)
    before = tree_state()
    with pytest.raises(Conflict):
        call("memory_update", node=document.pk, name="late.md", version=document.version)
    with pytest.raises(InvalidInput, match="Nothing to change"):
        call("memory_update", node=document.pk)
    assert tree_state() == before


def test_move_puts_a_node_and_its_branch_into_another_folder(call):
    folder = NodeFactory(name="drafts")
    DocumentFactory(parent=folder, name="plan.md")

    moved = call("memory_move", node="/swarmstar/drafts", parent="/references")

    assert moved["node"]["path"] == "/references/drafts"
    assert selectors.node_resolve(space=default_space(), path="/references/drafts/plan.md")


def test_a_token_moves_and_deletes_only_under_its_folder(call):
    mine = NodeFactory(parent=NodeFactory(name="nodes"), name="a")
    DocumentFactory(parent=mine, name="notes.md")
    DocumentFactory(name="plan.md")
    scoped = principal(Role.EDITOR, write_under="/swarmstar/nodes/a/")
    before = tree_state()

    with pytest.raises(Forbidden):
        call("memory_move", as_=scoped, node="/swarmstar/nodes/a/notes.md", parent="/references")
    with pytest.raises(Forbidden):
        call("memory_delete", as_=scoped, node="/swarmstar/plan.md")
    assert tree_state() == before

    assert call("memory_delete", as_=scoped, node="/swarmstar/nodes/a/notes.md") == {
        "deleted": "/swarmstar/nodes/a/notes.md"
    }


def test_delete_takes_the_branch_and_leaves_the_top_folders(call):
    folder = NodeFactory(name="drafts")
    DocumentFactory(parent=folder, name="plan.md")

    assert call("memory_delete", node="/swarmstar/drafts") == {"deleted": "/swarmstar/drafts"}
    with pytest.raises(NotFound):
        call("memory_read", node="/swarmstar/drafts/plan.md")
    before = tree_state()
    with pytest.raises(Forbidden):
        call("memory_delete", node="/swarmstar")
    assert tree_state() == before


def test_folder_made_by_another_writer_meanwhile_is_theirs(call, monkeypatch):
    """Two nodes' first writes at once: the second finds no folder, then cannot make it."""
    theirs = NodeFactory(name="shared")
    real = selectors.node_children
    misses = iter([True])

    def children_missing_once(*, node, **options):
        found = real(node=node, **options)
        return found.none() if next(misses, False) else found

    monkeypatch.setattr("memory.services.documents.selectors.node_children", children_missing_once)
    made = call("memory_folder", path="/swarmstar/shared")

    assert made["node"]["id"] == theirs.pk
