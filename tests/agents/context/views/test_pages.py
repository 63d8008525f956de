import dataclasses
import json
import re

import pytest
from django.urls import reverse

from agents.context import services, views
from agents.context.models import Agent, Message
from agents.context.selectors.assembly import context_assemble
from tests.agents.conftest import HTMX
from tests.agents.support import WINDOW, say
from tests.factories import AgentFactory

pytestmark = pytest.mark.django_db

SCRIPT = "<script>alert(1)</script>"
ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;"


def page_url(agent: Agent, **query: str) -> str:
    url = reverse("agents:agent_detail", args=[agent.pk])
    return f"{url}?{'&'.join(f'{key}={value}' for key, value in query.items())}" if query else url


def context_url(agent: Agent) -> str:
    return reverse("agents:agent_context", args=[agent.pk])


def legend(html: str) -> dict[str, int]:
    """The tokens the bar's legend gives each tier, and the free space."""
    return {tier: int(tokens) for tier, tokens in re.findall(r'<li data-tier="([^"]+)" data-tokens="(-?\d+)"', html)}


def message_positions(html: str) -> list[int]:
    return [int(position) for position in re.findall(r'id="message-(\d+)"', html)]


@pytest.fixture
def agent():
    """gpt-4 (exact counts) in a 1,000-token window: target 600, warning 800, trigger 900."""
    return AgentFactory(model="gpt-4", turn_input_limit=WINDOW, window_turns=2)


# -- access ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "method, name, with_agent",
    [
        ("get", "agents:agent_list", False),
        ("post", "agents:agent_create", False),
        ("get", "agents:agent_detail", True),
        ("get", "agents:agent_context", True),
        ("get", "agents:message_list", True),
        ("post", "agents:message_append", True),
    ],
)
def test_pages_need_a_login(client, agent, method, name, with_agent):
    url = reverse(name, args=[agent.pk] if with_agent else [])
    data = {"name": "intruder", "model": "gpt-4", "role": "user", "content": "hello"}

    response = getattr(client, method)(url, data)

    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
    assert list(Agent.objects.values_list("name", flat=True)) == [agent.name]
    assert not Message.objects.exists()


def test_writes_need_post(user_client, agent):
    assert user_client.get(reverse("agents:agent_create")).status_code == 405
    assert user_client.get(reverse("agents:message_append", args=[agent.pk])).status_code == 405


def test_an_unknown_agent_is_not_found(user_client):
    assert user_client.get(reverse("agents:agent_detail", args=[999])).status_code == 404
    assert user_client.get(reverse("agents:agent_context", args=[999]), **HTMX).status_code == 404


def test_the_nav_links_to_the_agents(user_client):
    html = user_client.get(reverse("agents:agent_list")).content.decode()
    assert f'<a href="{reverse("agents:agent_list")}" aria-current="page">Agents</a>' in html


# -- the list ----------------------------------------------------------------------------------


def test_the_list_shows_each_agents_model_strategy_and_counters(user_client):
    talker = AgentFactory(name="talker", model="gpt-4", strategy="importance")
    say(talker, 10)
    say(talker, 20)
    AgentFactory(name="quiet", model="gpt-4o")

    html = user_client.get(reverse("agents:agent_list")).content.decode()

    row = re.search(rf'<tr id="agent-{talker.pk}">(.*?)</tr>', html, re.DOTALL).group(1)
    assert "talker" in row and "gpt-4" in row and "importance" in row
    assert re.findall(r"<td>(\d+)</td>", row) == ["2", "30"]
    assert reverse("agents:agent_detail", args=[talker.pk]) in row
    assert "quiet" in html and "gpt-4o" in html


def test_the_list_is_paginated(user_client, monkeypatch):
    monkeypatch.setattr(views, "AGENTS_PAGE_SIZE", 2)
    for name in ("a1", "a2", "a3"):
        AgentFactory(name=name)
    url = reverse("agents:agent_list")

    first = user_client.get(url).content.decode()
    second = user_client.get(url, {"page": 2}).content.decode()

    assert ">a1<" in first and ">a2<" in first and ">a3<" not in first
    assert ">a3<" in second and "page 2 of 2" in second


