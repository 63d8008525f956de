from memory.models import Search
from memory.services.demo import demo_memory_seed
from tests.factories import memsite_in
from tests.memory.search.conftest import run_search


def test_offline_search_finds_the_demo_status_codes(db):
    demo_memory_seed(by=memsite_in())
    search = run_search(["Which HTTP status code means a conflicting resource?"], output="node")
    assert search.status == Search.Status.DONE, search.ended_because
    names = [node["name"] for node in search.result["nodes"]]
    assert "http-status-codes.md" in names


def test_numbered_lines_in_the_context_are_not_taken_for_options(db):
    demo_memory_seed(by=memsite_in())
    context = "My plan:\n1. Read the notes on HTTP\n2. Then read them again\n3. And once more"
    search = run_search(["Which HTTP status code means a conflicting resource?"], context=context, output="node")

    assert search.status == Search.Status.DONE and search.ended_because == "answered"
    assert "http-status-codes.md" in [node["name"] for node in search.result["nodes"]]


def test_the_demo_search_is_answered_from_the_status_codes_note(db):
    from memory.services.demo import DEMO_SEARCH_QUESTIONS

    demo_memory_seed(by=memsite_in())
    search = run_search(DEMO_SEARCH_QUESTIONS)

    [answer] = search.result["answers"]
    assert search.ended_because == "answered" and answer["complete"]
    assert "409 | conflicts with the current state" in answer["answer"]
    assert search.steps.count() <= 5
