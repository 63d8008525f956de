import importlib
import time

import pytest
from celery.contrib.testing.worker import start_worker
from django.apps import apps
from django.db import OperationalError
from django.db import connection as db_connection
from django.db.backends.signals import connection_created

from memsite.celery import app


@pytest.fixture(autouse=True)
def model_table(settings):
    """A model with a 1,100-token context: with 100 reserved for output, a 1,000-token window
    that tests fill with a few messages."""
    settings.MEMSITE_LLM_MODELS = {"test-1k": {"context_window": 1_100, "max_output_tokens": 100}}
    return settings


def _wait_while_locked(execute, sql, params, many, context):
    """Retries a statement that found a table locked, for up to 20 s: the in-memory test
    database shares one cache between connections and reports a lock at once, where the file
    database memsite runs on waits (its `timeout`). A failed statement had no effect."""
    deadline = time.monotonic() + 20
    while True:
        try:
            return execute(sql, params, many, context)
        except OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.002)


@pytest.fixture
def sqlite_waits_for_locks():
    """Every SQLite connection opened during the test (in any thread) waits for locks."""

    def install(sender, connection, **kwargs):
        if connection.vendor == "sqlite" and _wait_while_locked not in connection.execute_wrappers:
            connection.execute_wrappers.append(_wait_while_locked)

    connection_created.connect(install)
    install(None, db_connection)
    yield
    connection_created.disconnect(install)
    if _wait_while_locked in db_connection.execute_wrappers:
        db_connection.execute_wrappers.remove(_wait_while_locked)


@pytest.fixture
def tick_worker(transactional_db, settings, sqlite_waits_for_locks):
    """A real Celery worker in this process (as tests/memory/conftest.py's `worker`), with the
    internal folders back in place (transactional tests empty the tables) and the offline
    provider, so that many ticks need no scripted replies."""
    importlib.import_module("memory.migrations.0003_internal_folders").create_internal_folders(apps, None)
    settings.MEMSITE_LLM_PROVIDER = "offline"
    settings.OPENAI_API_KEY = None
    settings.OPENAI_BASE_URL = None
    with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=30) as worker:
        yield worker
