import io
from html.parser import HTMLParser

import pytest
from django.urls import reverse

from memory import selectors, services
from tests.archives import tar_gz
from tests.factories import DocumentFactory, NodeFactory, ProjectFactory, acting
from tests.memory.views.conftest import HTMX

pytestmark = pytest.mark.django_db

XSS = '<script>alert("x")</script><img src=x onerror=alert(1)>'
NAME_XSS = '<img src=x onerror=alert(1)><b onmouseover="alert(2)">'  # names may not hold '/'


class _ScriptFinder(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "iframe", "object", "embed"):
            self.found.append(tag)
        for name, value in attrs:
            if name.startswith("on") or (value or "").strip().lower().startswith("javascript:"):
                self.found.append(f"{tag}[{name}]")


def has_live_script(html: str) -> bool:
    """Whether the page holds a script-like tag, an event handler attribute or a javascript: URL
    (the page's own scripts live in base.html, outside the partials tested here)."""
    finder = _ScriptFinder()
    finder.feed(html)
    return bool(finder.found)


def detail(client, node, **extra):
    return client.get(reverse("memory:node_detail", args=[node.pk]), **extra)


def test_the_detail_partial_shows_the_node(user_client, internal):
    folder = NodeFactory(name="reports", description="Weekly reports of the swarm.")
    document = DocumentFactory(parent=folder, name="week-1.md", description="The first week.")
    response = detail(user_client, document, **HTMX)
    assert response.status_code == 200
    html = response.content.decode()
    assert "<html" not in html
    assert "week-1.md" in html and "The first week." in html and "document" in html
    assert f"{len(b'# week-1.md' + chr(10).encode() * 2 + b'Some notes.')} bytes" in html
    assert "<h1>week-1.md</h1>" in html  # the markdown is rendered
    # breadcrumbs: the root, the folder, then the node itself
    assert html.index(">swarmstar<") < html.index(">reports<") < html.index('aria-current="page">week-1.md')


def test_the_detail_page_without_htmx_is_a_whole_page(user_client, internal):
    response = detail(user_client, internal["user"])
    html = response.content.decode()
    assert response.status_code == 200
    assert "<html" in html and 'id="tree-roots"' in html and 'data-node-id="' + internal["user"].pk in html


def test_the_detail_panel_escapes_stored_xss(user_client):
    folder = NodeFactory(name=f"evil {NAME_XSS}", description=f"about {XSS}")
    document = DocumentFactory(parent=folder, name=NAME_XSS, description=XSS, content=XSS.encode())
    for node in (folder, document):
        for extra in (HTMX, {}):
            html = detail(user_client, node, **extra).content.decode()
            if not extra:
                html = html.split("<body", 1)[1]  # htmx's own script tags are in the head
            assert not has_live_script(html)
            assert "&lt;img src=x onerror=alert(1)&gt;" in html
            assert "&lt;script&gt;" in html
    html = detail(user_client, document, **HTMX).content.decode()
    assert "<img" not in html  # the content's image is dropped along with its handler
    children = user_client.get(reverse("memory:node_children", args=[folder.pk]), **HTMX).content.decode()
    assert not has_live_script(children) and "&lt;img src=x onerror=alert(1)&gt;" in children


def test_markdown_is_sanitized(user_client):
    markdown = (
        "# Title\n\n<script>alert(1)</script>\n\n<img src=x onerror=alert(1)>\n\n"
        '[click](javascript:alert(1)) and <a href="https://example.com" onclick="steal()">ok</a>\n\n'
        '<iframe src="https://evil.example"></iframe>\n\n**bold**\n'
    )
    document = DocumentFactory(content=markdown.encode())
    html = detail(user_client, document, **HTMX).content.decode()
    assert "<h1>Title</h1>" in html and "<strong>bold</strong>" in html
    assert not has_live_script(html) and "<script" not in html
    assert "javascript:" not in html and "<iframe" not in html
    assert 'href="https://example.com"' in html


@pytest.mark.parametrize(
    "content",
    [
        '<img src="https://evil.example/x.png">',
        "![x](https://evil.example/x.png)",
        '<p><img src="https://evil.example/x.png" alt="x"></p>',
    ],
)
def test_markdown_loads_no_images_from_other_servers(user_client, content):
    document = DocumentFactory(content=f"# Report\n\n{content}\n".encode())
    html = detail(user_client, document, **HTMX).content.decode()
    assert "<h1>Report</h1>" in html
    assert "<img" not in html and "evil.example" not in html


def test_project_files_show_as_escaped_text_and_binary_as_a_size(user_client, user):
    project = ProjectFactory()
    services.project_import(
        project=project,
        archive=io.BytesIO(tar_gz({"page.html": XSS.encode(), "blob.bin": bytes(range(256))})),
        by=acting(user),
    )
    nodes = {node.name: node for node in selectors.project_files(project=project)}
    html = detail(user_client, nodes["page.html"], **HTMX).content.decode()
    assert not has_live_script(html) and "&lt;script&gt;" in html
    html = detail(user_client, nodes["blob.bin"], **HTMX).content.decode()
    assert "binary, 256 bytes" in html
    assert "file_path" in html and "blob.bin" in html


def test_internal_folders_hide_the_edit_controls_from_users(user_client, internal):
    html = detail(user_client, internal["user"], **HTMX).content.decode()
    assert reverse("memory:node_update", args=[internal["user"].pk]) not in html
    assert reverse("memory:node_delete", args=[internal["user"].pk]) not in html
    assert reverse("memory:node_create", args=[internal["user"].pk]) in html


def test_staff_may_edit_the_description_of_internal_folders_only(staff_client, internal):
    html = detail(staff_client, internal["user"], **HTMX).content.decode()
    assert reverse("memory:node_update", args=[internal["user"].pk]) in html
    form = html.split(f'action="{reverse("memory:node_update", args=[internal["user"].pk])}"')[1].split("</form>")[0]
    assert 'name="description"' in form and 'name="name"' not in form
    assert reverse("memory:node_delete", args=[internal["user"].pk]) not in html


def test_ordinary_folders_show_all_controls(user_client):
    folder = NodeFactory()
    html = detail(user_client, folder, **HTMX).content.decode()
    for name in ("node_update", "node_delete", "node_create"):
        assert reverse(f"memory:{name}", args=[folder.pk]) in html
