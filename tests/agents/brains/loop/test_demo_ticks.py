"""The demo agent of `make run` ticking with no model (the offline provider): its neurons are
named by words and paths, its emotions and hormones move without pinning at an end and settle
back toward rest once nothing is left to do, and its thoughts are about its primary goal."""

import re

import pytest
from django.urls import reverse

from agents.brains import services as brain_services
from agents.brains.logic.affect import BASELINE_HORMONES
from agents.brains.logic.concepts import STOP_WORDS
from agents.brains.models import Brain, Neuron, Record, TickRun
from agents.demo import GOALS, demo_agent_seed
from memory.services.demo import demo_memory_seed
from memsite.demo import DEMO_USERNAME
from tests.factories import StaffFactory, acting, ticked_by

pytestmark = pytest.mark.django_db

FIRST_TICKS = 8  # a first look at the page, still exploring
TICKS = 40  # everything explored by about the 20th: the rest idle


@pytest.fixture
def demo_user(internal):
    return StaffFactory(username=DEMO_USERNAME)


@pytest.fixture
def demo(demo_user, monkeypatch):
    """The demo memory and agent, as `make run` seeds them, ticking for the demo user."""
    monkeypatch.setattr("agents.graphs.tasks.graph_work.delay", lambda **kwargs: None)
    by = acting(demo_user)
    demo_memory_seed(by=by)
    agent, _ = demo_agent_seed(by=by)
    ticked_by(agent, by)
    return agent


def ticked(agent, count: int) -> list[tuple[TickRun, Brain]]:
    """`count` ticks through the tick service, each with the brain as it left it."""
    return [(brain_services.tick_run(agent_id=agent.pk), Brain.objects.get(pk=agent.pk)) for _ in range(count)]


def thoughts_of(agent) -> list[str]:
    return list(Record.objects.filter(brain_id=agent.pk, kind="thought").order_by("seq").values_list("text", flat=True))


def test_a_few_ticks_show_words_as_neurons_moving_emotions_and_the_goal_on_the_page(demo, demo_user, client):
    first = ticked(demo, FIRST_TICKS)

    assert [run.status for run, _ in first] == ["done"] * FIRST_TICKS
    assert all(run.action in ("list_dir", "read_file") for run, _ in first)  # exploring
    joys = [brain.emotions["joy"] for _, brain in first]
    assert len(set(joys)) == FIRST_TICKS and all(0.0 < joy < 0.9 for joy in joys)

    thoughts = thoughts_of(demo)
    assert len(thoughts) == FIRST_TICKS
    assert all(f'For my goal "{GOALS[0]}"' in thought for thought in thoughts)
    assert any("I recalled /references/http-status-codes.md (Which HTTP status code" in t for t in thoughts)

    concepts = list(Neuron.objects.filter(brain_id=demo.pk, kind="concept").order_by("-strength", "id"))
    written = " ".join(thoughts).lower()
    for neuron in concepts:  # a word of the thoughts as written, never a stem nor a stop word
        assert neuron.key == f"concept:{neuron.label}" and neuron.label not in STOP_WORDS
        assert re.search(rf"\b{re.escape(neuron.label)}\b", written), neuron.label
    assert {"http", "status"} <= {neuron.label for neuron in concepts[:4]}
    paths = set(Neuron.objects.filter(brain_id=demo.pk, kind="path").values_list("label", flat=True))
    assert "/references/http-status-codes.md" in paths

    client.force_login(demo_user)
    page = client.get(reverse("agents:brain_detail", args=[demo.pk])).content.decode()
    assert '<td class="neuron-label">http</td>' in page and '<td class="neuron-label">status</td>' in page
    assert "For my goal &quot;Find which HTTP status code" in page
    emotions_now = re.search(r'<dd id="emotions-now">(.*?)</dd>', page, re.DOTALL)[1]
    assert f"joy {first[-1][1].emotions['joy']:.2f}" in emotions_now and "1.00" not in emotions_now


def test_many_ticks_pin_nothing_and_settle_back_toward_rest_once_nothing_is_left(demo):
    runs = ticked(demo, TICKS)

    for _, brain in runs:
        assert all(0.0 <= level < 1.0 for level in brain.emotions.values()), brain.emotions
        assert all(0.0 < level < 1.0 for level in brain.hormones.values()), brain.hormones
    idle = [number for number, (run, _) in enumerate(runs) if run.action == "idle"]
    assert idle and idle == list(range(idle[0], TICKS)) and TICKS - idle[0] >= 15  # the last ticks did nothing
    peak, last = runs[idle[0] - 1][1], runs[-1][1]
    assert 0.3 < peak.emotions["joy"] < 0.9 and last.emotions["joy"] < peak.emotions["joy"] / 4
    for name, rest in BASELINE_HORMONES.items():
        assert abs(last.hormones[name] - rest) < abs(peak.hormones[name] - rest) / 2, name

    thoughts = thoughts_of(demo)
    assert not any("idle" in thought.lower() for thought in thoughts)
    resting = thoughts[idle[0] :]
    assert all(
        t.startswith(f'Nothing new was left to explore. For my goal "{GOALS[0]}", I recalled /') for t in resting
    )
    assert len(set(resting)) > 1  # it goes over what it recalls in turn
