"""The memory browser's curation: a document edited in its panel, a node moved with the folder
picker, a folder's contents, a deep link's open tree, the swaps a write sends the tree, and a
node's history."""

import re
from dataclasses import replace

import pytest
from django.urls import reverse

from memory import selectors, services
from memory.models import Node
from memory.permissions import node_permissions
from memory.rendering import PREVIEW_LIMIT_BYTES
from memory.views import EDITOR_MAX_BYTES, editor_context
from memsite.spaces.logic import Role
from tests.factories import (
    DocumentFactory,
    NodeFactory,
    ProjectFactory,
    UserFactory,
    acting,
    default_space,
    system,
    token_for,
)
from tests.memory.views.conftest import HTMX

pytestmark = pytest.mark.django_db


def url(name: str, node: Node, query: str = "") -> str:
    return reverse(f"memory:{name}", args=[node.pk]) + query


@pytest.fixture
def reader_client(client):
    client.force_login(UserFactory(role=Role.READER))
    return client


# -- editing a document in its panel -------------------------------------------------------------


def test_a_document_panel_offers_its_editor_which_opens_with_all_its_text(user_client):
    document = DocumentFactory(content=b"# Plan\n\n" + b"x" * 20_000)
    panel = user_client.get(url("node_detail", document), **HTMX).content.decode()
    assert "Edit content" in panel and url("document_edit", document) in panel
    html = user_client.get(url("document_edit", document), **HTMX).content.decode()
    textarea = re.search(r'<textarea name="content" id="document-content"[^>]*>\n(.*?)</textarea>', html, re.S)
    assert textarea and textarea.group(1) == "# Plan\n\n" + "x" * 20_000  # the whole text, not a preview
    assert '<input type="hidden" name="panel" value="1">' in html
    assert f'id="document-version" value="{document.version}"' in html and "<h1>Plan</h1>" in html


def test_the_editor_without_htmx_is_the_page_with_the_editor_open(user_client):
    document = DocumentFactory()
    html = user_client.get(url("document_edit", document)).content.decode()
    assert "<!doctype html>" in html and 'class="action action-edit" open' in html
    assert 'id="document-content"' in html


def test_only_text_documents_have_an_editor(user_client):
    project_file = services.node_create(
        parent=ProjectFactory(),
        type="project_file_bytes",
        name="a.py",
        context={"file_path": "a.py"},
        content=b"x",
        by=system(),
    )
    assert "Edit content" not in user_client.get(url("node_detail", project_file), **HTMX).content.decode()
    response = user_client.get(url("document_edit", project_file), **HTMX)
    assert response.status_code == 400 and "holds no text to edit" in response.content.decode()


def test_the_editor_previews_the_start_of_a_long_text(user_client):
    document = DocumentFactory(content=b"# Start\n\n" + b"x" * PREVIEW_LIMIT_BYTES + b"\n\n# Tail\n")
    html = user_client.get(url("document_edit", document), **HTMX).content.decode()
    assert "# Tail" in html and "<h1>Start</h1>" in html and "<h1>Tail</h1>" not in html
    assert "The preview shows the start of the text only." in html
    # As much of it as a live preview may send, for static/js/editor.js to cut it to.
    assert f'data-preview-bytes="{editor_context(document)["preview_bytes"]}"' in html


@pytest.mark.parametrize("htmx", [HTMX, {}])
def test_a_reader_gets_no_editor(reader_client, htmx):
    response = reader_client.get(url("document_edit", DocumentFactory(name="plan.md")), **htmx)
    html = response.content.decode()
    assert response.status_code == 403 and "this needs an editor" in html and "<textarea" not in html


def test_a_node_whose_text_nobody_may_write_gets_no_editor(user_client, internal, monkeypatch):
    document = DocumentFactory(parent=internal["user"], name="plan.md")
    refused = replace(node_permissions(document, by=system()), write_content=False)
    monkeypatch.setattr("memory.views.node_permissions", lambda *args, **kwargs: refused)
    response = user_client.get(url("document_edit", document), **HTMX)
    assert response.status_code == 403 and "<textarea" not in response.content.decode()


@pytest.mark.parametrize("htmx", [HTMX, {}])
def test_a_document_too_large_for_the_editor_is_refused(user_client, htmx):
    document = DocumentFactory(name="big.md", content=b"x" * (EDITOR_MAX_BYTES + 1))
    response = user_client.get(url("document_edit", document), **htmx)
    html = response.content.decode()
    assert response.status_code == 413 and "<textarea" not in html
    assert f"'big.md' holds {EDITOR_MAX_BYTES + 1} bytes: the editor opens documents of up to" in html
    at_cap = DocumentFactory(content=b"x" * EDITOR_MAX_BYTES)
    assert user_client.get(url("document_edit", at_cap), **htmx).status_code == 200


