import re
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from memory import selectors
from memory.models import Node, Search, SearchQuestion
from memsite.llm.models import LLMCall
from tests.factories import NodeFactory, SearchFactory, SearchStepFactory, default_space
from tests.llm.factories import make_call
from tests.memory.views.conftest import HTMX

pytestmark = pytest.mark.django_db

SCRIPT = "<script>alert('x')</script>"
ESCAPED = "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;"
POLLING = 'hx-trigger="every 1s"'


def trace_url(search: Search, after: int | None = None) -> str:
    path = reverse("memory:search_detail", args=[search.pk])
    return path if after is None else f"{path}?after={after}"


def step_numbers(html: str) -> list[int]:
    return [int(number) for number in re.findall(r'id="step-(\d+)"', html)]


def call_url(search: Search, number: int) -> str:
    return reverse("memory:search_step_call", args=[search.pk, number])


def call_text_columns(sql: str) -> list[str]:
    """The LLM call columns that hold what it was shown and replied, as `sql` selects them."""
    table = LLMCall._meta.db_table
    return [column for column in ("messages", "reply", "error") if f'"{table}"."{column}"' in sql]


# -- access ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "method, name, args",
    [
        ("get", "memory:search_list", []),
        ("post", "memory:search_start", []),
        ("get", "memory:search_detail", [1]),
        ("get", "memory:search_step_call", [1, 1]),
        ("post", "memory:search_cancel", [1]),
        ("get", "memory:question_list", []),
        ("post", "memory:question_answer", [1]),
    ],
)
def test_pages_need_a_login(client, method, name, args):
    search = SearchFactory(pk=1, status=Search.Status.WAITING)
    SearchQuestion.objects.create(pk=1, search=search, questions=search.questions)
    response = getattr(client, method)(reverse(name, args=args), {"questions": "Where?", "answer": "Here."})
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
    assert Search.objects.count() == 1 and Search.objects.get().status == Search.Status.WAITING


def test_writes_need_post(user_client):
    search = SearchFactory()
    assert user_client.get(reverse("memory:search_start")).status_code == 405
    assert user_client.get(reverse("memory:search_cancel", args=[search.pk])).status_code == 405


def test_the_nav_links_to_searches_and_questions(user_client):
    html = user_client.get(reverse("memory:search_list")).content.decode()
    assert f'<a href="{reverse("memory:search_list")}" aria-current="page">Searches</a>' in html
    assert re.search(rf'<a href="{reverse("memory:question_list")}"\s*>Questions</a>', html)


# -- the list and the start form ---------------------------------------------------------------


def test_the_list_shows_root_searches_newest_first_with_their_spend(user_client):
    older = SearchFactory(
        questions=["How old is the cluster?"],
        status=Search.Status.DONE,
        llm_calls=4,
        prompt_tokens=900,
        completion_tokens=100,
        cost_usd=Decimal("0.0123"),
    )
    newer = SearchFactory(questions=[f"Is {SCRIPT} safe?"])
    child = SearchFactory(parent=older, depth=1, questions=["A sub-question"])

    response = user_client.get(reverse("memory:search_list"))

    assert response.status_code == 200
    html = response.content.decode()
    assert html.index(f'id="search-{newer.pk}"') < html.index(f'id="search-{older.pk}"')
    assert f'id="search-{child.pk}"' not in html
    row = html[html.index(f'id="search-{older.pk}"') :]
    row = row[: row.index("</tr>")]
    assert "done" in row and "<td>4</td>" in row and "<td>1000</td>" in row and "0.0123" in row
    assert SCRIPT not in html and ESCAPED in html


def test_start_a_search_from_the_form(user_client, user, internal, monkeypatch, django_capture_on_commit_callbacks):
    queued = []
    monkeypatch.setattr("memory.tasks.search_run.delay", lambda **kwargs: queued.append(kwargs))
    folder = NodeFactory(parent=internal["references"], name="ops")
    data = {
        "questions": "Where are the deployment notes?\n\n  Who deploys?  \n",
        "context": "Preparing a release.",
        "start_node": folder.pk,
        "output": "node",
        "fallback": "ask_user",
    }
    with django_capture_on_commit_callbacks(execute=True):
        response = user_client.post(reverse("memory:search_start"), data)

    search = Search.objects.get()
    assert response.status_code == 302 and response["Location"] == trace_url(search)
    assert search.questions == ["Where are the deployment notes?", "Who deploys?"]
    assert (search.start_node, search.output, search.fallback, search.created_by) == (folder, "node", "ask_user", user)
    assert queued == [{"search_id": search.pk}]
    assert f"Search {search.pk} started." in user_client.get(response["Location"]).content.decode()


