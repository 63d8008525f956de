from memory.models import Search
from memory.services.demo import demo_memory_seed
from tests.memory.search.conftest import run_search


def test_offline_search_finds_the_demo_status_codes(db):
    demo_memory_seed(user=None)
    search = run_search(["Which HTTP status code means a conflicting resource?"], output="node")
    assert search.status == Search.Status.DONE, search.ended_because
    names = [node["name"] for node in search.result["nodes"]]
    assert "http-status-codes.md" in names
    print([(s.kind, s.summary) for s in search.steps.all()])
