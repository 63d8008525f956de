"""A search walks and cites only its own space's memory, however well another space's answers
the question."""

from memory import selectors, services
from memory.models import Node, Search, SearchStep, ToolCall
from memory.services.demo import demo_memory_seed
from memsite.spaces.models import Space
from tests.factories import SearchFactory, default_space, system
from tests.memory.search.conftest import run_search

QUESTION = "Which HTTP status code means a conflicting resource?"


def test_a_search_never_reads_nor_cites_another_spaces_nodes(db, search_settings):
    search_settings.MEMSITE_SEARCH_SHORTCUT_HITS = 3  # the index is asked, and must keep to the space
    search_settings.MEMSITE_SEARCH_FIRST_READ_TOKENS = 1_500  # and the passages of any node it shows
    demo_memory_seed(by=system())
    assert "http-status-codes.md" in [node["name"] for node in run_search([QUESTION], output="node").result["nodes"]]
    other = Space.objects.create(slug="other", name="Other")
    ours = set(Node.objects.filter(space=other).values_list("pk", flat=True))

    search = services.search_start(by=system(other), questions=[QUESTION], output="node")
    services.search_run(search_id=search.pk)
    search.refresh_from_db()

    assert search.space == other and search.status == Search.Status.DONE, search.ended_because
    assert {node["id"] for node in search.result["nodes"]} <= ours
    cited = {c["node"] for answer in search.result["answers"] for c in answer.get("citations", [])}
    assert cited <= ours and {n for a in search.result["answers"] for n in a["node_ids"]} <= ours
    visited = set(SearchStep.objects.filter(search=search, node__isnull=False).values_list("node_id", flat=True))
    assert visited and visited <= ours
    state = search.state
    assert {*state["visited"], *state["unviable"], *state["trail"], *state["found"]} <= ours
    readings = SearchStep.objects.filter(search=search, kind=SearchStep.Kind.READ)
    assert all(set(step.detail.get("shown", [])) <= ours for step in readings)


def _saving(space: Space) -> Search:
    """A search of the space about to call save_answer with the same answer as any other."""
    state = {
        "answers": [{"question": QUESTION, "answer": "409 Conflict.", "node_ids": [], "complete": False}],
        "tool": "save_answer",
    }
    search = SearchFactory(space=space, questions=[QUESTION], state=state)
    services.search_advance(search_id=search.pk)
    return search


def test_saving_the_answers_another_space_saved_makes_this_spaces_own_document():
    theirs = _saving(Space.objects.create(slug="other", name="Other"))
    their_node = ToolCall.objects.get(search=theirs).node
    references = selectors.node_internal_folder(space=default_space(), name="references")

    ours = _saving(default_space())

    assert ToolCall.objects.get(search=ours).node.parent_id == references.pk
    step = SearchStep.objects.filter(search=ours).last()
    assert their_node.pk not in step.summary and "reusing" not in step.summary
