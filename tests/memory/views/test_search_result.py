"""What the trace of a search shows of its end: the answers, rendered and sanitized, with the
paths of the nodes they cite; how long it took; whose answer it is; the question it waits on;
and the folder picker of the form that starts one."""

import re
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from memory import services
from memory.models import Search, SearchQuestion
from tests.factories import DocumentFactory, NodeFactory, SearchFactory, acting, system
from tests.llm.factories import make_call
from tests.memory.views.conftest import HTMX

pytestmark = pytest.mark.django_db

HEURISTIC = 'class="badge badge-heuristic"'
USERS = 'class="badge badge-user-answer"'


def trace(client, search: Search) -> str:
    response = client.get(reverse("memory:search_detail", args=[search.pk]))
    assert response.status_code == 200
    return response.content.decode()


def result_section(html: str) -> str:
    return re.search(r'<section class="result" id="result">.*?</section>', html, re.DOTALL).group(0)


def ended(answers: list[dict], **fields) -> Search:
    result = {"answers": answers, "nodes": [], "open_questions": [], "ended_because": "answered"}
    return SearchFactory(status=Search.Status.DONE, ended_because="answered", result=result, **fields)


def answer(text: str, node_ids: list[str] = (), question: str = "Where?") -> dict:
    return {"question": question, "answer": text, "node_ids": list(node_ids), "complete": True}


# -- citations ---------------------------------------------------------------------------------


def test_citations_show_the_paths_of_the_nodes_linked_and_a_deleted_one_as_such(user_client, internal):
    folder = NodeFactory(parent=internal["references"], name="ops")
    notes = DocumentFactory(parent=folder, name="deploy.md")
    gone = DocumentFactory(parent=folder, name="old.md")
    search = ended([answer("In the notes.", [notes.pk, gone.pk])])
    services.node_delete(node=gone, by=system())

    cited = re.search(r'<p class="muted cited">(.*?)</p>', trace(user_client, search), re.DOTALL).group(1)

    assert f'<a href="/memory/{notes.pk}/">/references/ops/deploy.md</a>' in cited
    assert f"<code>{gone.pk}</code> (deleted)" in cited and f'href="/memory/{gone.pk}/"' not in cited
    assert f"<code>{notes.pk}</code>" not in cited


