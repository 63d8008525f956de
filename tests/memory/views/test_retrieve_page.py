"""The memory page's search box (GET /memory/find/), the node panel opened at a passage, and the
candidates a search step saw in the trace."""

import io
import re

import pytest
from django.urls import reverse

from memory import selectors, services
from memsite.llm.models import LLMCall
from memsite.spaces import services as space_services
from tests.archives import tar_gz
from tests.factories import DocumentFactory, NodeFactory, ProjectFactory, SearchFactory, SearchStepFactory, acting
from tests.memory.views.conftest import HTMX
from tests.memory.views.test_detail import has_live_script

pytestmark = pytest.mark.django_db

SCRIPT = "<script>alert('x')</script>"
ESCAPED = "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;"
LOGS = "Bo: good morning.\n\nAna: I moved to Lisbon last spring for the new job.\n\nBo: nice."


@pytest.fixture(autouse=True)
def full_text_only(settings):
    settings.MEMSITE_EMBEDDINGS = "off"


def find(client, query: str, **extra):
    return client.get(reverse("memory:find"), {"q": query}, **extra)


def links(html: str) -> list[str]:
    return re.findall(r'class="find-link" href="([^"]+)"', html)


def detail_url(node, at: str = "") -> str:
    url = reverse("memory:node_detail", args=[node.pk])
    return f"{url}?at={at}" if at else url


# -- the search box ----------------------------------------------------------------------------


def test_find_needs_a_login(client):
    response = find(client, "pelican")
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


def test_the_memory_page_has_the_search_box_with_a_hint(user_client):
    html = user_client.get(reverse("memory:browser")).content.decode()
    assert f'hx-get="{reverse("memory:find")}"' in html and 'name="q"' in html
    assert 'class="find-hint' in html


def test_find_lists_the_nodes_holding_the_word_and_no_others(user_client):
    folder = NodeFactory(name="logs", description="Sessions")
    session = DocumentFactory(parent=folder, name="session-3", description="Session 3", content=LOGS.encode())
    other = DocumentFactory(parent=folder, name="session-4", content=b"Bo: we talked of boats.")
    response = find(user_client, "Lisbon", **HTMX)
    assert response.status_code == 200
    html = response.content.decode()
    assert links(html) and all(url.startswith(detail_url(session)) for url in links(html))
    assert detail_url(other) not in html
    assert "/swarmstar/logs/session-3" in html and "<mark>Lisbon</mark>" in html
    assert "<html" not in html  # htmx gets the results alone


def test_the_query_s_embedding_is_charged_to_the_user_in_the_space_they_act_in(
    user_client, user, settings, openai_gateway, monkeypatch
):
    settings.MEMSITE_EMBEDDINGS = "server"
    monkeypatch.setattr("memory.index.retrieve.query_cache", {})
    other = space_services.space_create(user=user, slug="other", name="Other")

    assert find(user_client, "greyhound", HTTP_X_MEMSITE_SPACE="other", **HTMX).status_code == 200

    [call] = LLMCall.objects.filter(purpose="embed")
    assert (call.space_id, call.user_id) == (other.pk, user.pk)


def test_the_scores_of_each_ranking_are_shown(user_client):
    DocumentFactory(content=LOGS.encode())
    html = find(user_client, "Lisbon", **HTMX).content.decode()
    scores = re.search(r'class="find-scores[^>]*>\s*(.*?)\s*</div>', html, re.S)[1]
    assert re.fullmatch(r"score [\d.]+ · full text [\d.]+ · vector —", scores), scores


def test_a_content_hit_links_to_its_offsets_and_a_label_hit_to_the_node(user_client):
    document = DocumentFactory(name="session.md", description="A session", content=LOGS.encode())
    folder = NodeFactory(name="travel", description="Notes on Lisbon trips")
    urls = links(find(user_client, "Lisbon", **HTMX).content.decode())
    at = next(url for url in urls if url.startswith(detail_url(document)))
    start, end = map(int, re.fullmatch(r".*\?at=(\d+)-(\d+)#passage", at).groups())
    assert "Ana: I moved to Lisbon" in LOGS[start:end]
    assert detail_url(folder) in urls  # its name and description matched: no offsets


def test_find_escapes_the_text_and_marks_only_the_words(user_client):
    DocumentFactory(name="<b>bold.md", content=f"pelican {SCRIPT} pelicans".encode())
    html = find(user_client, "<i>pelican</i>", **HTMX).content.decode()
    assert ESCAPED in html and "&lt;b&gt;bold.md" in html
    assert not has_live_script(html)
    assert "<mark>pelican</mark>" in html and "<mark>pelicans</mark>" in html
    # The whole page (not htmx's partial) echoes the query in the search box.
    page = find(user_client, "<i>pelican</i>").content.decode()
    assert 'value="&lt;i&gt;pelican&lt;/i&gt;"' in page and ESCAPED in page
    assert "<i>" not in page and "<b>" not in page


def test_an_empty_query_shows_the_hint_and_no_results(user_client):
    DocumentFactory(content=LOGS.encode())
    html = find(user_client, "   ", **HTMX).content.decode()
    assert 'class="find-hint' in html and "find-hit" not in html