def test_the_list_costs_the_same_queries_whatever_the_rows(user_client, django_assert_max_num_queries):
    for number in range(20):
        AgentFactory(name=f"agent-row-{number}")
    with django_assert_max_num_queries(7):  # with the questions badge's COUNT
        html = user_client.get(reverse("agents:agent_list")).content.decode()
    assert html.count('<tr id="agent-') == 20


# -- creating an agent -------------------------------------------------------------------------


def test_creating_an_agent_goes_to_its_page(user_client):
    response = user_client.post(
        reverse("agents:agent_create"),
        {"name": "scout", "model": "gpt-4o", "instructions": "Be brief."},
    )

    agent = Agent.objects.get(name="scout")
    assert response.status_code == 302 and response["Location"] == page_url(agent)
    assert (agent.model, agent.instructions) == ("gpt-4o", "Be brief.")
    assert "Created agent &#x27;scout&#x27;." in user_client.get(response["Location"]).content.decode()


@pytest.mark.parametrize(
    "data, status, error",
    [
        ({"name": "", "model": "gpt-4"}, 400, "Name: This field is required."),
        (
            {"name": "x" * 201, "model": "gpt-4"},
            400,
            "Name: Ensure this value has at most 200 characters",
        ),
        (
            {"name": "taken", "model": "gpt-4"},
            409,
            "There is already an agent named &#x27;taken&#x27;.",
        ),
        (
            {"name": "new", "model": "gpt-4", "instructions": "Hi $who"},
            400,
            "instructions use $who",
        ),
        ({"name": "   ", "model": "gpt-4"}, 400, "Name: This field is required."),
    ],
)
def test_a_refused_agent_shows_the_error_in_the_form_and_writes_nothing(user_client, data, status, error):
    AgentFactory(name="taken")

    response = user_client.post(reverse("agents:agent_create"), data)

    assert response.status_code == status
    html = response.content.decode()
    assert error in html and 'class="alert alert-error"' in html
    assert f'value="{data["model"]}"' in html  # what was typed stays in the form
    assert list(Agent.objects.values_list("name", flat=True)) == ["taken"]


# -- an agent's page ---------------------------------------------------------------------------


def test_the_page_shows_the_names_of_context_variables_and_only_the_values_sent(user_client):
    agent = AgentFactory(
        name="keeper",
        model="gpt-4",
        instructions="Answer in $language.",
        context_variables={"language": "French", "api_secret": "hunter2-do-not-show"},
        strategy="sliding_window",
        conversation_token_budget=50_000,
    )

    html = user_client.get(page_url(agent)).content.decode()

    assert "<h1>keeper</h1>" in html
    assert "Answer in $language." in html
    assert "<code>api_secret</code>, <code>language</code>" in html
    assert "hunter2-do-not-show" not in html
    # A value the instructions name is sent, and the messages as sent show it.
    assert html.count("French") == 1 and '<pre class="code sent-content">Answer in French.</pre>' in html
    assert "sliding_window" in html and "50000 tokens" in html


def test_the_page_shows_the_newest_messages_first_and_loads_older_ones(user_client, agent, monkeypatch):
    monkeypatch.setattr(views, "MESSAGES_PAGE_SIZE", 4)
    for number in range(1, 11):
        services.message_append(agent=agent, role="user", content=f"message number {number}")

    html = user_client.get(page_url(agent)).content.decode()
    assert message_positions(html) == [10, 9, 8, 7]
    older = reverse("agents:message_list", args=[agent.pk])
    assert f'hx-get="{older}?before=7"' in html

    partial = user_client.get(older, {"before": 7}, **HTMX)
    assert message_positions(partial.content.decode()) == [6, 5, 4, 3]
    assert "<html" not in partial.content.decode() and f"{older}?before=3" in partial.content.decode()
    last = user_client.get(older, {"before": 3}, **HTMX).content.decode()
    assert message_positions(last) == [2, 1] and "Load older" not in last

    # Without htmx, the older page is the agent's page at that point.
    redirect = user_client.get(older, {"before": 7})
    assert redirect.status_code == 302 and redirect["Location"] == page_url(agent, before="7") + "#conversation"
    assert message_positions(user_client.get(page_url(agent, before="7")).content.decode()) == [
        6,
        5,
        4,
        3,
    ]


