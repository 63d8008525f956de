"""The client's memory verbs against the live server: write (and add), get, read, update with
versions, children a page at a time, delete, retrieve (and search), and refusals raised as
MemsiteError subclasses with the API's message."""

from datetime import date, datetime

import httpx
import pytest
from memsite_client import (
    BadRequest,
    Conflict,
    Forbidden,
    MemsiteClient,
    MemsiteError,
    Node,
    NotFound,
    Passage,
    Unauthorized,
)

from memory import selectors
from memsite.spaces.logic import Role
from tests.factories import default_space, token_for

pytestmark = pytest.mark.django_db(transaction=True)


class CountingTransport(httpx.HTTPTransport):
    """The real transport, noting each request's method and path."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[str] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.sent.append(f"{request.method} {request.url.path}")
        return super().handle_request(request)


def test_write_makes_a_document_under_a_folder_path_then_updates_it(memsite, user):
    node = memsite.write("/references/ops/deploy.md", "# Deploy\n\nRun make deploy.", description="How we deploy")

    assert isinstance(node, Node)
    assert (node.path, node.type, node.description, node.version) == (
        "/references/ops/deploy.md",
        "document",
        "How we deploy",
        1,
    )
    assert node.created_by == user.username and node.content_size == len("# Deploy\n\nRun make deploy.")
    folder = memsite.get("/references/ops")
    assert folder.type == "folder" and folder.children_ids == [node.id]
    assert memsite.read(node) == "# Deploy\n\nRun make deploy."

    again = memsite.add("/references/ops/deploy.md", "# Deploy\n\nRun make release.")

    assert again.id == node.id and again.version == 2 and again.description == "How we deploy"
    assert memsite.read("/references/ops/deploy.md") == "# Deploy\n\nRun make release."
    stored = selectors.node_resolve(space=default_space(), path="/references/ops/deploy.md")
    assert stored.pk == node.id and stored.version == 2


def test_get_by_id_or_path_and_the_roots(memsite):
    node = memsite.write("/user/likes.md", "Tea.", description="What the user likes")

    by_id, by_path = memsite.get(node.id), memsite.get("/user/likes.md")

    assert by_id == by_path and by_id.path == "/user/likes.md" and by_id.parent == memsite.get("/user").id
    assert [root.name for root in memsite.roots()] == ["swarmstar", "user", "projects", "references"]
    assert memsite.read_bytes(node) == b"Tea."


def test_children_are_read_a_page_at_a_time_as_the_iteration_reaches_them(server, token):
    transport = CountingTransport()
    with MemsiteClient(server, token, transport=transport) as memsite:
        names = [f"note-{number}.md" for number in range(5)]
        for name in names:
            memsite.write(f"/swarmstar/many/{name}", name)
        transport.sent.clear()

        children = memsite.children("/swarmstar/many", page_size=2)
        assert transport.sent == []  # nothing is read before the iteration starts
        first = next(children)
        assert first.name == "note-0.md" and first.path == "/swarmstar/many/note-0.md"
        assert len(transport.sent) == 2  # the path resolved, and the first page
        rest = [node.name for node in children]

        assert [first.name, *rest] == names
        many = memsite.get("/swarmstar/many").id
        pages = [sent for sent in transport.sent if sent.endswith("/children/")]
        assert pages == [f"GET /api/nodes/{many}/children/"] * 3
        assert [node.name for node in memsite.list(many)] == names  # one page of the default size


def test_an_update_at_a_stale_version_is_a_conflict_and_changes_nothing(memsite):
    node = memsite.write("/references/plan.md", "v1", description="The plan")
    updated = memsite.update(node, content="v2", version=node.version)
    assert updated.version == node.version + 1

    with pytest.raises(Conflict) as refused:
        memsite.update(node, content="stale", version=node.version)

    assert refused.value.status == 409
    assert refused.value.message == (
        f"The node was changed by someone else: it is at version {updated.version}, "
        f"not {node.version}. Reload it and try again."
    )
    assert memsite.read(node) == "v2"
    with pytest.raises(Conflict):
        memsite.update(node, description="stale too", version=node.version)
    assert memsite.get(node).description == "The plan"


def test_an_update_of_metadata_and_content_expects_the_version_the_first_left(memsite):
    node = memsite.write("/references/plan.md", "v1")

    updated = memsite.update(node, name="roadmap.md", description="The plan", content="v2", version=node.version)

    assert (updated.name, updated.description, updated.version) == ("roadmap.md", "The plan", node.version + 2)
    assert memsite.read("/references/roadmap.md") == "v2"


def test_move_takes_the_branch_into_another_folder(memsite):
    memsite.write("/swarmstar/drafts/a.md", "a")

    moved = memsite.move("/swarmstar/drafts", "/references")

    assert moved.name == "drafts" and memsite.read("/references/drafts/a.md") == "a"
    with pytest.raises(NotFound):
        memsite.get("/swarmstar/drafts")


def test_delete_removes_the_branch(memsite):
    memsite.write("/swarmstar/gone/a.md", "a")

    assert memsite.delete("/swarmstar/gone") is None

    for path in ("/swarmstar/gone", "/swarmstar/gone/a.md"):
        with pytest.raises(NotFound):
            memsite.get(path)


def test_retrieve_and_search_find_passages_without_an_llm(memsite):
    node = memsite.write(
        "/references/http.md", "# Codes\n\nA 409 means the resource is in conflict.\n", description="HTTP"
    )
    memsite.write("/references/other.md", "Nothing about status codes here at all.\n", description="Other")

    passages = memsite.retrieve("conflict", k=3)

    assert passages and all(isinstance(passage, Passage) for passage in passages)
    best = passages[0]
    assert (best.node, best.path, best.kind) == (node.id, "/references/http.md", "content")
    assert "conflict" in best.snippet and best.scores.fulltext is not None and best.end > best.start
    assert memsite.search("conflict", k=3, start="/references") == passages
    memsite.write("/references/more.md", "conflict\n" * 6, description="More")
    assert [p.path for p in memsite.retrieve("conflict", k=2, per_node=1)].count("/references/more.md") == 1


def test_retrieve_expands_each_passage_to_its_neighbours_when_asked(memsite):
    text = "# Codes\n\nA 409 means the resource is in conflict.\n\nRetry after reading it again.\n"
    memsite.write("/references/http.md", text, description="HTTP")

    [plain] = memsite.retrieve("conflict", k=1)
    [passage] = memsite.retrieve("conflict", k=1, expand_tokens=200)

    assert plain.expanded is None and passage.expanded is not None
    assert passage.expanded.text == text.strip() == text[passage.expanded.start : passage.expanded.end]
    assert 0 < passage.expanded.tokens <= 200
    with pytest.raises(BadRequest) as refused:
        memsite.retrieve("conflict", expand_tokens=4_001)
    assert refused.value.message == "expand_tokens: Ensure this value is less than or equal to 4000."


def test_dates_written_and_a_window_of_days_retrieved(memsite):
    may_8 = memsite.write("/references/may-8.md", "The pelican flew over.", date=date(2023, 5, 8))
    may_9 = memsite.create("/references", "may-9.md", content="The pelican landed.", date=datetime(2023, 5, 9, 14, 2))
    memsite.write("/references/undated.md", "A pelican, on no day in particular.")

    assert (may_8.date, may_9.date) == (date(2023, 5, 8), date(2023, 5, 9))
    [hit] = memsite.retrieve("pelican", after=date(2023, 5, 9), per_node=1)
    assert (hit.node, hit.date) == (may_9.id, date(2023, 5, 9))
    assert {p.node for p in memsite.retrieve("pelican", before=date(2023, 5, 9))} == {may_8.id, may_9.id}
    assert memsite.update(may_9, date=date(2023, 5, 10)).date == date(2023, 5, 10)
    assert memsite.retrieve("pelican", after=date(2023, 5, 9), before=date(2023, 5, 9)) == []
    with pytest.raises(BadRequest, match="later than"):
        memsite.retrieve("pelican", after=date(2023, 5, 9), before=date(2023, 5, 8))


def test_refusals_carry_the_api_message_and_status(server, memsite):
    with pytest.raises(NotFound) as missing:
        memsite.get("/references/missing.md")
    assert (missing.value.status, missing.value.message) == (404, "No memory node at '/references/missing.md'.")
    assert missing.value.body == {"detail": "No memory node at '/references/missing.md'."}

    with pytest.raises(BadRequest) as invalid:
        memsite.retrieve("anything", k=0)
    assert invalid.value.message == "k: Ensure this value is greater than or equal to 1."

    with pytest.raises(Unauthorized) as unknown, MemsiteClient(server, "ms_not-a-key") as stranger:
        stranger.roots()
    assert unknown.value.message == "Invalid token."


def test_a_readers_write_is_forbidden_with_the_role_it_needs(server, user):
    with MemsiteClient(server, token_for(user, role=Role.READER)) as reader:
        assert reader.get("/references").name == "references"
        with pytest.raises(Forbidden) as refused:
            reader.write("/references/notes.md", "no")

    assert refused.value.message == "Readers can only read; this needs an editor."
    assert isinstance(refused.value, MemsiteError) and str(refused.value).startswith("403: ")


def test_a_space_header_other_than_the_tokens_own_is_not_found(server, token):
    with MemsiteClient(server, token, space="default") as own:
        assert own.get("/user").name == "user"
    with pytest.raises(NotFound) as other, MemsiteClient(server, token, space="elsewhere") as memsite:
        memsite.get("/user")
    assert other.value.message == "No space 'elsewhere'."
