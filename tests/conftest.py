import time

import pytest
from django.db import OperationalError
from django.db import connection as db_connection
from django.db.backends.signals import connection_created
from django.db.models.sql.compiler import SQLCompiler
from rest_framework.test import APIClient

from memory import selectors
from memory.index import vectors
from tests.factories import StaffFactory, UserFactory, default_space, token_for

# The fake OpenAI-compatible server's fixture, for every test that needs the LLM.
pytest_plugins = ["tests.fake_openai"]


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    """Every test makes users; the real hasher would spend most of the suite's time hashing."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def own_cache(settings, request):
    """A cache of the test's own (it counts API requests for the rate limit), whatever cache
    the run is configured with."""
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": request.node.nodeid}
    }


@pytest.fixture(autouse=True)
def own_vectors():
    """A vector matrix of the test's own: a rolled-back test gives its passage ids to the next."""
    vectors.forget()
    yield
    vectors.forget()


@pytest.fixture(autouse=True)
def own_wait_slots(monkeypatch):
    """Slots for long requests of the test's own: the test client closes a streamed response only
    once it is read to its end, so a download a test did not read would keep its slot into the
    next test."""
    monkeypatch.setattr("memsite.limits._wait_slots", None)


@pytest.fixture(autouse=True)
def own_in_flight_counts(monkeypatch):
    """Counts of requests in flight of the test's own (memsite.concurrency), for the same reason:
    an unread download would keep its caller's slot, and the next test's user may have its id."""
    monkeypatch.setattr("memsite.concurrency._counts", {})


@pytest.fixture
def offline_llm(settings):
    """The offline provider, as with no key: nothing reaches a model server."""
    settings.MEMSITE_LLM_PROVIDER = "offline"
    settings.OPENAI_API_KEY = None
    settings.OPENAI_BASE_URL = None
    return settings


@pytest.fixture
def compiles(monkeypatch) -> list[SQLCompiler]:
    """The compilers that compile a query's SQL from now on."""
    compiled: list[SQLCompiler] = []
    as_sql = SQLCompiler.as_sql

    def counted(self, *args, **kwargs):
        compiled.append(self)
        return as_sql(self, *args, **kwargs)

    monkeypatch.setattr(SQLCompiler, "as_sql", counted)
    return compiled


@pytest.fixture
def user(db):
    return UserFactory()


@pytest.fixture
def staff(db):
    return StaffFactory()


@pytest.fixture
def api(user) -> APIClient:
    """An API client authenticated as a swarm node, with a token."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_for(user)}")
    return client


@pytest.fixture
def staff_api(staff) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_for(staff)}")
    return client


@pytest.fixture
def internal(db):
    """The internal folders by name."""
    space = default_space()
    return {
        name: selectors.node_internal_folder(space=space, name=name)
        for name in ("swarmstar", "user", "projects", "references")
    }


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