def test_the_page_costs_the_same_queries_however_long_the_conversation(
    user_client, agent, django_assert_max_num_queries
):
    say(agent, 10)
    services.checkpoint_create(agent=agent)
    with django_assert_max_num_queries(20) as short:
        user_client.get(page_url(agent))
    for _ in range(40):
        say(agent, 10)
        services.checkpoint_create(agent=agent)

    with django_assert_max_num_queries(len(short.captured_queries)):
        html = user_client.get(page_url(agent)).content.decode()

    assert len(message_positions(html)) == views.MESSAGES_PAGE_SIZE


def test_the_page_lists_checkpoints_newest_first(user_client, agent):
    say(agent, 10)
    services.checkpoint_create(agent=agent)
    say(agent, 10)
    services.checkpoint_create(agent=agent)

    html = user_client.get(page_url(agent)).content.decode()

    assert re.findall(r'<tr id="checkpoint-(\d+)"><td>\d+</td><td>(\d+)</td>', html) == [
        ("2", "2"),
        ("1", "1"),
    ]
    assert 'Checkpoints <span class="muted">(2)</span>' in html


def test_names_and_messages_are_escaped(user_client):
    agent = AgentFactory(name=SCRIPT, model="gpt-4")
    services.message_append(agent=agent, role="user", content=SCRIPT, sender=SCRIPT)

    for html in (
        user_client.get(reverse("agents:agent_list")).content.decode(),
        user_client.get(page_url(agent)).content.decode(),
        user_client.get(reverse("agents:message_list", args=[agent.pk]), **HTMX).content.decode(),
    ):
        assert SCRIPT not in html and ESCAPED in html


# -- the context-window view -------------------------------------------------------------------


def test_the_bar_shows_every_tier_the_free_space_and_what_was_dropped(user_client, agent):
    services.agent_update(agent=agent, changes={"instructions": "You are terse."})
    say(agent, 50, pinned=True)
    for _ in range(9):
        say(agent, 100)
    report = context_assemble(agent=agent).report
    assert report.compacted and report.dropped  # the window is small enough to cut

    response = user_client.get(context_url(agent), **HTMX)

    assert response.status_code == 200
    html = response.content.decode()
    assert "<html" not in html and 'id="context-report"' in html
    assert legend(html) == {**report.tiers, "free": report.free}
    assert report.tiers["system"] > 0 and report.tiers["pinned"] == 50
    for tier, tokens in report.tiers.items():
        if tokens:
            assert f'data-tier="{tier}" title="{views.tier_label(tier)}: {tokens} tokens"' in html
    for key, at in (
        ("warning", report.warning_at),
        ("trigger", report.trigger_at),
        ("target", report.target_at),
    ):
        assert f'class="context-marker context-marker-{key}" style="left: {100 * at / WINDOW:.3f}%"' in html
    assert f"{report.total} of {WINDOW} tokens" in html
    rows = re.findall(
        r"<tr><td>([^<]*)</td><td>([^<]*)</td><td>(\d+)</td><td>(\d+)</td><td>([^<]*)</td></tr>",
        html,
    )
    assert rows == [
        (
            views.tier_label(entry.tier),
            f"messages {entry.first_position}–{entry.last_position}",
            str(entry.count),
            str(entry.tokens),
            entry.detail,
        )
        for entry in report.dropped
    ]
    # The range runs from the start; the pinned message in it stays and is not counted.
    assert rows[0][:4] == ("conversation", "messages 1–4", "3", "300")


def test_the_agents_page_shows_the_same_report(user_client, agent):
    for _ in range(10):
        say(agent, 100)
    report = context_assemble(agent=agent).report

    html = user_client.get(page_url(agent)).content.decode()

    assert legend(html) == {**report.tiers, "free": report.free}
    assert f'hx-get="{context_url(agent)}"' in html


def test_switching_the_strategy_reassembles_and_pushes_the_pages_url(user_client, agent):
    for _ in range(4):
        say(agent, 100)
        say(agent, 50, role="assistant")

    fifo = user_client.get(context_url(agent), {"strategy": "fifo"}, **HTMX)
    sliding = user_client.get(context_url(agent), {"strategy": "sliding_window", "model": "gpt-4"}, **HTMX)

    assert legend(fifo.content.decode())["short_term"] == 600
    html = sliding.content.decode()
    assert legend(html)["short_term"] == 300  # the last two turns
    assert "before the last turns the sliding window keeps" in html
    assert sliding["HX-Push-Url"] == page_url(agent, model="gpt-4", strategy="sliding_window")
    # The page at that address shows the same choice.
    page = user_client.get(page_url(agent, strategy="sliding_window")).content.decode()
    assert '<option value="sliding_window" selected>' in page and legend(page)["short_term"] == 300