@pytest.mark.parametrize(
    "data, status, message",
    [
        ({"questions": "", "output": "answer", "fallback": "none"}, 400, "Questions: This field is required."),
        ({"questions": " \n \n", "output": "answer", "fallback": "none"}, 400, "Questions: This field is required."),
        (
            {"questions": "\n".join(f"q{n}" for n in range(21)), "output": "answer", "fallback": "none"},
            400,
            "questions must be a list of 1 to 20 strings.",
        ),
        ({"questions": "Where?", "output": "both", "fallback": "none"}, 400, "Select a valid choice"),
        (
            {"questions": "Where?", "output": "answer", "fallback": "none", "start_node": "memory_nope"},
            404,
            "No memory node",
        ),
    ],
)
def test_a_refused_start_shows_why_and_starts_nothing(user_client, internal, data, status, message):
    response = user_client.post(reverse("memory:search_start"), data)
    assert response.status_code == status
    html = response.content.decode()
    assert message in html and 'class="alert alert-error"' in html
    assert not Search.objects.exists()


def test_a_refused_start_keeps_what_was_typed_escaped(user_client):
    data = {"questions": SCRIPT, "context": SCRIPT, "output": "answer", "fallback": "none", "start_node": "memory_x"}
    html = user_client.post(reverse("memory:search_start"), data).content.decode()
    assert SCRIPT not in html and html.count(ESCAPED) == 2


# -- the trace ---------------------------------------------------------------------------------


@pytest.fixture
def running(internal) -> Search:
    """A search two levels into the tree, one folder ruled out, with two steps so far."""
    docs = NodeFactory(parent=internal["references"], name="docs")
    deploy = NodeFactory(parent=docs, name="deploy")
    css = NodeFactory(parent=internal["references"], name="css")
    search = SearchFactory(
        questions=[f"Where is {SCRIPT}?"],
        status=Search.Status.RUNNING,
        llm_calls=1,
        prompt_tokens=120,
        completion_tokens=9,
        cost_usd=Decimal("0.000027"),
    )
    search.state = {**search.state, "trail": [docs.pk, deploy.pk], "visited": [docs.pk], "unviable": [css.pk]}
    search.save()
    call = make_call(
        messages=[{"role": "system", "content": "Route."}, {"role": "user", "content": f"1. docs {SCRIPT}"}],
        reply=f'{{"choice": 1, "reason": "{SCRIPT}"}}',
        prompt_tokens=120,
        completion_tokens=9,
        latency_ms=321,
    )
    SearchStepFactory(
        search=search,
        kind="route",
        node=internal["references"],
        summary="Entered docs.",
        llm_call=call,
        detail={"choice": 1},
    )
    SearchStepFactory(search=search, kind="route", node=docs, summary=f"Entered deploy {SCRIPT}.")
    return search


