"""Fixtures shared by the memory tests."""

import pytest
from celery.contrib.testing.worker import start_worker

from memsite.celery import app
from memsite.llm.providers.openai import client_for, forget_working_modes
from tests.factories import default_space
from tests.fake_openai import FakeOpenAI


@pytest.fixture
def worker(transactional_db, settings, fake_openai: FakeOpenAI, sqlite_waits_for_locks):
    default_space()  # made again if emptied, and with it its internal folders
    settings.MEMSITE_LLM_PROVIDER = "openai"
    settings.OPENAI_API_KEY = "sk-test"
    settings.OPENAI_BASE_URL = fake_openai.url
    settings.MEMSITE_SEARCH_TOOLS = False
    settings.MEMSITE_SEARCH_SHORTCUT_HITS = 0  # scripted walks follow the tree
    settings.MEMSITE_SEARCH_FIRST_READ_TOKENS = 0
    forget_working_modes()
    with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=30):
        yield fake_openai
    client_for.cache_clear()