def test_a_save_from_the_panel_goes_back_to_the_panel(user_client):
    document = DocumentFactory()
    data = {"version": document.version, "content": "# New\n", "panel": "1"}
    response = user_client.post(url("document_save", document), data)
    assert response.status_code == 302 and response["Location"] == url("node_detail", document)
    assert selectors.node_content(node=document) == b"# New\n"


def test_a_save_in_the_panel_shows_the_new_content_in_it(user_client):
    document = DocumentFactory()
    data = {"version": document.version, "content": "# New **text**\n", "panel": "1"}
    html = user_client.post(url("document_save", document), data, **HTMX).content.decode()
    assert "Saved." in html and 'id="document-version" value="2"' in html
    section = re.search(r'<section class="preview" id="node-content" hx-swap-oob="true">(.*?)</section>', html, re.S)
    assert section and "<strong>text</strong>" in section.group(1)


def test_a_save_in_the_panel_brings_its_version_up_to_date_for_a_rename(user_client):
    document = DocumentFactory(name="plan.md")
    data = {"version": document.version, "content": "# New\n", "panel": "1"}
    html = user_client.post(url("document_save", document), data, **HTMX).content.decode()
    assert re.search(r'<dd id="node-version" hx-swap-oob="true">2 ', html)
    field = '<input type="hidden" name="version" id="node-update-version" value="2" hx-swap-oob="true">'
    assert field in html
    assert '<dd id="node-content-size" hx-swap-oob="true">6 bytes</dd>' in html  # "# New\n", not the old size
    rename = {"version": "2", "name": "plan2.md", "description": ""}
    response = user_client.post(url("node_update", document), rename, **HTMX)
    assert response.status_code == 200 and selectors.node_fresh(node=document).name == "plan2.md"


def test_a_conflict_in_the_panel_says_so_and_reloads_the_panel(user_client):
    document = DocumentFactory()
    services.node_content_set(node=document, data=b"theirs", by=system())
    data = {"version": document.version, "content": "mine", "panel": "1"}
    response = user_client.post(url("document_save", document), data, **HTMX)
    assert response.status_code == 409
    html = response.content.decode()
    assert "changed by someone else" in html and f'href="{url("node_detail", document)}">Reload</a>' in html
    assert selectors.node_content(node=document) == b"theirs"


def test_readers_see_no_write_actions_and_may_not_write(reader_client):
    folder = NodeFactory()
    document = DocumentFactory(parent=folder)
    html = reader_client.get(url("node_detail", document), **HTMX).content.decode()
    for action in ("Edit content", "Move", "Rename or describe", "Delete", url("document_save", document)):
        assert action not in html
    assert "History" in html  # reading is theirs
    folder_html = reader_client.get(url("node_detail", folder), **HTMX).content.decode()
    assert "New in this folder" not in folder_html and document.name in folder_html
    response = reader_client.post(url("node_move", document), {"parent": folder.parent_id}, **HTMX)
    assert response.status_code == 403
    data = {"version": document.version, "content": "x", "panel": "1"}
    assert reader_client.post(url("document_save", document), data, **HTMX).status_code == 403


# -- moving a node ------------------------------------------------------------------------------


def test_the_picker_finds_folders_by_name_outside_the_nodes_branch(user_client, internal):
    moved = NodeFactory(name="drafts")
    NodeFactory(parent=moved, name="old drafts")  # inside what is moved: not offered
    NodeFactory(parent=internal["references"], name="Drafts archive")
    DocumentFactory(parent=internal["references"], name="drafts.md")  # not a folder
    html = user_client.get(url("node_move_folders", moved, "?q=DRAFT"), **HTMX).content.decode()
    assert re.findall(r'<span class="folder-path">(.*?)</span>', html) == ["/references/Drafts archive"]


def test_the_picker_starts_at_the_roots_and_marks_where_the_node_is(user_client, internal):
    document = DocumentFactory(parent=internal["user"])
    html = user_client.get(url("node_move_folders", document), **HTMX).content.decode()
    paths = re.findall(r'<span class="folder-path">(.*?)</span>', html)
    assert paths == ["/swarmstar", "/user", "/projects", "/references"]
    assert re.search(rf'value="{internal["user"].pk}" disabled>', html) and "(it is here)" in html