def test_the_trace_page_shows_totals_path_and_steps(user_client, running):
    response = user_client.get(trace_url(running))

    assert response.status_code == 200
    html = response.content.decode()
    assert step_numbers(html) == [1, 2]
    assert html.count("<details") == 2
    # totals at the top
    assert '1 <span class="muted">of 40</span>' in html
    assert "120 prompt + 9 completion = 129" in html and "0.000027 USD" in html
    # the path: links to each node, the current one marked
    docs, deploy, css = (Node.objects.get(name=name) for name in ("docs", "deploy", "css"))
    trail = html[html.index('id="trail"') : html.index('id="trail-visited"')]
    assert f'href="/memory/{docs.pk}/">docs</a>' in trail
    assert f'aria-current="location"><a href="/memory/{deploy.pk}/">deploy</a>' in trail
    unviable = html[html.index('id="trail-unviable"') :]
    assert f'href="/memory/{css.pk}/">css</a>' in unviable[: unviable.index("</dd>")]
    # a step shows its call's tokens, latency and cost; what the LLM was shown and replied
    # comes only when the step is first opened
    assert "120 + 9 tokens · 321 ms · 0.000027 USD" in html
    assert "1. docs" not in html and "&quot;reason&quot;" not in html and "llm-message" not in html
    assert (
        f'<details hx-get="{call_url(running, 1)}" hx-trigger="toggle once" hx-target="find .step-call" '
        'hx-swap="innerHTML">'
    ) in html
    assert html.count('class="step-call"') == 1 and html.count('hx-trigger="toggle once"') == 1
    assert SCRIPT not in html
    # it polls itself while the search runs, asking for the steps after the last one shown
    assert f'hx-get="{trace_url(running, 2)}" {POLLING}' in html
    assert "Cancel search" in html


def test_the_trace_does_not_load_what_the_llm_calls_were_shown(user_client, running):
    for path, headers in ((trace_url(running), {}), (trace_url(running, 0), HTMX)):
        with CaptureQueriesContext(connection) as queries:
            assert user_client.get(path, **headers).status_code == 200
        # read before the next request, which empties the log these are a slice of
        sqls = [query["sql"] for query in queries]
        assert any('"memory_searchstep"' in sql and '"llm_llmcall"."prompt_tokens"' in sql for sql in sqls)
        assert not any(call_text_columns(sql) for sql in sqls)


def test_an_opened_step_gets_what_its_llm_call_was_shown_and_replied_escaped(user_client, running):
    LLMCall.objects.filter(pk=running.steps.get(number=1).llm_call_id).update(error=f"Timed out {SCRIPT}")

    with CaptureQueriesContext(connection) as queries:
        response = user_client.get(call_url(running, 1), **HTMX)

    assert response.status_code == 200
    html = response.content.decode()
    assert "<html" not in html and "<details" not in html and SCRIPT not in html
    assert re.search(r'llm-message-system">\s*<h5>system</h5>\s*<pre class="code">Route.</pre>', html)
    assert "1. docs " + ESCAPED in html
    assert '<pre class="code llm-reply">{&quot;choice&quot;: 1, &quot;reason&quot;: &quot;' + ESCAPED in html
    assert '<h4>Error</h4><pre class="code">Timed out ' + ESCAPED in html
    assert any(call_text_columns(query["sql"]) == ["messages", "reply", "error"] for query in queries.captured_queries)
    # the same answer without htmx: it is only ever a fragment
    assert user_client.get(call_url(running, 1)).content.decode() == html


def test_a_step_call_of_an_unknown_search_or_step_or_a_step_without_a_call_is_404(user_client, running):
    assert user_client.get(reverse("memory:search_step_call", args=[999, 1])).status_code == 404
    assert user_client.get(call_url(running, 2)).status_code == 404  # no LLM call in step 2
    assert user_client.get(call_url(running, 3)).status_code == 404
    assert user_client.get(call_url(running, 10**30)).status_code == 404
    other = SearchFactory()
    SearchStepFactory(search=other)
    assert user_client.get(call_url(other, 1)).status_code == 404  # step 1 of another search has no call


def test_a_step_call_is_read_only(user_client, running):
    assert user_client.post(call_url(running, 1)).status_code == 405


def test_a_poll_of_a_running_search_is_200_with_only_the_new_steps(user_client, running):
    SearchStepFactory(search=running, kind="read", summary="Read the notes.")

    response = user_client.get(trace_url(running, 2), **HTMX)

    assert response.status_code == 200
    html = response.content.decode()
    assert html.lstrip().startswith('<section id="trace"')
    assert step_numbers(html) == [3] and '<ol hx-swap-oob="beforeend:#steps">' in html
    assert f'hx-get="{trace_url(running, 3)}" {POLLING}' in html
    assert "<html" not in html and SCRIPT not in html


def test_a_poll_with_nothing_new_sends_no_steps(user_client, running):
    html = user_client.get(trace_url(running, 2), **HTMX).content.decode()
    assert step_numbers(html) == [] and "hx-swap-oob" not in html and POLLING in html


