import pytest
from celery.contrib.testing.worker import start_worker
from django.test import Client

from memsite.celery import app
from tests.factories import default_space

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture(autouse=True)
def model_table(settings):
    """A model with a 1,100-token context: with 100 reserved for output, a 1,000-token window
    that tests fill with a few messages."""
    settings.MEMSITE_LLM_MODELS = {"test-1k": {"context_window": 1_100, "max_output_tokens": 100}}
    return settings


@pytest.fixture
def tick_worker(transactional_db, settings, sqlite_waits_for_locks):
    """A real Celery worker in this process (as tests/memory/conftest.py's `worker`), with the
    internal folders back in place (transactional tests empty the tables) and the offline
    provider, so that many ticks need no scripted replies."""
    default_space()  # made again if emptied, and with it its internal folders
    settings.MEMSITE_LLM_PROVIDER = "offline"
    settings.OPENAI_API_KEY = None
    settings.OPENAI_BASE_URL = None
    with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=30) as worker:
        yield worker


@pytest.fixture
def user_client(client: Client, user) -> Client:
    client.force_login(user)
    return client


@pytest.fixture
def admin_client(client, staff):
    staff.save()  # the factory sets the password after creating the row
    client.force_login(staff)
    return client