def test_the_picker_finds_a_folder_by_its_path_or_id_but_none_in_the_moved_branch(user_client, internal):
    moved = NodeFactory(parent=internal["swarmstar"], name="drafts")
    inside = NodeFactory(parent=moved, name="old")
    target = NodeFactory(parent=internal["references"], name="archive")

    def found(query: str) -> tuple[list[str], str]:
        html = user_client.get(url("node_move_folders", moved), {"q": query}, **HTMX).content.decode()
        return re.findall(r'<span class="folder-path">(.*?)</span>', html), html

    for query in ("/references/archive", target.pk):
        paths, html = found(query)
        assert paths == ["/references/archive"] and f'name="parent" value="{target.pk}" checked>' in html
    for query in ("/swarmstar/drafts/old", inside.pk, "/references/archive/none"):
        paths, html = found(query)
        assert paths == [] and "No folder's name holds" in html


def test_the_picker_shows_a_bounded_number_of_folders(user_client, internal):
    for number in range(25):
        NodeFactory(parent=internal["references"], name=f"box {number}")
    html = user_client.get(url("node_move_folders", DocumentFactory(), "?q=box"), **HTMX).content.decode()
    assert html.count('name="parent"') == 20 and "More folders match" in html
    response = user_client.get(url("node_move_folders", DocumentFactory(), "?q=" + "x" * 256), **HTMX)
    assert response.status_code == 400 and "at most 255 characters" in response.content.decode()


def test_a_move_from_the_panel_moves_and_updates_the_shown_tree(user_client, internal):
    source, target = NodeFactory(name="src"), NodeFactory(parent=internal["references"], name="dst")
    document = DocumentFactory(parent=source, name="plan.md")
    shown = [source.pk, target.pk, document.pk]
    response = user_client.post(url("node_move", document), {"parent": target.pk, "shown": shown}, **HTMX)
    assert response.status_code == 200
    html = response.content.decode()
    assert "Moved &#x27;plan.md&#x27; to /references/dst." in html
    assert selectors.node_fresh(node=document).parent_id == target.pk
    # out of the old list and into the new one, the removal first; both counts refreshed
    removed = html.index(f'<li id="item-{document.pk}" hx-swap-oob="delete">')
    assert removed < html.index(f'<ul hx-swap-oob="beforeend:#children-{target.pk}">')
    assert f'id="count-{source.pk}" title="children" hx-swap-oob="true">0<' in html
    assert f'id="count-{target.pk}" title="children" hx-swap-oob="true">1<' in html
    assert [event.action for event in selectors.node_history(space=default_space(), node_id=document.pk)] == [
        "create",
        "move",
    ]


def test_a_move_without_htmx_redirects_to_the_node(user_client, internal):
    document = DocumentFactory()
    response = user_client.post(url("node_move", document), {"parent": internal["references"].pk})
    assert response.status_code == 302 and response["Location"] == url("node_detail", document)


@pytest.mark.parametrize(
    "case, status, message",
    [
        ("itself", 409, "cannot be moved into itself or its own branch"),
        ("inside", 409, "cannot be moved into itself or its own branch"),
        ("document", 400, "is not a folder, so it cannot hold other nodes"),
        ("clash", 409, "already has a child named &#x27;same&#x27;"),
        ("missing", 404, "No memory node with id &#x27;memory_nothing&#x27;"),
        ("empty", 400, "Choose the folder to move it into."),
    ],
)
def test_a_refused_move_says_why_and_changes_nothing(user_client, internal, case, status, message):
    folder = NodeFactory(name="same")
    inner = NodeFactory(parent=folder)
    elsewhere = NodeFactory(parent=internal["references"])
    NodeFactory(parent=elsewhere, name="same")
    destination = {
        "itself": folder.pk,
        "inside": inner.pk,
        "document": DocumentFactory().pk,
        "clash": elsewhere.pk,
        "missing": "memory_nothing",
        "empty": "",
    }[case]
    response = user_client.post(url("node_move", folder), {"parent": destination}, **HTMX)
    assert response.status_code == status
    html = response.content.decode()
    assert message in html and 'class="action action-move" open' in html  # the picker stays open
    assert html.count('name="parent"') == 4  # at the roots, to choose again
    assert selectors.node_fresh(node=folder).parent_id == internal["swarmstar"].pk