def test_a_poll_of_an_ended_search_is_286_and_stops_polling(user_client, running):
    SearchStepFactory(search=running, kind="finish", summary="Answered.")
    result = {
        "answers": [{"question": running.questions[0], "answer": "In deploy.md", "node_ids": [], "complete": True}],
        "nodes": [],
        "open_questions": [],
        "ended_because": "answered",
    }
    Search.objects.filter(pk=running.pk).update(status=Search.Status.DONE, ended_because="answered", result=result)

    response = user_client.get(trace_url(running, 2), **HTMX)

    assert response.status_code == 286
    html = response.content.decode()
    assert step_numbers(html) == [3]  # the last step comes with the answer that stops polling
    assert "hx-get" not in html and "hx-trigger" not in html and "Cancel search" not in html
    assert "In deploy.md" in html and "answered" in html


def test_the_page_of_an_ended_search_does_not_poll(user_client):
    search = SearchFactory(status=Search.Status.FAILED, ended_because="error: boom")
    SearchStepFactory(search=search, kind="finish")
    html = user_client.get(trace_url(search)).content.decode()
    assert "hx-trigger" not in html and "error: boom" in html


def test_sub_searches_are_linked_both_ways(user_client):
    parent = SearchFactory(status=Search.Status.RUNNING)
    child = SearchFactory(parent=parent, depth=1, status=Search.Status.RUNNING, questions=["Which port?"])
    SearchStepFactory(search=parent, kind="subsearch", summary="Sub-search.", detail={"child": child.pk})

    parent_html = user_client.get(trace_url(parent)).content.decode()
    assert parent_html.count(f'href="{trace_url(child)}"') == 2  # in the sub-search list and in the step
    assert "Which port?" in parent_html
    assert f'href="{trace_url(parent)}">search #{parent.pk}</a>' in user_client.get(trace_url(child)).content.decode()


def test_an_unknown_search_is_404(user_client):
    assert user_client.get(reverse("memory:search_detail", args=[999])).status_code == 404
    assert user_client.post(reverse("memory:search_cancel", args=[999])).status_code == 404


# -- cancelling --------------------------------------------------------------------------------


def test_cancel_with_htmx_ends_a_queued_search_and_the_next_poll_brings_the_last_step(user_client):
    search = SearchFactory()

    response = user_client.post(reverse("memory:search_cancel", args=[search.pk]), {"after": "0"}, **HTMX)

    assert response.status_code == 200
    html = response.content.decode()
    assert "Cancelled." in html and "cancelled" in html
    assert POLLING in html  # the finish step is not on the page yet
    poll = user_client.get(trace_url(search, 0), **HTMX)
    assert poll.status_code == 286 and step_numbers(poll.content.decode()) == [1]


def test_cancel_a_running_search_asks_it_to_stop(user_client, running):
    html = user_client.post(reverse("memory:search_cancel", args=[running.pk]), {"after": "2"}, **HTMX).content.decode()
    assert "Cancelling: the search stops at its next step." in html and "cancelling…" in html
    running.refresh_from_db()
    assert running.cancel_requested and running.status == Search.Status.RUNNING


def test_cancel_an_ended_search_is_a_conflict(user_client):
    search = SearchFactory(status=Search.Status.DONE)
    response = user_client.post(reverse("memory:search_cancel", args=[search.pk]), **HTMX)
    assert response.status_code == 409
    assert f"Search {search.pk} has already ended (done)." in response.content.decode()


def test_cancel_without_htmx_redirects_to_the_trace_with_a_message(user_client):
    search = SearchFactory()
    response = user_client.post(reverse("memory:search_cancel", args=[search.pk]))
    assert response.status_code == 302 and response["Location"] == trace_url(search)
    assert "Cancelled." in user_client.get(response["Location"]).content.decode()
    again = user_client.post(reverse("memory:search_cancel", args=[search.pk]), follow=True)
    assert "has already ended (cancelled)" in again.content.decode()


# -- the user's questions ----------------------------------------------------------------------


def waiting(questions: list[str]) -> SearchQuestion:
    search = SearchFactory(status=Search.Status.WAITING, questions=questions)
    return SearchQuestion.objects.create(search=search, questions=questions)


