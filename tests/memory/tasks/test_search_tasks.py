"""A search end to end on a real Celery worker: the configured broker (Redis on CI, the
filesystem broker elsewhere), the task enqueued on commit, the fake OpenAI server answering."""

import time

from memory import services
from memory.models import Search
from tests.factories import system
from tests.memory.search.tree import build_tree, found, pick


def wait_until_ended(search: Search, seconds: float = 30) -> Search:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        search.refresh_from_db()
        if not search.is_active:
            return search
        time.sleep(0.1)
    raise AssertionError(f"Search {search.pk} still {search.status} after {seconds}s.")


def test_a_worker_runs_a_queued_search_to_its_answer(worker):
    build_tree()
    worker.script(pick("references"), pick("databases"), pick("pg-tuning.md"), found("A quarter of the RAM."))
    search = services.search_start(by=system(), questions=["How large should shared_buffers be?"])

    search = wait_until_ended(search)
    assert search.status == Search.Status.DONE, search.ended_because
    assert search.result["answers"][0]["answer"] == "A quarter of the RAM."
    assert list(search.steps.values_list("number", flat=True)) == [1, 2, 3, 4, 5]
    assert worker.pending == 0