def test_without_htmx_the_context_address_is_the_agents_page(user_client, agent):
    response = user_client.get(context_url(agent), {"strategy": "importance"})
    assert response.status_code == 302 and response["Location"] == page_url(agent, strategy="importance")


def test_a_new_tier_appears_without_a_template_change(user_client, agent, monkeypatch):
    say(agent, 100)

    def with_notes_tier(**arguments):
        assembled = context_assemble(**arguments)
        report = assembled.report
        report = dataclasses.replace(report, tiers={**report.tiers, "scratch_notes": 42}, free=report.free - 42)
        return dataclasses.replace(assembled, report=report)

    monkeypatch.setattr(services, "context_build", with_notes_tier)

    html = user_client.get(context_url(agent), **HTMX).content.decode()

    assert legend(html)["scratch_notes"] == 42
    assert 'data-tier="scratch_notes" title="scratch notes: 42 tokens"' in html


def test_a_spent_conversation_budget_is_a_message_with_its_numbers(user_client):
    agent = AgentFactory(model="gpt-4", conversation_token_budget=50)
    say(agent, 60)

    response = user_client.get(context_url(agent), **HTMX)

    assert response.status_code == 422
    html = response.content.decode()
    assert "The conversation has spent its token budget: 60 of 50 tokens." in html
    assert "<dt>conversation tokens</dt><dd>60</dd>" in html
    assert "<dt>conversation token budget</dt><dd>50</dd>" in html
    assert 'class="context-bar"' not in html
    # The page itself still opens, with the same message where the bar would be.
    page = user_client.get(page_url(agent))
    assert page.status_code == 200 and "spent its token budget" in page.content.decode()


def test_pinned_messages_over_a_small_models_window_are_a_message(user_client):
    """test-1k (tests/agents/conftest.py): 1,100 tokens of context less 100 reserved."""
    agent = AgentFactory(model="gpt-4", reserved_output_tokens=100)
    say(agent, 1_200, pinned=True)
    assert user_client.get(context_url(agent), **HTMX).status_code == 200

    response = user_client.get(context_url(agent), {"model": "test-1k"}, **HTMX)

    assert response.status_code == 422
    html = response.content.decode()
    assert "The instructions and pinned messages need 1203 tokens; the window holds 1000" in html
    assert "<dt>needed</dt><dd>1203</dd>" in html and "<dt>window</dt><dd>1000</dd>" in html
    assert "HX-Push-Url" not in response


@pytest.mark.parametrize(
    "query, error",
    [
        ({"strategy": "newest_first"}, "strategy must be one of"),
        ({"model": "m" * 200}, "model must be a model name of at most 128 characters."),
        ({"model": "  "}, "model must be a model name"),
    ],
)
def test_a_bad_model_or_strategy_is_a_message(user_client, agent, query, error):
    response = user_client.get(context_url(agent), query, **HTMX)

    assert response.status_code == 400
    html = response.content.decode()
    assert error in html and 'role="alert"' in html and 'class="context-bar"' not in html


def test_a_model_name_is_escaped_in_the_report(user_client, agent):
    html = user_client.get(context_url(agent), {"model": SCRIPT}, **HTMX).content.decode()
    assert SCRIPT not in html and ESCAPED in html


# -- appending a message -----------------------------------------------------------------------


def test_appending_with_htmx_shows_the_message_and_asks_the_report_to_refresh(user_client, agent):
    say(agent, 20)

    response = user_client.post(
        reverse("agents:message_append", args=[agent.pk]),
        {"role": "assistant", "content": f"Noted. {SCRIPT}", "pinned": "on"},
        **HTMX,
    )

    assert response.status_code == 200
    message = Message.objects.get(agent=agent, position=2)
    assert (message.role, message.content, message.pinned) == (
        "assistant",
        f"Noted. {SCRIPT}",
        True,
    )
    html = response.content.decode()
    assert "Appended message 2." in html and message_positions(html) == [2, 1]
    assert SCRIPT not in html and f"Noted. {ESCAPED}" in html
    assert json.loads(response["HX-Trigger"]) == {views.CONVERSATION_CHANGED: {}}
    assert '<dl class="facts" id="agent-counters" hx-swap-oob="true">' in html
    assert '<dd id="message-count">2</dd>' in html


