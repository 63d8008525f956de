import pytest

from agents.context.models import Agent
from tests.factories import AgentFactory, default_space, ticked_by
from tests.fake_openai import FakeOpenAI


@pytest.fixture(autouse=True)
def brain_settings(settings):
    """The offline provider unless a test asks for the fake server; no retries or repairs, so
    one scripted reply is one call; a deep reflection every 5th tick; reads cut at 200 tokens."""
    settings.MEMSITE_LLM_PROVIDER = "offline"
    settings.OPENAI_API_KEY = None
    settings.OPENAI_BASE_URL = None
    settings.MEMSITE_LLM_MAX_RETRIES = 0
    settings.MEMSITE_LLM_MAX_REPAIRS = 0
    settings.MEMSITE_TICK_LEASE_S = 300
    settings.MEMSITE_TICK_DEEP_REFLECT_EVERY = 5
    settings.MEMSITE_TICK_READ_TOKENS = 200
    settings.MEMSITE_FETCH_ALLOWED_HOSTS = ["docs.example.org"]
    settings.MEMSITE_FETCH_MAX_REDIRECTS = 3
    settings.MEMSITE_FETCH_TIMEOUT_S = 5
    settings.MEMSITE_FETCH_MAX_BYTES = 100_000
    return settings


@pytest.fixture
def llm(brain_settings, openai_gateway: FakeOpenAI) -> FakeOpenAI:
    return openai_gateway


@pytest.fixture
def tree(transactional_db):
    """The internal folders, as the migration makes them (transactional tests empty the tables)."""
    default_space()  # made again if emptied, and with it its internal folders


@pytest.fixture
def agent(db) -> Agent:
    """An agent whose ticks act for a member (who set it ticking, its ticking paused)."""
    agent = AgentFactory(name="scout", model="gpt-4")
    ticked_by(agent)
    return agent


@pytest.fixture
def searches_queued(monkeypatch) -> list[dict]:
    queued: list[dict] = []
    monkeypatch.setattr("memory.tasks.search_run.delay", lambda **kwargs: queued.append(kwargs))
    return queued
