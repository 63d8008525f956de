"""The client against the live server: the world is made through the services, and the client
talks HTTP to pytest-django's live server. The worker's work (searches, graph operations)
runs eagerly, in the request that queued it, once that request commits."""

from collections.abc import Iterator

import pytest
from memsite_client import MemsiteClient

from memsite.celery import app
from tests.factories import UserFactory, default_space, token_for


class FakeTime:
    """A clock and a sleep that only move each other: a client waits without waiting."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

    async def asleep(self, seconds: float) -> None:
        self.sleep(seconds)


@pytest.fixture
def fake_time() -> FakeTime:
    return FakeTime()


@pytest.fixture
def server(live_server, transactional_db, settings, sqlite_waits_for_locks) -> Iterator[str]:
    settings.MEMSITE_LLM_PROVIDER = "offline"
    settings.OPENAI_API_KEY = None
    settings.OPENAI_BASE_URL = None
    settings.MEMSITE_EMBEDDINGS = "off"  # full text alone ranks passages: no model to load
    eager = app.conf.task_always_eager
    app.conf.task_always_eager = True  # first: nothing is published to the broker, not even by what follows
    default_space()  # made again if a transactional test emptied it, with its internal folders
    yield live_server.url
    app.conf.task_always_eager = eager


@pytest.fixture
def user(server):
    return UserFactory()


@pytest.fixture
def token(user) -> str:
    return token_for(user)


@pytest.fixture
def memsite(server, token, fake_time) -> Iterator[MemsiteClient]:
    """A client whose pauses are recorded in the fake time, never slept."""
    with MemsiteClient(server, token, sleep=fake_time.sleep, clock=fake_time.clock) as client:
        yield client