def test_a_query_over_2000_characters_is_refused_with_a_message(user_client):
    response = find(user_client, "a" * 2_001, **HTMX)
    assert response.status_code == 400
    assert "2001 characters, over the limit of 2,000. Shorten it." in response.content.decode()
    assert find(user_client, "a" * 2_000, **HTMX).status_code == 200


def test_without_htmx_the_memory_page_shows_the_results_and_the_query(user_client):
    document = DocumentFactory(content=LOGS.encode())
    html = find(user_client, "Lisbon").content.decode()
    assert 'id="tree-roots"' in html and 'value="Lisbon"' in html
    assert links(html)[0].startswith(detail_url(document))


# -- the node panel at a passage ---------------------------------------------------------------


def test_a_markdown_node_shows_the_matched_passage_in_a_box(user_client):
    document = DocumentFactory(content=f"{LOGS}\n\n{SCRIPT}".encode())
    start = LOGS.index("Ana:")
    end = LOGS.index("\n\nBo: nice")
    html = user_client.get(detail_url(document, f"{start}-{end}"), **HTMX).content.decode()
    box = re.search(r'<section class="passage-box" id="passage".*?</section>', html, re.S)[0]
    assert f"characters {start}–{end}" in box
    assert '<pre class="passage-text">Ana: I moved to Lisbon last spring for the new job.</pre>' in box
    assert not has_live_script(html)


def test_a_text_file_marks_the_passage_in_place(user_client, user):
    project = ProjectFactory()
    text = f"line one\n{SCRIPT}\nthe Lisbon line\nlast line\n"
    services.project_import(project=project, archive=io.BytesIO(tar_gz({"notes.txt": text.encode()})), by=acting(user))
    node = next(node for node in selectors.project_files(project=project) if node.name == "notes.txt")
    start, end = text.index("the Lisbon"), text.index("\nlast")
    html = user_client.get(detail_url(node, f"{start}-{end}"), **HTMX).content.decode()
    assert f'{ESCAPED}\n<mark class="passage-mark" id="passage">the Lisbon line</mark>\nlast line' in html
    assert 'class="passage-box"' not in html and not has_live_script(html)


def test_a_passage_past_the_preview_is_read_from_the_content(user_client, settings, monkeypatch):
    monkeypatch.setattr("memory.rendering.PREVIEW_LIMIT_BYTES", 20)
    document = DocumentFactory(content=LOGS.encode())
    start, end = LOGS.index("Ana:"), LOGS.index("\n\nBo: nice")
    html = user_client.get(detail_url(document, f"{start}-{end}"), **HTMX).content.decode()
    assert "The preview shows the start of the content only." in html
    assert "Ana: I moved to Lisbon last spring for the new job.</pre>" in html


def test_a_link_past_the_preview_to_no_passage_shows_none(user_client, monkeypatch):
    monkeypatch.setattr("memory.rendering.PREVIEW_LIMIT_BYTES", 20)
    document = DocumentFactory(content=LOGS.encode())
    start = LOGS.index("Ana:")
    html = user_client.get(detail_url(document, f"{start}-{start + 10}"), **HTMX).content.decode()
    assert "The preview shows the start of the content only." in html
    assert 'id="passage"' not in html


@pytest.mark.parametrize("at", ["", "5", "5-5", "9-3", "0-100000", "0-9999999999", "-1-4", "a-b", "1-2-3"])
def test_a_missing_or_bad_passage_shows_the_node_without_one(user_client, at):
    document = DocumentFactory(content=LOGS.encode())
    response = user_client.get(detail_url(document, at), **HTMX)
    assert response.status_code == 200
    assert 'id="passage"' not in response.content.decode()


# -- the candidates in the trace ---------------------------------------------------------------


def test_the_trace_shows_the_candidates_a_step_saw_with_their_scores(user_client):
    folder = NodeFactory(name="logs")
    search = SearchFactory()
    candidates = [
        {"node": folder.pk, "name": "logs", "score": 0.0325, "snippet": f"Ana moved to Lisbon {SCRIPT}"},
        {"node": "memory_gone", "name": "old notes", "score": 0.0161, "snippet": "boats"},
        "not an entry",
        {"node": "../../admin", "name": "odd", "score": "high", "snippet": ""},
    ]
    SearchStepFactory(search=search, kind="route", node=folder, detail={"candidates": candidates, "choice": 1})
    SearchStepFactory(search=search, kind="read", node=folder, detail={"choice": 2})
    html = user_client.get(reverse("memory:search_detail", args=[search.pk])).content.decode()
    first, second = html.split('id="step-2"')
    table = re.search(r'<table class="candidates">.*?</table>', first, re.S)[0]
    rows = re.findall(r"<tr>(.*?)</tr>", table, re.S)[1:]
    assert len(rows) == 3 and "3 candidates" in first
    assert f'<a href="{detail_url(folder)}">logs</a>' in rows[0] and "0.0325" in rows[0]
    assert f"Ana moved to Lisbon {ESCAPED}" in rows[0] and not has_live_script(table)
    assert "old notes" in rows[1] and "0.0161" in rows[1]
    assert "odd" in rows[2] and "—" in rows[2] and "<a " not in rows[2]  # no link, no score
    assert "&quot;choice&quot;: 1" in first and "&quot;candidates&quot;" not in first  # the raw detail keeps the rest
    assert "candidates" not in second.split("</li>")[0].lower()
