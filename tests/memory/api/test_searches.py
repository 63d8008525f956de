import time
from decimal import Decimal

import pytest
import yaml
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from drf_spectacular.validation import validate_schema
from rest_framework.test import APIClient

from memory import services
from memory.models import Node, Search, SearchQuestion
from memory.services.demo import demo_memory_seed
from memsite.llm.models import LLMCall
from tests.factories import NodeFactory, SearchFactory, SearchStepFactory, UserFactory, system, token_for
from tests.llm.factories import make_call
from tests.memory.search.tree import build_tree, found, pick
from tests.openapi import assert_documented

pytestmark = pytest.mark.django_db

SECRET = "<script>alert('x')</script>"


@pytest.fixture(autouse=True)
def offline_search(settings):
    """The offline provider, and a walk that falls back at once when the tree has nothing."""
    settings.MEMSITE_LLM_PROVIDER = "offline"
    settings.OPENAI_API_KEY = None
    settings.OPENAI_BASE_URL = None
    settings.MEMSITE_SEARCH_TOOLS = False
    settings.MEMSITE_SEARCH_SHORTCUT_HITS = 0  # scripted walks follow the tree
    settings.MEMSITE_SEARCH_FIRST_READ_TOKENS = 0
    settings.MEMSITE_SEARCH_MAX_RESTARTS = 0
    return settings


@pytest.fixture
def inline_worker(monkeypatch):
    """Stands in for the Celery worker while `?wait` polls: the first pause runs every queued
    search to its end (the test's transaction never commits, so no task is ever enqueued)."""
    pauses: list[float] = []

    def pause(seconds: float) -> None:
        if not pauses:
            for search_id in Search.objects.filter(status=Search.Status.QUEUED).values_list("pk", flat=True):
                services.search_run(search_id=search_id)
        pauses.append(seconds)
        time.sleep(seconds)

    monkeypatch.setattr("memory.selectors.searches.sleep", pause)
    return pauses


def url(name: str, *args) -> str:
    return reverse(f"memory-api:{name}", args=args)


def start(api: APIClient, body: dict, wait: str | None = None):
    query = f"?wait={wait}" if wait is not None else ""
    return api.post(url("search-start") + query, body, format="json")


# -- starting ----------------------------------------------------------------------------------


