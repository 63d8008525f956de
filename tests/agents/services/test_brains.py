"""Capped writes to brains: every cap at its boundary, on the path every writer takes."""

from datetime import timedelta

import pytest
from django.utils import timezone

from agents.brain.caps import DEFAULT_CAPS
from agents.models import Brain, Explored, Goal, Neuron, Record, RecordKind, Synapse
from agents.services.brains import SELF, brain_create, brain_writing, goal_complete, goal_create
from memsite.errors import Conflict
from tests.factories import AgentFactory

pytestmark = pytest.mark.django_db
CAP = 3
T0 = timezone.now() - timedelta(days=1)


@pytest.fixture
def agent(settings):
    settings.MEMSITE_BRAIN_CAPS = {
        name: CAP for name in DEFAULT_CAPS if not name.endswith("_chars") and name != "plan_steps"
    } | {"self_summary_chars": 10, "last_error_chars": 10, "last_user_message_chars": 10, "entry_chars": 10}
    agent = AgentFactory()
    brain_create(agent=agent)
    return agent


def at(seconds: int):
    return T0 + timedelta(seconds=seconds)


def test_the_default_caps_are_the_seeds():
    assert {name: DEFAULT_CAPS[name] for name in (
        "thought", "inner_thought", "episode", "fact", "goal", "self_instruction", "path", "url",
        "neuron", "synapse", "chat", "log", "user_message", "self_summary_chars",
        "last_user_message_chars", "last_error_chars",
    )} == {
        "thought": 20_000, "inner_thought": 200, "episode": 2_000, "fact": 500, "goal": 20,
        "self_instruction": 10, "path": 10_000, "url": 10_000, "neuron": 100_000, "synapse": 500_000,
        "chat": 200, "log": 50_000, "user_message": 10, "self_summary_chars": 2_000,
        "last_user_message_chars": 500, "last_error_chars": 200,
    }


@pytest.mark.parametrize("kind", RecordKind.values)
def test_a_list_keeps_its_cap_and_trims_the_oldest_one_past_it(agent, kind):
    def texts():
        return list(Record.objects.filter(brain_id=agent.pk, kind=kind).order_by("seq").values_list("text", flat=True))

    with brain_writing(agent=agent) as write:
        for number in range(CAP):
            write.record(kind=kind, text=f"entry {number}", item={"text": f"entry {number}"}, at=at(number))
    assert texts() == ["entry 0", "entry 1", "entry 2"]  # at the cap: nothing trimmed

    with brain_writing(agent=agent) as write:
        write.record(kind=kind, text="entry 3", item={"text": "entry 3"}, at=at(3))
    assert texts() == ["entry 1", "entry 2", "entry 3"]


def test_entry_texts_are_clipped_at_their_cap(agent):
    with brain_writing(agent=agent) as write:
        exact = write.record(kind=RecordKind.THOUGHT, text="x" * 10, item="x" * 10, at=at(0))
        over = write.record(kind=RecordKind.THOUGHT, text="y" * 11, item="y" * 11, at=at(1))
    assert exact.text == "x" * 10 and exact.data == "x" * 10
    assert over.text == "y" * 9 + "\u2026" and over.data == "y" * 9 + "\u2026"


@pytest.mark.parametrize("field", ["self_summary", "last_error", "last_user_message"])
def test_state_texts_are_clipped_at_their_cap(agent, field):
    with brain_writing(agent=agent) as write:
        write.set(**{field: "a" * 10})
    assert getattr(Brain.objects.get(pk=agent.pk), field) == "a" * 10
    with brain_writing(agent=agent) as write:
        write.set(**{field: "b" * 11})
    assert getattr(Brain.objects.get(pk=agent.pk), field) == "b" * 9 + "\u2026"


def test_a_plan_keeps_at_most_three_steps(agent):
    with brain_writing(agent=agent) as write:
        write.set(plan=["one", "two", "three", "four"])
    assert Brain.objects.get(pk=agent.pk).plan == ["one", "two", "three"]


@pytest.mark.parametrize("kind", Explored.Kind.values)
def test_explored_keeps_its_cap_and_forgets_the_least_recently_explored(agent, kind):
    count = "path_count" if kind == Explored.Kind.PATH else "url_count"
    with brain_writing(agent=agent) as write:
        for number in range(CAP):
            write.explored(kind=kind, key=f"/k{number}", summary="", at=at(number))
        write.explored(kind=kind, key="/k0", summary="again", at=at(10))  # seen again: newest
    assert getattr(Brain.objects.get(pk=agent.pk), count) == CAP

    with brain_writing(agent=agent) as write:
        write.explored(kind=kind, key="/k3", summary="", at=at(11))
    keys = set(Explored.objects.filter(brain_id=agent.pk, kind=kind).values_list("key", flat=True))
    assert keys == {"/k0", "/k2", "/k3"}
    assert getattr(Brain.objects.get(pk=agent.pk), count) == CAP


def test_neurons_keep_their_cap_never_forget_self_and_take_their_synapses_along(agent):
    with brain_writing(agent=agent) as write:
        self_neuron = Neuron.objects.get(brain_id=agent.pk, key=SELF)
        old = write.neuron(kind="concept", label="old", at=at(0))
        new = write.neuron(kind="concept", label="new", at=at(5))
        write.connect(self_neuron, old, at=at(1))
    Neuron.objects.filter(pk=self_neuron.pk).update(last_used=T0 - timedelta(days=30))  # the least used of all
    assert Neuron.objects.filter(brain_id=agent.pk).count() == CAP

    with brain_writing(agent=agent) as write:
        write.neuron(kind="path", label="/a", at=at(6))
    assert set(Neuron.objects.filter(brain_id=agent.pk).values_list("key", flat=True)) == {SELF, new.key, "path:/a"}
    assert not Synapse.objects.filter(brain_id=agent.pk).exists()
    brain = Brain.objects.get(pk=agent.pk)
    assert (brain.neuron_count, brain.synapse_count) == (CAP, 0)


def test_synapses_keep_their_cap_and_forget_the_least_recently_used(agent, settings):
    settings.MEMSITE_BRAIN_CAPS["neuron"] = 10
    with brain_writing(agent=agent) as write:
        hub = write.neuron(kind="concept", label="hub", at=at(0))
        leaves = [write.neuron(kind="concept", label=f"leaf{number}", at=at(0)) for number in range(4)]
        for number, leaf in enumerate(leaves[:CAP]):
            write.connect(hub, leaf, at=at(number))
        write.connect(hub, leaves[0], at=at(10))  # used again: now the newest
    assert Synapse.objects.filter(brain_id=agent.pk).count() == CAP

    with brain_writing(agent=agent) as write:
        write.connect(hub, leaves[3], at=at(11))
    targets = set(Synapse.objects.filter(brain_id=agent.pk).values_list("target__key", flat=True))
    assert targets == {leaves[0].key, leaves[2].key, leaves[3].key}
    assert Brain.objects.get(pk=agent.pk).synapse_count == CAP


def test_goals_at_the_cap_make_room_by_the_oldest_done_goal_or_are_refused(agent):
    goals = [goal_create(agent=agent, text=f"goal {number}") for number in range(CAP)]
    with pytest.raises(Conflict):
        goal_create(agent=agent, text="one too many")
    assert Goal.objects.filter(brain_id=agent.pk).count() == CAP

    goal_complete(agent=agent, goal_id=goals[1].pk)
    goal_create(agent=agent, text="room made")
    assert list(Goal.objects.filter(brain_id=agent.pk).order_by("id").values_list("text", flat=True)) == [
        "goal 0", "goal 2", "room made",
    ]
