"""Fixtures of the tools' tests: principals of the default space, and a call of a tool as one."""

from typing import Any

import pytest

from memory import services
from memory.models import Search
from memsite.spaces.logic import Role
from memsite.spaces.principals import Principal
from tests.factories import UserFactory, default_space
from tools.registry import tool_call


def principal(role: Role = Role.EDITOR, write_under: str = "", space=None) -> Principal:
    """A session's principal (no token) of a new member, with `role` in `space` (the default)."""
    space = space or default_space()
    return Principal(UserFactory(role=role), space, role, write_under, None)


@pytest.fixture
def editor(db) -> Principal:
    return principal(Role.EDITOR)


@pytest.fixture
def reader(db) -> Principal:
    return principal(Role.READER)


@pytest.fixture
def call(editor):
    """Calls a tool as the editor unless told as whom (`as_=`)."""

    def run(tool: str, /, as_: Principal | None = None, **arguments: Any) -> dict:
        return tool_call(as_ or editor, tool, arguments)

    return run


@pytest.fixture(autouse=True)
def offline(settings):
    """The offline provider and full text alone: nothing reaches a model or loads one."""
    settings.MEMSITE_LLM_PROVIDER = "offline"
    settings.OPENAI_API_KEY = None
    settings.OPENAI_BASE_URL = None
    settings.MEMSITE_EMBEDDINGS = "off"


@pytest.fixture
def inline_worker(monkeypatch):
    """Stands in for the Celery worker and the clock while a tool waits for a search: its first
    pause runs every queued search to its end (the test's transaction never commits, so no task
    is ever enqueued), and a pause moves the clock on instead of sleeping. The pauses taken."""
    pauses: list[float] = []

    def pause(seconds: float) -> None:
        if not pauses:
            for search_id in Search.objects.filter(status=Search.Status.QUEUED).values_list("pk", flat=True):
                services.search_run(search_id=search_id)
        pauses.append(seconds)

    monkeypatch.setattr("memory.selectors.searches.sleep", pause)
    monkeypatch.setattr("memory.selectors.searches.monotonic", lambda: sum(pauses))
    return pauses