def test_start_queues_the_search_and_answers_202(api, user, settings):
    response = start(api, {"questions": ["Where are the deployment notes?"]})

    assert response.status_code == 202, response.content
    body = response.json()
    search = Search.objects.get()
    assert body["id"] == search.pk and body["status"] == "queued"
    assert body["url"] == f"http://testserver/api/searches/{search.pk}/"
    assert body["trace_url"] == f"http://testserver/searches/{search.pk}/"
    assert response["Location"] == url("search-detail", search.pk)
    assert body["questions"] == ["Where are the deployment notes?"]
    assert (body["output"], body["fallback"], body["start_node"], body["context"]) == ("answer", "none", None, "")
    assert body["budgets"] == {
        "max_llm_calls": settings.MEMSITE_SEARCH_MAX_LLM_CALLS,
        "max_tokens": settings.MEMSITE_SEARCH_MAX_TOKENS,
        "timeout_s": settings.MEMSITE_SEARCH_TIMEOUT_S,
    }
    assert body["spent"] == {"llm_calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "cost_usd": 0.0}
    assert (body["result"], body["ended_because"], body["parent"], body["children"]) == (None, "", None, [])
    assert body["created_by"] == user.username and search.created_by == user


def test_start_takes_every_option(api, internal):
    folder = NodeFactory(parent=internal["references"], name="ops")
    response = start(
        api,
        {
            "questions": ["Where are the deployment notes?", "Who deploys?"],
            "context": "Preparing a release.",
            "start_node": folder.pk,
            "output": "node",
            "fallback": "ask_user",
            "budgets": {"max_llm_calls": 5, "max_tokens": 1000, "timeout_s": 60},
        },
    )

    assert response.status_code == 202, response.content
    search = Search.objects.get()
    assert (search.start_node, search.output, search.fallback, search.context) == (
        folder,
        "node",
        "ask_user",
        "Preparing a release.",
    )
    assert (search.max_llm_calls, search.max_tokens, search.timeout_s) == (5, 1000, 60)
    assert response.json()["start_node"] == folder.pk


def test_the_search_is_enqueued_once_the_request_commits(api, monkeypatch, django_capture_on_commit_callbacks):
    queued = []
    monkeypatch.setattr("memory.tasks.search_run.delay", lambda **kwargs: queued.append(kwargs))
    with django_capture_on_commit_callbacks(execute=True):
        response = start(api, {"questions": ["Where?"]})
    assert queued == [{"search_id": response.json()["id"]}]


BAD_STARTS = [
    # (label, body, query wait, status, fragment of the answer)
    ("no questions field", {}, None, 400, "questions"),
    ("no questions", {"questions": []}, None, 400, "not be empty"),
    ("21 questions", {"questions": [f"q{n}" for n in range(21)]}, None, 400, "no more than 20"),
    ("a blank question", {"questions": ["fine", "   "]}, None, 400, "may not be blank"),
    ("a question that is a number", {"questions": [3]}, None, 400, "Must be a string"),
    ("questions as one string", {"questions": "Where?"}, None, 400, "list"),
    ("a question too long", {"questions": ["x" * 1001]}, None, 400, "no more than 1000"),
    ("context that is a number", {"questions": ["q"], "context": 5}, None, 400, "Must be a string"),
    ("an unknown output", {"questions": ["q"], "output": "both"}, None, 400, "not a valid choice"),
    ("an unknown fallback", {"questions": ["q"], "fallback": "web"}, None, 400, "not a valid choice"),
    ("a zero budget", {"questions": ["q"], "budgets": {"max_llm_calls": 0}}, None, 400, "greater than or equal to 1"),
    (
        "a budget over the cap",
        {"questions": ["q"], "budgets": {"timeout_s": 3601}},
        None,
        400,
        "less than or equal to 3600",
    ),
    ("a budget as a string", {"questions": ["q"], "budgets": {"max_tokens": "5"}}, None, 400, "Must be an integer"),
    ("an unknown budget", {"questions": ["q"], "budgets": {"max_dollars": 1}}, None, 400, "Unknown field"),
    ("an unknown field", {"questions": ["q"], "max_llm_calls": 3}, None, 400, "Unknown field"),
    ("a wait that is not a number", {"questions": ["q"]}, "soon", 400, "valid integer"),
    ("a wait over 30 s", {"questions": ["q"]}, "31", 400, "less than or equal to 30"),
    ("a negative wait", {"questions": ["q"]}, "-1", 400, "greater than or equal to 0"),
    ("an unknown start node", {"questions": ["q"], "start_node": "memory_" + "0" * 32}, None, 404, "No memory node"),
]


@pytest.mark.parametrize("label, body, wait, status, fragment", BAD_STARTS, ids=[case[0] for case in BAD_STARTS])
def test_bad_input_is_refused_and_starts_nothing(api, internal, label, body, wait, status, fragment):
    response = start(api, body, wait)
    assert response.status_code == status, response.content
    assert fragment in response.content.decode()
    assert not Search.objects.exists()


def test_a_body_that_is_not_json_is_refused(api):
    response = api.post(url("search-start"), "questions=Where", content_type="application/json")
    assert response.status_code == 400 and "JSON parse error" in response.json()["detail"]
    assert not Search.objects.exists()


# -- waiting -----------------------------------------------------------------------------------


def test_wait_answers_200_with_the_result_when_the_search_ends_in_time(api, internal, inline_worker):
    demo_memory_seed(by=system())
    response = start(
        api, {"questions": ["Which HTTP status code means a conflicting resource?"], "output": "node"}, wait="10"
    )

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["status"] == "done" and inline_worker == [0.2]  # ended at the first look after the worker ran
    assert "http-status-codes.md" in [node["name"] for node in body["result"]["nodes"]]
    assert body["result"]["ended_because"] == body["ended_because"]
    assert body["spent"]["llm_calls"] >= 1 and body["steps"] >= 1
    assert body["provider"] == "offline"


@pytest.mark.django_db(transaction=True)
def test_wait_gets_the_answer_from_a_real_worker(worker):
    """The request commits the search before it waits, so the worker can run it meanwhile."""
    build_tree()
    worker.script(pick("references"), pick("databases"), pick("pg-tuning.md"), found("A quarter of the RAM."))
    api = APIClient()
    api.force_authenticate(UserFactory())

    response = start(api, {"questions": ["How large should shared_buffers be?"]}, wait="20")

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["status"] == "done" and body["result"]["answers"][0]["answer"] == "A quarter of the RAM."
    assert body["spent"]["llm_calls"] == 4 and body["provider"] == "openai"


def test_wait_answers_202_when_the_search_is_still_running(api):
    began = time.monotonic()
    response = start(api, {"questions": ["Where?"]}, wait="1")
    assert response.status_code == 202 and response.json()["status"] == "queued"
    assert time.monotonic() - began >= 1


def test_wait_zero_does_not_wait(api):
    began = time.monotonic()
    assert start(api, {"questions": ["Where?"]}, wait="0").status_code == 202
    assert time.monotonic() - began < 1


# -- reading -----------------------------------------------------------------------------------


def test_read_a_finished_search_with_its_spend_children_and_result(api, internal):
    node = internal["user"]
    result = {
        "answers": [{"question": "Where?", "answer": "In the user folder.", "node_ids": [node.pk], "complete": True}],
        "nodes": [{"id": node.pk, "name": "user", "path": "/user"}],
        "open_questions": [],
        "ended_because": "answered",
    }
    search = SearchFactory(
        questions=["Where?"],
        status=Search.Status.DONE,
        result=result,
        ended_because="answered",
        llm_calls=3,
        prompt_tokens=300,
        completion_tokens=40,
        cost_usd=Decimal("0.00012"),
    )
    child = SearchFactory(parent=search, depth=1, status=Search.Status.DONE)

    response = api.get(url("search-detail", search.pk))

    assert response.status_code == 200
    body = response.json()
    assert body["spent"] == {"llm_calls": 3, "prompt_tokens": 300, "completion_tokens": 40, "cost_usd": 0.00012}
    # A result written before answers kept their citations reads with none, and its nodes as
    # found by reading, the only way then.
    assert body["result"] == {
        **result,
        "answers": [{**result["answers"][0], "citations": []}],
        "nodes": [{**result["nodes"][0], "found_by": "reading", "passages": []}],
    }
    assert body["ended_because"] == "answered"
    assert body["children"] == [child.pk] and body["user_question"] is None
    assert api.get(url("search-detail", child.pk)).json()["parent"] == search.pk


def test_answers_come_with_their_citations_and_found_nodes_with_their_passages(api, internal):
    node = internal["user"]
    citation = {"node": node.pk, "start": 4, "end": 20, "date": "2023-05-08"}
    found = {
        "id": node.pk,
        "name": "user",
        "path": "/user",
        "found_by": "index",
        "passages": [{"start": 4, "end": 20, "snippet": "the user's notes"}],
    }
    answer = {"question": "Where?", "answer": "Here.", "node_ids": [node.pk], "citations": [citation], "complete": True}
    result = {"answers": [answer], "nodes": [found], "open_questions": [], "ended_because": "answered"}
    search = SearchFactory(questions=["Where?"], output="node", status=Search.Status.DONE, result=result)

    assert api.get(url("search-detail", search.pk)).json()["result"] == result

    # A citation stored before citations were dated is read with no date.
    undated = {key: value for key, value in citation.items() if key != "date"}
    search.result = {**result, "answers": [{**answer, "citations": [undated]}]}
    search.save(update_fields=["result"])
    assert api.get(url("search-detail", search.pk)).json()["result"]["answers"][0]["citations"] == [
        {**undated, "date": None}
    ]


def test_a_waiting_search_names_its_pending_question(api):
    search = SearchFactory(status=Search.Status.WAITING)
    question = SearchQuestion.objects.create(search=search, questions=search.questions)
    assert api.get(url("search-detail", search.pk)).json()["user_question"] == question.pk


def test_an_unknown_search_is_404(api):
    for path in (url("search-detail", 999), url("search-steps", 999)):
        response = api.get(path)
        assert response.status_code == 404 and response.json() == {"detail": "No search with id 999."}
    assert api.post(url("search-cancel", 999)).status_code == 404
    assert api.get("/api/searches/not-a-number/").status_code == 404


def test_steps_come_in_order_with_their_llm_call_costs_but_not_the_messages(api):
    search = SearchFactory(status=Search.Status.RUNNING)
    call = make_call(
        messages=[{"role": "user", "content": SECRET}], prompt_tokens=120, completion_tokens=9, latency_ms=42
    )
    SearchStepFactory(search=search, kind="route", llm_call=call, detail={"choice": 1})
    SearchStepFactory(search=search, kind="backtrack")
    SearchStepFactory(search=search, kind="finish")

    response = api.get(url("search-steps", search.pk))

    assert response.status_code == 200
    body = response.json()
    assert [step["number"] for step in body["results"]] == [1, 2, 3]
    assert [step["kind"] for step in body["results"]] == ["route", "backtrack", "finish"]
    first = body["results"][0]
    assert first["detail"] == {"choice": 1}
    assert first["llm_call"] == {
        "id": call.pk,
        "purpose": "route",
        "model": "gpt-4o-mini",
        "status": "ok",
        "prompt_tokens": 120,
        "completion_tokens": 9,
        "latency_ms": 42,
        "cost_usd": float(call.cost_usd),
    }
    assert body["results"][1]["llm_call"] is None
    assert SECRET not in response.content.decode()


def test_steps_do_not_load_what_the_llm_calls_were_shown(api):
    search = SearchFactory(status=Search.Status.RUNNING)
    for _ in range(3):
        SearchStepFactory(search=search, llm_call=make_call(messages=[{"role": "user", "content": "x" * 10_000}]))
    table = LLMCall._meta.db_table

    with CaptureQueriesContext(connection) as queries:
        response = api.get(url("search-steps", search.pk))

    assert response.status_code == 200 and len(response.json()["results"]) == 3
    assert all(step["llm_call"]["prompt_tokens"] == 100 for step in response.json()["results"])
    step_queries = [query["sql"] for query in queries if '"memory_searchstep"' in query["sql"]]
    assert step_queries and all(f'"{table}"."prompt_tokens"' in sql for sql in step_queries)
    assert not any(f'"{table}"."{column}"' in query["sql"] for query in queries for column in ("messages", "reply"))


def test_steps_after_a_number_and_by_cursor_pages(api):
    search = SearchFactory(status=Search.Status.RUNNING)
    for _ in range(5):
        SearchStepFactory(search=search)

    after = api.get(url("search-steps", search.pk), {"after": 3}).json()
    assert [step["number"] for step in after["results"]] == [4, 5]

    first = api.get(url("search-steps", search.pk), {"page_size": 2}).json()
    assert [step["number"] for step in first["results"]] == [1, 2] and first["next"]
    second = api.get(first["next"]).json()
    assert [step["number"] for step in second["results"]] == [3, 4]


@pytest.mark.parametrize(
    "query, fragment",
    [
        ({"after": "two"}, "valid integer"),
        ({"after": -1}, "greater than or equal to 0"),
        ({"page_size": 0}, "whole number from 1 to 1000"),
        ({"cursor": "bogus"}, "Invalid cursor"),
    ],
)
def test_bad_step_queries_are_400(api, query, fragment):
    search = SearchFactory()
    response = api.get(url("search-steps", search.pk), query)
    assert response.status_code == 400 and fragment in response.content.decode()


# -- cancelling --------------------------------------------------------------------------------


def test_cancel_a_queued_search_ends_it_then_a_second_cancel_is_a_conflict(api):
    search_id = start(api, {"questions": ["Where?"]}).json()["id"]

    response = api.post(url("search-cancel", search_id))
    assert response.status_code == 202
    assert (response.json()["status"], response.json()["ended_because"]) == ("cancelled", "cancelled")

    again = api.post(url("search-cancel", search_id))
    assert again.status_code == 409
    assert again.json() == {"detail": f"Search {search_id} has already ended (cancelled)."}


def test_cancel_a_running_search_asks_the_worker_to_stop(api):
    search = SearchFactory(status=Search.Status.RUNNING)
    response = api.post(url("search-cancel", search.pk))
    assert response.status_code == 202 and response.json()["status"] == "running"
    search.refresh_from_db()
    assert search.cancel_requested


# -- the user's questions ----------------------------------------------------------------------


def test_a_search_that_asks_the_user_is_answered_through_the_api(api, user, internal, inline_worker):
    empty = NodeFactory(parent=internal["references"], name="empty")
    started = start(
        api, {"questions": ["Which port does staging use?"], "start_node": empty.pk, "fallback": "ask_user"}, wait="1"
    )
    # it waits for the user, which is not an end: 202 once `wait` runs out
    assert started.status_code == 202 and started.json()["status"] == "waiting"
    question_id = started.json()["user_question"]

    pending = api.get(url("question-list")).json()["results"]
    assert [(item["id"], item["search"], item["questions"]) for item in pending] == [
        (question_id, started.json()["id"], ["Which port does staging use?"])
    ]

    response = api.post(url("question-answer", question_id), {"answer": "Port 8443."}, format="json")

    assert response.status_code == 200, response.content
    body = response.json()
    document = Node.objects.get(pk=body["document"])
    assert (body["status"], body["answer"], body["answered_by"]) == ("answered", "Port 8443.", user.username)
    assert document.parent_id == internal["user"].pk
    search = api.get(url("search-detail", started.json()["id"])).json()
    assert search["status"] == "done" and search["result"]["answers"][0]["answer"] == "Port 8443."
    assert api.get(url("question-list")).json() == {"next": None, "previous": None, "results": []}


def pending_question() -> SearchQuestion:
    search = SearchFactory(status=Search.Status.WAITING)
    return SearchQuestion.objects.create(search=search, questions=search.questions)


def test_pending_questions_come_newest_first_a_cursor_page_at_a_time(api):
    questions = [pending_question() for _ in range(5)]
    SearchQuestion.objects.filter(pk=questions[2].pk).update(status=SearchQuestion.Status.CLOSED)
    newest_first = [question.pk for question in reversed(questions) if question.pk != questions[2].pk]

    first = api.get(url("question-list"), {"page_size": 2})
    assert first.status_code == 200
    assert [item["id"] for item in first.json()["results"]] == newest_first[:2] and first.json()["previous"] is None
    second = api.get(first.json()["next"]).json()
    assert [item["id"] for item in second["results"]] == newest_first[2:] and second["next"] is None
    everything = api.get(url("question-list")).json()
    assert [item["id"] for item in everything["results"]] == newest_first and everything["next"] is None
    assert everything["results"][0] == {
        "id": questions[4].pk,
        "search": questions[4].search_id,
        "questions": questions[4].questions,
        "status": "pending",
        "answer": "",
        "answered_by": None,
        "answered_at": None,
        "document": None,
        "created_at": everything["results"][0]["created_at"],
    }


def test_pending_questions_are_a_hundred_a_page_by_default(api):
    for _ in range(101):
        pending_question()
    with CaptureQueriesContext(connection) as queries:
        body = api.get(url("question-list")).json()
    # one query for the page (joined to the searches for their space), none per question (nor
    # any for their searches or users)
    sqls = [query["sql"] for query in queries if '"spaces_apitoken"' not in query["sql"]]
    page = [sql for sql in sqls if '"memory_searchquestion"' in sql]
    assert len(page) == 1
    assert '"memory_search"."questions"' not in page[0]
    assert not any('"memory_search".' in sql or '"auth_user".' in sql for sql in sqls if sql not in page)
    assert len(body["results"]) == 100 and body["next"]
    assert len(api.get(body["next"]).json()["results"]) == 1


@pytest.mark.parametrize(
    "query, fragment",
    [
        ({"page_size": 0}, "whole number from 1 to 1000"),
        ({"page_size": "x"}, "whole number"),
        ({"cursor": "bogus"}, "Invalid cursor"),
    ],
)
def test_bad_question_list_queries_are_400(api, query, fragment):
    response = api.get(url("question-list"), query)
    assert response.status_code == 400 and fragment in response.content.decode()


@pytest.mark.parametrize(
    "body, fragment",
    [
        ({"answer": "   "}, "may not be blank"),
        ({}, "This field is required"),
        ({"answer": 42}, "Must be a string"),
        ({"answer": "x", "extra": 1}, "Unknown field"),
    ],
)
def test_a_bad_answer_is_400_and_the_question_stays_pending(api, internal, body, fragment):
    question = pending_question()
    response = api.post(url("question-answer", question.pk), body, format="json")
    assert response.status_code == 400 and fragment in response.content.decode()
    question.refresh_from_db()
    assert question.status == SearchQuestion.Status.PENDING
    assert Search.objects.get(pk=question.search_id).status == Search.Status.WAITING


def test_answering_twice_is_a_conflict(api, internal):
    question = pending_question()
    assert api.post(url("question-answer", question.pk), {"answer": "Yes."}, format="json").status_code == 200
    again = api.post(url("question-answer", question.pk), {"answer": "No."}, format="json")
    assert again.status_code == 409 and "not pending" in again.json()["detail"]
    question.refresh_from_db()
    assert question.answer == "Yes."


def test_answering_an_unknown_question_is_404(api):
    response = api.post(url("question-answer", 999), {"answer": "Yes."}, format="json")
    assert response.status_code == 404 and response.json() == {"detail": "No question with id 999."}


# -- auth and schema ---------------------------------------------------------------------------


ENDPOINTS = [
    ("post", "search-start", False),
    ("get", "search-detail", True),
    ("get", "search-steps", True),
    ("post", "search-cancel", True),
    ("get", "question-list", False),
    ("post", "question-answer", True),
]


@pytest.mark.parametrize("method, name, with_id", ENDPOINTS, ids=[f"{m} {n}" for m, n, _ in ENDPOINTS])
def test_anonymous_requests_are_refused_with_401(method, name, with_id):
    search = SearchFactory(status=Search.Status.WAITING)
    question = SearchQuestion.objects.create(search=search, questions=search.questions)
    target = (question.pk if "question" in name else search.pk,) if with_id else ()
    response = getattr(APIClient(), method)(url(name, *target), {"questions": ["q"], "answer": "a"}, format="json")
    assert response.status_code == 401
    assert Search.objects.count() == 1
    search.refresh_from_db()
    assert (search.status, search.cancel_requested) == (Search.Status.WAITING, False)


def test_the_schema_describes_every_search_operation(client):
    schema = yaml.safe_load(client.get("/api/schema/").content)
    validate_schema(schema)
    operations = {
        (path, method): operation
        for path, item in schema["paths"].items()
        for method, operation in item.items()
        if method != "parameters"
    }
    expected = {
        ("/api/searches/", "post"),
        ("/api/searches/{search_id}/", "get"),
        ("/api/searches/{search_id}/steps/", "get"),
        ("/api/searches/{search_id}/cancel/", "post"),
        ("/api/questions/", "get"),
        ("/api/questions/{question_id}/answer/", "post"),
    }
    assert expected <= set(operations)
    assert all(operations[key]["tags"] == ["searches"] for key in expected)
    start_operation = operations[("/api/searches/", "post")]
    assert {"200", "202", "400", "404"} <= set(start_operation["responses"])
    assert any(parameter["name"] == "wait" for parameter in start_operation["parameters"])
    questions = operations[("/api/questions/", "get")]
    assert {parameter["name"] for parameter in questions["parameters"]} == {"cursor", "page_size"}
    page = questions["responses"]["200"]["content"]["application/json"]["schema"]
    assert page == {"$ref": "#/components/schemas/SearchQuestionPage"}
    assert set(schema["components"]["schemas"]["SearchQuestionPage"]["properties"]) == {"next", "previous", "results"}
    body = schema["components"]["schemas"]["SearchStartRequest"]
    assert set(body["properties"]) == {"questions", "context", "start_node", "output", "budgets", "fallback"}
    assert body["required"] == ["questions"]


def test_steps_after_a_number_past_any_step_are_an_empty_page(api):
    search = SearchFactory()
    SearchStepFactory(search=search)
    response = api.get(url("search-steps", search.pk), {"after": 10**30})
    assert response.status_code == 200 and response.json()["results"] == []


@pytest.mark.django_db(transaction=True)
def test_a_search_is_kept_and_accepted_when_the_broker_is_down(monkeypatch):
    from memory import tasks

    def down(**kwargs):
        raise ConnectionError("broker unreachable")

    monkeypatch.setattr(tasks.search_run, "delay", down)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_for(UserFactory())}")
    response = client.post("/api/searches/", {"questions": ["Where?"]}, format="json")

    assert response.status_code == 202
    assert Search.objects.get().status == Search.Status.QUEUED  # the sweep queues it again


def test_invalid_budgets_and_questions_are_named_where_they_are_as_documented(api):
    response = start(api, {"questions": [], "budgets": {"max_llm_calls": 1, "timeout_s": 0}})
    assert response.status_code == 400
    assert response.json() == {
        "questions": ["This list may not be empty."],
        "budgets": {"timeout_s": ["Ensure this value is greater than or equal to 1."]},
    }
    assert_documented(response, "/api/searches/", "post")

    response = start(api, {"questions": ["Where?", 3]})
    assert response.status_code == 400
    assert response.json() == {"questions": {"1": ["Must be a string."]}}
    assert_documented(response, "/api/searches/", "post")