def test_appending_without_htmx_redirects_to_the_page(user_client, agent):
    response = user_client.post(reverse("agents:message_append", args=[agent.pk]), {"role": "user", "content": "hi"})

    assert response.status_code == 302 and response["Location"] == page_url(agent)
    assert Message.objects.get(agent=agent).content == "hi"


@pytest.mark.parametrize(
    "data, status, error",
    [
        ({"role": "tool", "content": "result"}, 400, "Role: Select a valid choice."),
        ({"role": "user", "content": ""}, 400, "Content: This field is required."),
        ({"role": "user", "content": "   "}, 400, "A user message needs content."),
        (
            {"role": "user", "content": "x" * 100_001},
            400,
            "Content: Ensure this value has at most 100000 characters",
        ),
    ],
)
@pytest.mark.parametrize("htmx", [True, False])
def test_a_refused_message_shows_the_error_in_the_form_and_writes_nothing(
    user_client, agent, data, status, error, htmx
):
    response = user_client.post(reverse("agents:message_append", args=[agent.pk]), data, **(HTMX if htmx else {}))

    assert response.status_code == status
    html = response.content.decode()
    assert error in html and 'class="alert alert-error"' in html
    assert ("<html" in html) is not htmx
    assert not Message.objects.filter(agent=agent).exists()
    agent.refresh_from_db()
    assert agent.message_count == 0


def test_an_unanswered_tool_call_refuses_the_next_message(user_client, agent):
    calls = [{"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}]
    services.message_append(agent=agent, role="assistant", tool_calls=calls)

    response = user_client.post(
        reverse("agents:message_append", args=[agent.pk]),
        {"role": "user", "content": "next"},
        **HTMX,
    )

    assert response.status_code == 400
    assert "wait for their results" in response.content.decode()
    assert Message.objects.filter(agent=agent).count() == 1


def test_the_conversation_shows_custom_tools_function_calls_refusals_and_audio(user_client, agent):
    custom = {"id": "call_c", "type": "custom", "custom": {"name": "grep", "input": "deploy"}}
    services.message_append(agent=agent, role="assistant", tool_calls=[custom])
    services.message_append(agent=agent, role="tool", tool_call_id="call_c", content="ops/deploy.sh")
    services.message_append(agent=agent, role="assistant", function_call={"name": "lookup", "arguments": "{}"})
    services.message_append(agent=agent, role="function", name="lookup", content="port 8443")
    services.message_append(agent=agent, role="assistant", refusal="Not on a Friday.")
    services.message_append(agent=agent, role="assistant", audio={"id": "audio_1", "transcript": "Done."})

    html = user_client.get(page_url(agent)).content.decode()

    assert "<code>grep(deploy)</code>" in html and "<code>lookup({})</code>" in html
    assert "result of <code>lookup</code>" in html
    assert "Refused: Not on a Friday." in html and "Audio: Done." in html


def test_summarize_queues_the_summary_then_shows_it_in_the_bar(
    user_client, agent, monkeypatch, django_capture_on_commit_callbacks
):
    queued = []
    monkeypatch.setattr("agents.context.tasks.summary_write.delay", lambda summary_id: queued.append(summary_id))
    for _ in range(8):
        say(agent, 100)

    with django_capture_on_commit_callbacks(execute=True):
        pending = user_client.get(context_url(agent), {"strategy": "summarize"}, **HTMX).content.decode()

    assert "cut while a summary of them is written" in pending and len(queued) == 1
    services.summary_write(summary_id=queued[0])

    html = user_client.get(context_url(agent), {"strategy": "summarize"}, **HTMX).content.decode()

    assert legend(html)["summary"] > 0
    assert 'id="context-summary">of messages 1–3' in html and "replaced by the stored summary" in html
    assert 'class="badge badge-heuristic"' in html  # the offline provider wrote the summary