def test_internal_folders_cannot_be_moved_and_offer_no_move(staff_client, internal):
    folder = internal["user"]
    assert "action-move" not in staff_client.get(url("node_detail", folder), **HTMX).content.decode()
    response = staff_client.post(url("node_move", folder), {"parent": internal["references"].pk}, **HTMX)
    assert response.status_code == 403 and "The internal folder &#x27;user&#x27; cannot be moved." in (
        response.content.decode()
    )


# -- a folder's contents ---------------------------------------------------------------------------


def test_a_folder_panel_lists_its_children_a_page_at_a_time(user_client, settings):
    settings.MEMSITE_CHILDREN_PAGE_SIZE = 2
    folder = NodeFactory()
    children = [NodeFactory(parent=folder, name="sub"), DocumentFactory(parent=folder, name="a.md", content=b"12345")]
    children.append(DocumentFactory(parent=folder, name="b.md"))
    html = user_client.get(url("node_detail", folder), **HTMX).content.decode()
    rows = re.findall(r'class="child-link" href="/memory/([^/]+)/"[^>]*>(.*?)</a>', html)
    assert rows == [(children[0].pk, "sub"), (children[1].pk, "a.md")]
    assert ">folder</span>" in html and ">document</span>" in html and "5\xa0bytes" in html
    after = re.search(r'href="(/memory/[^"]+\?after=\w+)"[^>]*>Next items', html).group(1)
    html = user_client.get(after, **HTMX).content.decode()
    assert re.findall(r'class="child-link"[^>]*>(.*?)</a>', html) == ["b.md"] and "First items" in html
    assert user_client.get(url("node_detail", folder, "?after=../x"), **HTMX).status_code == 400


def test_an_empty_folder_panel_says_so(user_client):
    assert "Empty folder." in user_client.get(url("node_detail", NodeFactory()), **HTMX).content.decode()


# -- the tree: deep links and the swaps of writes ---------------------------------------------------


def test_a_deep_link_opens_the_tree_down_to_the_node(user_client, internal):
    outer = NodeFactory(name="outer")
    inner = NodeFactory(parent=outer, name="inner")
    document = DocumentFactory(parent=inner, name="deep.md")
    html = user_client.get(url("node_detail", document)).content.decode()
    for folder in (internal["swarmstar"], outer, inner):
        opened = rf'<li class="tree-item" id="item-{folder.pk}">\s*<details class="tree-folder" open>'
        assert re.search(opened, html), folder.name
    assert re.search(rf'id="link-{document.pk}"[^>]*aria-current="location"', html)
    # the other roots stay closed, their children loaded when opened
    assert re.search(rf'id="item-{internal["user"].pk}">\s*<details class="tree-folder" hx-get', html)


def test_a_panel_link_the_tree_does_not_show_brings_the_tree_opened_down_to_it(user_client, internal):
    document = DocumentFactory(parent=NodeFactory(name="outer"), name="deep.md")
    plain = user_client.get(url("node_detail", document), **HTMX)
    assert "tree-roots" not in plain.content.decode() and "X-Tree-Reveal" in plain["Vary"]
    revealed = user_client.get(url("node_detail", document), HTTP_X_TREE_REVEAL="1", **HTMX).content.decode()
    assert 'id="tree-roots" hx-swap-oob="true"' in revealed
    assert re.search(rf'id="item-{document.parent.pk}">\s*<details class="tree-folder" open>', revealed)
    assert re.search(rf'id="link-{document.pk}"[^>]*aria-current="location"', revealed)
    assert revealed.count("hx-swap-oob") == 1  # the tree's list alone, not its links


def test_a_deep_link_past_the_first_page_opens_the_page_holding_the_node(user_client, settings):
    settings.MEMSITE_CHILDREN_PAGE_SIZE = 2
    folder = NodeFactory()
    documents = [DocumentFactory(parent=folder) for _ in range(4)]
    html = user_client.get(url("node_detail", documents[3])).content.decode()
    assert f'id="item-{documents[3].pk}"' in html and f'id="item-{documents[0].pk}"' not in html


def test_a_write_swaps_nothing_into_a_tree_that_does_not_show_its_folder(user_client):
    folder = NodeFactory()
    response = user_client.post(url("node_create", folder), {"type": "folder", "name": "x"}, **HTMX)
    assert response.status_code == 200 and "hx-swap-oob" not in response.content.decode()
    document = DocumentFactory(parent=folder)
    response = user_client.post(url("node_delete", document), {"shown": [folder.pk]}, **HTMX)
    html = response.content.decode()
    assert 'hx-swap-oob="delete"' not in html  # the item was not shown; the count is
    assert f'id="count-{folder.pk}" title="children" hx-swap-oob="true">1<' in html


