import pytest
from django.http import QueryDict
from django.urls import reverse

from agents.context import services
from agents.context.forms import ContextForm
from tests.agents.conftest import HTMX
from tests.factories import AgentFactory


def test_the_context_form_leaves_what_is_not_asked_to_the_agent():
    form = ContextForm(QueryDict("strategy=importance"))

    assert form.is_valid()
    assert form.cleaned_data == {"model": None, "strategy": "importance"}


@pytest.mark.parametrize(
    "query, error",
    [
        ("strategy=newest_first", "strategy must be one of fifo, sliding_window"),
        ("strategy=", "strategy must be one of fifo, sliding_window"),
        ("model=%20%20", "model must be a model name of at most 128 characters."),
        (f"model={'m' * 129}", "model must be a model name of at most 128 characters."),
    ],
)
def test_the_context_form_refuses_what_assembly_would(query, error):
    form = ContextForm(QueryDict(query))

    assert not form.is_valid()
    [[message]] = form.errors.values()
    assert message.startswith(error)


@pytest.mark.django_db
def test_a_bad_context_query_is_refused_before_assembly(user_client, monkeypatch):
    agent = AgentFactory()
    monkeypatch.setattr(services, "context_build", pytest.fail)

    response = user_client.get(reverse("agents:agent_context", args=[agent.pk]), {"strategy": "newest_first"}, **HTMX)

    assert response.status_code == 400
    assert "strategy must be one of" in response.content.decode()
