"""A search end to end on a real Celery worker: the configured broker (Redis on CI, the
filesystem broker elsewhere), the task enqueued on commit, the fake OpenAI server answering."""

import importlib
import time

import pytest
from celery.contrib.testing.worker import start_worker
from django.apps import apps

from memory import services
from memory.models import Search
from memsite.celery import app
from memsite.llm.providers.openai import client_for, forget_working_modes
from tests.fake_openai import FakeOpenAI, fake_openai  # noqa: F401  (the fixture)
from tests.memory.search.tree import build_tree, found, pick


@pytest.fixture
def worker(transactional_db, settings, fake_openai: FakeOpenAI):  # noqa: F811
    importlib.import_module("memory.migrations.0003_internal_folders").create_internal_folders(apps, None)
    settings.MEMSITE_LLM_PROVIDER = "openai"
    settings.OPENAI_API_KEY = "sk-test"
    settings.OPENAI_BASE_URL = fake_openai.url
    settings.MEMSITE_SEARCH_TOOLS = False
    forget_working_modes()
    with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=30):
        yield fake_openai
    client_for.cache_clear()


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
    search = services.search_start(user=None, questions=["How large should shared_buffers be?"])

    search = wait_until_ended(search)
    assert search.status == Search.Status.DONE, search.ended_because
    assert search.result["answers"][0]["answer"] == "A quarter of the RAM."
    assert list(search.steps.values_list("number", flat=True)) == [1, 2, 3, 4, 5]
    assert worker.pending == 0
