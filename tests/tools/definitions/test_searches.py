"""memory_search and memory_search_get with the offline provider: a search run to its end while
the tool waits answers with its citations; one still running gives its id to poll."""

import pytest

from memory.models import Search, SearchQuestion
from memory.services.demo import demo_memory_seed
from memsite.errors import NotFound
from memsite.spaces.logic import Role
from memsite.spaces.models import Space
from tests.factories import NodeFactory, SearchFactory, system
from tests.tools.conftest import principal

pytestmark = pytest.mark.django_db

QUESTION = "Which HTTP status code means a conflicting resource?"


@pytest.fixture(autouse=True)
def walk_settings(settings):
    """A walk that follows the tree and falls back at once when it has nothing."""
    settings.MEMSITE_SEARCH_TOOLS = False
    settings.MEMSITE_SEARCH_SHORTCUT_HITS = 0
    settings.MEMSITE_SEARCH_FIRST_READ_TOKENS = 0
    settings.MEMSITE_SEARCH_MAX_RESTARTS = 0


def test_a_search_that_ends_while_the_tool_waits_answers_with_its_citations(call, editor, inline_worker):
    demo_memory_seed(by=system())

    result = call("memory_search", questions=[QUESTION], output="node", wait_s=10)

    search = Search.objects.get()
    assert (result["id"], result["status"], search.created_by) == (search.pk, "done", editor.user)
    assert inline_worker == [0.2] and "poll" not in result  # ended at the first look after the worker ran
    answer = result["result"]["answers"][0]
    assert answer["question"] == QUESTION and answer["answer"] and answer["citations"]
    cited = answer["citations"][0]
    text = call("memory_read", node=cited["node"], offset=cited["start"], limit=cited["end"] - cited["start"])
    assert text["content"] and text["content"] in answer["answer"]  # the offline reader answers verbatim
    assert "http-status-codes.md" in [node["name"] for node in result["result"]["nodes"]]
    assert result["ended_because"] == result["result"]["ended_because"] and result["spent"]["llm_calls"] >= 1


def test_a_search_still_running_gives_its_id_to_poll_and_get_answers_it_later(call, inline_worker):
    demo_memory_seed(by=system())

    started = call("memory_search", questions=[QUESTION], wait_s=0)
    polled = call("memory_search_get", search_id=started["id"])

    assert (started["status"], started["result"]) == ("queued", None)
    assert started["poll"] == f"Not ended yet: call memory_search_get with search_id {started['id']}."
    assert inline_worker == [0.2] and polled["status"] == "done"
    assert polled["result"]["answers"][0]["complete"] and "poll" not in polled
    assert started["search_id"] == started["id"] == polled["search_id"]  # the old name, for one release


def test_search_takes_its_options(call):
    folder = NodeFactory(name="ops")

    result = call(
        "memory_search",
        questions=["Where are the notes?", "Who deploys?"],
        context="Preparing a release.",
        start="/swarmstar/ops",
        fallback="ask_user",
        budgets={"max_llm_calls": 5, "timeout_s": 60},
        wait_s=0,
    )

    search = Search.objects.get(pk=result["id"])
    assert (search.start_node, search.fallback, search.context) == (folder, "ask_user", "Preparing a release.")
    assert (search.max_llm_calls, search.timeout_s, search.questions) == (
        5,
        60,
        ["Where are the notes?", "Who deploys?"],
    )


def test_a_search_waiting_for_the_user_names_its_question(call, internal, inline_worker):
    empty = NodeFactory(parent=internal["references"], name="empty")

    result = call("memory_search", questions=["Which port does staging use?"], start=empty.pk, fallback="ask_user")

    question = SearchQuestion.objects.get()
    assert (result["status"], result["user_question"], result["result"]) == ("waiting", question.pk, None)
    assert sum(inline_worker) >= 10  # waited its whole wait_s: waiting for the user is no end


def test_a_reader_polls_but_does_not_start(call):
    search = SearchFactory(status=Search.Status.DONE, ended_because="answered", result={"answers": []})
    reader = principal(Role.READER)

    assert call("memory_search_get", as_=reader, search_id=search.pk, wait_s=0)["result"] == {"answers": []}


def test_another_space_s_search_is_not_found(call):
    search = SearchFactory()
    NodeFactory(name="ops")
    outsider = principal(Role.OWNER, space=Space.objects.create(slug="other", name="Other"))

    with pytest.raises(NotFound, match=f"No search with id {search.pk}."):
        call("memory_search_get", as_=outsider, search_id=search.pk, wait_s=0)
    with pytest.raises(NotFound, match="No memory node at '/swarmstar/ops'."):
        call("memory_search", as_=outsider, questions=["Where?"], start="/swarmstar/ops", wait_s=0)
    assert Search.objects.count() == 1