def test_a_move_into_a_folder_showing_its_first_page_refills_that_page(user_client, settings):
    settings.MEMSITE_CHILDREN_PAGE_SIZE = 2
    source, target = NodeFactory(), NodeFactory()
    first = [DocumentFactory(parent=target) for _ in range(2)]
    DocumentFactory(parent=target)
    document = DocumentFactory(parent=source)
    shown = " ".join([source.pk, target.pk, document.pk, *(node.pk for node in first)])
    data = {"parent": target.pk, "shown": shown, "paged": target.pk}
    html = user_client.post(url("node_move", document), data, **HTMX).content.decode()
    assert f"beforeend:#children-{target.pk}" not in html
    refill = re.search(rf'<ul class="tree" id="children-{target.pk}" hx-swap-oob="true">(.*?)</ul>', html, re.S)
    assert refill and re.findall(r'<li class="tree-item" id="item-([^"]+)"', refill.group(1)) == [n.pk for n in first]
    assert "Load more" in refill.group(1) and f'<li id="item-{document.pk}" hx-swap-oob="delete">' in html


def test_a_delete_removes_the_shown_item(user_client):
    folder = NodeFactory()
    document = DocumentFactory(parent=folder)
    shown = f"{folder.pk} {document.pk}"  # as the page sends them: one field
    response = user_client.post(url("node_delete", document), {"shown": shown}, **HTMX)
    assert f'<li id="item-{document.pk}" hx-swap-oob="delete"></li>' in response.content.decode()


# -- history ----------------------------------------------------------------------------------------


def test_the_history_lists_who_did_what_newest_first(user_client, user, api):
    document = DocumentFactory(by=acting(user))
    services.node_update(node=document, description="Changed.", by=acting(user))
    key = token_for(user)
    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert api.put(f"/api/nodes/{document.pk}/content/", b"# by token", content_type="text/markdown").status_code == 200
    html = user_client.get(url("node_history", document), **HTMX).content.decode()
    rows = re.findall(
        r"<tr>\s*<td><time[^>]*>[^<]+</time></td>\s*<td>(.*?)</td>\s*<td[^>]*>(.*?)</td>\s*<td[^>]*>(.*?)</td>",
        html,
        re.S,
    )
    assert [(" ".join(re.sub(r"<[^>]+>", " ", who).split()), what, version) for who, what, version in rows] == [
        (f"{user.username} with the token 'test token'", "content written", "2 → 3"),
        (user.username, "updated", "1 → 2"),
        (user.username, "created", "– → 1"),
    ]


def test_the_history_pages_go_back_in_time(user_client, user, monkeypatch):
    monkeypatch.setattr("memory.views_curation.HISTORY_PAGE", 2)
    document = DocumentFactory(by=acting(user))
    for number in range(3):
        services.node_update(node=document, description=f"v{number}", by=acting(user))
    html = user_client.get(url("node_history", document), **HTMX).content.decode()
    assert html.count("<time") == 2 and ">3 → 4<" in html
    older = re.search(r'href="([^"]+\?before=\d+)"', html).group(1)
    html = user_client.get(older, **HTMX).content.decode()
    assert ">1 → 2<" in html and "– → 1" in html and "Newest" in html and "?before=" not in html
    assert user_client.get(url("node_history", document, "?before=x1"), **HTMX).status_code == 400


def test_a_deleted_nodes_history_has_a_page(user_client, user):
    document = DocumentFactory(by=acting(user), name="gone.md")
    node_id = document.pk
    services.node_delete(node=document, by=acting(user))
    html = user_client.get(reverse("memory:node_history", args=[node_id])).content.decode()
    assert "History of a deleted node" in html and ">deleted<" in html and ">created<" in html
    response = user_client.get(reverse("memory:node_history", args=["memory_never"]))
    assert response.status_code == 404


def test_a_large_open_tree_is_one_field(user_client):
    folder = NodeFactory()
    ids = [f"memory_{number:032x}" for number in range(3000)]  # far past Django's 1,000 fields
    response = user_client.post(
        url("node_create", folder), {"type": "folder", "name": "x", "shown": " ".join([*ids, folder.pk])}, **HTMX
    )
    assert response.status_code == 200 and f'hx-swap-oob="beforeend:#children-{folder.pk}"' in response.content.decode()