def test_the_paths_of_the_citations_are_read_in_a_bounded_number_of_queries(user_client, internal):
    def queries_for(citations: int) -> int:
        folder = NodeFactory(parent=internal["references"])
        nodes = [DocumentFactory(parent=NodeFactory(parent=folder)).pk for _ in range(citations)]
        search = ended([answer("One.", nodes[: citations // 2]), answer("Two.", nodes[citations // 2 :])])
        with CaptureQueriesContext(connection) as queries:
            html = trace(user_client, search)
        assert html.count(f'<a href="/memory/{nodes[-1]}/">/references/') == 1
        return len(queries)

    assert queries_for(2) == queries_for(12)


# -- the answer's markdown ---------------------------------------------------------------------


def test_the_answer_is_markdown_rendered_and_sanitized(user_client):
    text = "The **deploy** notes:\n\n- `make deploy`\n\n<script>alert(1)</script>\n\nSee [click](javascript:alert(2))."
    search = ended([answer(text), {"question": "Who?", "answer": "", "node_ids": [], "complete": False}])

    result = result_section(trace(user_client, search))

    answered, unanswered = result.split('<div class="answer')[1:]
    assert '<div class="markdown answer-text">' in answered
    assert "<strong>deploy</strong>" in answered and "<li><code>make deploy</code></li>" in answered
    assert "<script" not in result and "alert(1)" not in result and "javascript:" not in result
    assert re.search(r'<a rel="noopener noreferrer nofollow">click</a>', answered)  # the text stays, not the link
    assert "No answer found." in unanswered and "(incomplete)" in unanswered and "markdown" not in unanswered


# -- how long it took --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("started", "elapsed", "text"),
    [
        (True, timedelta(seconds=1.4), "1.4 s"),
        (True, timedelta(minutes=2, seconds=5), "2 min 5 s"),
        (False, timedelta(seconds=42), "42 s"),
    ],
)
def test_the_time_a_search_took_reads_as_a_real_duration(user_client, started, elapsed, text):
    search = ended([answer("Here.")])
    began = search.created_at
    Search.objects.filter(pk=search.pk).update(started_at=began if started else None, finished_at=began + elapsed)

    html = trace(user_client, search)

    assert f'(took <span id="took">{text}</span>)' in html and "minutes" not in html
    Search.objects.filter(pk=search.pk).update(status=Search.Status.RUNNING, finished_at=None)
    assert 'id="took"' not in trace(user_client, search)  # not ended: nothing took that long yet


# -- whose answer ------------------------------------------------------------------------------


def asked_and_answered(user, reply: str, *, answered_first: bool = False) -> Search:
    """A search the offline heuristics walked, which asked the user and got `reply`; with
    `answered_first`, its first question had been answered by the walk before."""
    search = SearchFactory(questions=["Which port?", "Who deploys?"], status=Search.Status.WAITING)
    if answered_first:
        state = search.state
        state["answers"][0].update(answer="Port 8443, says the notes.", complete=True)
        Search.objects.filter(pk=search.pk).update(state=state)
    make_call(served=search, provider="offline", model="offline")
    questions = search.state["answers"][1 if answered_first else 0 :]
    question = SearchQuestion.objects.create(search=search, questions=[entry["question"] for entry in questions])
    services.search_question_answer(question=question, answer=reply, by=acting(user))
    return Search.objects.get(pk=search.pk)


def test_the_users_own_answer_is_marked_as_theirs_not_as_heuristic(user_client, user, internal):
    search = asked_and_answered(user, "Port **8443**.")

    result = result_section(trace(user_client, search))

    assert HEURISTIC not in result
    assert result.count(USERS) == 2 and ">user's answer</span>" in result  # both questions got it
    assert f"given by {user.get_username()}" in result
    assert "<strong>8443</strong>" in result


def test_with_an_answer_of_the_heuristics_beside_it_only_the_users_is_marked_theirs(user_client, user, internal):
    search = asked_and_answered(user, "Alice deploys.", answered_first=True)

    result = result_section(trace(user_client, search))

    heading = result[: result.index("</h2>")]
    assert HEURISTIC in heading and result.count(USERS) == 1
    walks, users = result.split('<div class="answer')[1:]
    assert "Which port?" in walks and USERS not in walks and "Port 8443, says the notes." in walks
    assert "Who deploys?" in users and USERS in users and "Alice deploys." in users


# -- the question the search waits on ----------------------------------------------------------


@pytest.fixture
def waiting() -> SearchQuestion:
    search = SearchFactory(questions=["Which <b>port</b>?"], status=Search.Status.WAITING)
    return SearchQuestion.objects.create(search=search, questions=search.questions)


def test_a_search_waiting_for_the_user_puts_its_question_to_them_with_a_form(user_client, waiting):
    html = trace(user_client, waiting.search)

    section = re.search(r'<section class="search-question" id="search-question".*?</section>', html, re.DOTALL).group(0)
    assert "A question for you" in section and "<li>Which &lt;b&gt;port&lt;/b&gt;?</li>" in section
    assert f'action="{reverse("memory:question_answer", args=[waiting.pk])}"' in section
    assert '<input type="hidden" name="back_to" value="search">' in section
    assert 'hx-preserve="true"' in section  # the polls of the trace leave what is typed alone
    assert "alert-error" not in html
    SearchQuestion.objects.filter(pk=waiting.pk).update(status=SearchQuestion.Status.CLOSED)
    assert 'id="search-question"' not in trace(user_client, waiting.search)  # no longer put


def test_the_question_answered_on_the_trace_leads_back_to_it(user_client, waiting, internal):
    url = reverse("memory:question_answer", args=[waiting.pk])

    response = user_client.post(url, {"answer": "Port 8443.", "back_to": "search"})

    assert response.status_code == 302
    assert response["Location"] == reverse("memory:search_detail", args=[waiting.search_id])
    html = user_client.get(response["Location"]).content.decode()
    assert "Answered; search" in html and 'id="search-question"' not in html and "Port 8443." in html


def test_an_answer_leading_back_to_somewhere_unknown_is_refused(user_client, waiting, internal):
    url = reverse("memory:question_answer", args=[waiting.pk])
    response = user_client.post(url, {"answer": "Port 8443.", "back_to": "https://elsewhere.example"})
    assert response.status_code == 400 and "Select a valid choice" in response.content.decode()
    waiting.refresh_from_db()
    assert waiting.status == SearchQuestion.Status.PENDING


# -- the start form's folder picker ------------------------------------------------------------


def folder_paths(html: str) -> list[str]:
    return re.findall(r'<span class="folder-path">(.*?)</span>', html)


def test_the_start_form_picks_its_folder_from_the_top_folders(user_client, internal):
    html = user_client.get(reverse("memory:search_list")).content.decode()

    assert f'hx-get="{reverse("memory:search_start_folders")}" hx-target="#start-choices"' in html
    assert folder_paths(html) == ["/swarmstar", "/user", "/projects", "/references"]
    assert html.count('type="radio" name="start_node"') == 5
    assert '<input type="radio" name="start_node" value="" checked>' in html  # the top of the tree
    assert 'type="text" name="start_node"' not in html


def test_the_start_picker_finds_folders_by_name(user_client, internal):
    ops = NodeFactory(parent=internal["references"], name="Ops notes")
    DocumentFactory(parent=ops, name="ops.md")  # not a folder

    response = user_client.get(reverse("memory:search_start_folders"), {"q": "ops"}, **HTMX)

    html = response.content.decode()
    assert response.status_code == 200 and "<html" not in html
    assert folder_paths(html) == ["/references/Ops notes"]
    assert f'<input type="radio" name="start_node" value="{ops.pk}">' in html


@pytest.mark.parametrize("by", ["path", "id"])
def test_a_pasted_path_or_id_finds_its_folder_chosen_already(user_client, internal, by):
    ops = NodeFactory(parent=internal["references"], name="ops")
    NodeFactory(parent=internal["swarmstar"], name="ops")  # of the same name, elsewhere
    query = "/references/ops" if by == "path" else ops.pk

    html = user_client.get(reverse("memory:search_start_folders"), {"q": f" {query} "}, **HTMX).content.decode()

    assert folder_paths(html) == ["/references/ops"]
    assert f'<input type="radio" name="start_node" value="{ops.pk}" checked>' in html


def test_the_start_picker_without_htmx_is_the_list_page_with_the_folders_found(user_client, internal):
    ops = NodeFactory(parent=internal["references"], name="ops")
    html = user_client.get(reverse("memory:search_start_folders"), {"q": "/references/ops"}).content.decode()
    assert "<html" in html and folder_paths(html) == ["/references/ops"]
    assert f'value="{ops.pk}" checked>' in html and 'name="start_node" value="" checked' not in html


def test_a_too_long_find_is_refused(user_client):
    response = user_client.get(reverse("memory:search_start_folders"), {"q": "x" * 256}, **HTMX)
    assert response.status_code == 400 and "at most 255 characters" in response.content.decode()


def test_a_start_refused_keeps_the_folder_chosen(user_client, internal):
    ops = NodeFactory(parent=internal["references"], name="ops")
    data = {"questions": "", "output": "answer", "fallback": "none", "start_node": ops.pk}

    response = user_client.post(reverse("memory:search_start"), data)

    html = response.content.decode()
    assert response.status_code == 400 and f'value="{ops.pk}" checked>' in html
    assert not Search.objects.exists()