def test_the_questions_page_shows_only_the_newest_with_a_note_when_there_are_more(user_client, monkeypatch):
    monkeypatch.setattr("memory.views_searches.QUESTIONS_SHOWN", 3)
    questions = [waiting([f"Question {n}?"]) for n in range(5)]
    SearchQuestion.objects.filter(pk=questions[4].pk).update(status=SearchQuestion.Status.CLOSED)

    html = user_client.get(reverse("memory:question_list")).content.decode()

    shown = [int(pk) for pk in re.findall(r'<article class="card question" id="question-(\d+)"', html)]
    assert shown == [question.pk for question in reversed(questions[1:4])]
    assert "Showing the newest 3 of 4 waiting questions" in html

    SearchQuestion.objects.filter(pk=questions[0].pk).update(status=SearchQuestion.Status.ANSWERED)
    html = user_client.get(reverse("memory:question_list")).content.decode()
    assert len(re.findall(r'id="question-\d+"', html)) == 3 and 'id="more-questions"' not in html


def test_the_questions_page_shows_at_most_a_hundred(user_client):
    for n in range(101):
        waiting([f"Question {n}?"])
    html = user_client.get(reverse("memory:question_list")).content.decode()
    assert len(re.findall(r'<article class="card question"', html)) == 100
    assert "Showing the newest 100 of 101 waiting questions" in html
    assert "Question 100?" in html and "Question 0?" not in html


def test_the_questions_page_lists_pending_questions_escaped(user_client):
    question = waiting([f"Which {SCRIPT} port?"])
    answered = waiting(["Old question"])
    SearchQuestion.objects.filter(pk=answered.pk).update(status=SearchQuestion.Status.ANSWERED)

    html = user_client.get(reverse("memory:question_list")).content.decode()

    assert f'id="question-{question.pk}"' in html and f'id="question-{answered.pk}"' not in html
    assert SCRIPT not in html and ESCAPED in html
    assert f'action="{reverse("memory:question_answer", args=[question.pk])}"' in html
    assert f'href="{trace_url(question.search)}"' in html


def test_answer_a_question(user_client, user, internal):
    question = waiting(["Which port does staging use?"])

    response = user_client.post(reverse("memory:question_answer", args=[question.pk]), {"answer": "Port 8443."})

    assert response.status_code == 302 and response["Location"] == reverse("memory:question_list")
    question.refresh_from_db()
    assert (question.status, question.answer, question.answered_by) == ("answered", "Port 8443.", user)
    assert question.document.parent_id == internal["user"].pk
    assert selectors.search_get(space=default_space(), search_id=question.search_id).status == Search.Status.DONE
    html = user_client.get(response["Location"]).content.decode()
    assert f"Answered; search {question.search_id} is complete." in html and "No search is waiting for you." in html


@pytest.mark.parametrize(
    "answer, status, message", [("", 400, "Answer: This field is required."), ("   ", 400, "This field is required.")]
)
def test_an_empty_answer_is_refused(user_client, internal, answer, status, message):
    question = waiting(["Which port?"])
    response = user_client.post(reverse("memory:question_answer", args=[question.pk]), {"answer": answer})
    assert response.status_code == status and message in response.content.decode()
    question.refresh_from_db()
    assert question.status == SearchQuestion.Status.PENDING


def test_answering_twice_is_a_conflict_and_unknown_questions_404(user_client, internal):
    question = waiting(["Which port?"])
    user_client.post(reverse("memory:question_answer", args=[question.pk]), {"answer": "8443"})
    again = user_client.post(reverse("memory:question_answer", args=[question.pk]), {"answer": "80"})
    assert again.status_code == 409 and "not pending" in again.content.decode()
    unknown = user_client.post(reverse("memory:question_answer", args=[999]), {"answer": "80"})
    assert unknown.status_code == 404 and "No question with id 999." in unknown.content.decode()


def test_a_poll_after_a_number_past_any_step_is_harmless(user_client, running):
    response = user_client.get(trace_url(running, 10**30), **HTMX)
    assert response.status_code == 200 and step_numbers(response.content.decode()) == []
    assert user_client.get(trace_url(running) + "?after=x", **HTMX).status_code == 200
