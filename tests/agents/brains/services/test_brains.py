"""Capped writes to brains: every cap at its boundary, on the path every writer takes."""

from datetime import timedelta

import pytest
from django.db import connection
from django.db.migrations.loader import MigrationLoader
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from agents.brains.logic.caps import DEFAULT_CAPS
from agents.brains.models import Brain, Explored, Goal, Neuron, Record, RecordKind, Synapse
from agents.brains.services.brains import (
    SELF,
    brain_create,
    brain_writing,
    goal_complete,
    goal_create,
)
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
    assert {
        name: DEFAULT_CAPS[name]
        for name in (
            "thought",
            "inner_thought",
            "episode",
            "fact",
            "goal",
            "self_instruction",
            "path",
            "url",
            "neuron",
            "synapse",
            "chat",
            "log",
            "user_message",
            "self_summary_chars",
            "last_user_message_chars",
            "last_error_chars",
        )
    } == {
        "thought": 20_000,
        "inner_thought": 200,
        "episode": 2_000,
        "fact": 500,
        "goal": 20,
        "self_instruction": 10,
        "path": 10_000,
        "url": 10_000,
        "neuron": 100_000,
        "synapse": 500_000,
        "chat": 200,
        "log": 50_000,
        "user_message": 10,
        "self_summary_chars": 2_000,
        "last_user_message_chars": 500,
        "last_error_chars": 200,
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


def test_entries_appended_together_keep_every_cap_in_one_insert_and_one_delete(agent, django_assert_num_queries):
    with brain_writing(agent=agent) as write:
        write.record(kind=RecordKind.LOG, text="log 0", item={"message": "log 0"}, at=at(0))
        entries = [(RecordKind.THOUGHT, f"t{n}", {"text": f"t{n}"}) for n in range(5)]
        entries += [(RecordKind.LOG, f"log {n}", {"message": f"log {n}"}) for n in (1, 2)]
        with django_assert_num_queries(2):
            write.records(entries, at=at(1))

    kept = Record.objects.filter(brain_id=agent.pk).order_by("kind", "seq").values_list("kind", "seq", "text")
    assert list(kept) == [
        ("log", 1, "log 0"),
        ("log", 2, "log 1"),
        ("log", 3, "log 2"),
        ("thought", 3, "t2"),
        ("thought", 4, "t3"),
        ("thought", 5, "t4"),
    ]
    brain = Brain.objects.get(pk=agent.pk)
    assert (brain.record_seqs, brain.record_floors) == ({"log": 3, "thought": 5}, {"thought": 2})

    with brain_writing(agent=agent) as write:  # both past their caps: one DELETE still
        with django_assert_num_queries(2):
            write.records(
                [(RecordKind.THOUGHT, "t5", {"text": "t5"}), (RecordKind.LOG, "log 3", {"message": "log 3"})], at=at(2)
            )
    assert Brain.objects.get(pk=agent.pk).record_floors == {"log": 1, "thought": 3}
    kept = Record.objects.filter(brain_id=agent.pk).order_by("kind", "seq").values_list("kind", "seq")
    assert list(kept) == [("log", 2), ("log", 3), ("log", 4), ("thought", 4), ("thought", 5), ("thought", 6)]


def test_a_trim_reads_only_past_the_last_one_and_a_lowered_cap_takes_the_rest_at_once(agent, settings):
    def thoughts(count: int, start: int) -> None:
        with brain_writing(agent=agent) as write:
            write.records(
                [(RecordKind.THOUGHT, f"t{n}", {"text": f"t{n}"}) for n in range(start, start + count)], at=at(start)
            )

    def kept() -> list[int]:
        return list(
            Record.objects.filter(brain_id=agent.pk, kind=RecordKind.THOUGHT)
            .order_by("seq")
            .values_list("seq", flat=True)
        )

    thoughts(5, 1)
    assert kept() == [3, 4, 5] and Brain.objects.get(pk=agent.pk).record_floors == {"thought": 2}

    with CaptureQueriesContext(connection) as queries:
        thoughts(1, 6)
    trim = next(query["sql"] for query in queries if query["sql"].startswith("DELETE"))
    assert '"seq" > 2' in trim and '"seq" <= 3' in trim  # the one entry past the cap, not from 0
    assert kept() == [4, 5, 6] and Brain.objects.get(pk=agent.pk).record_floors == {"thought": 3}

    settings.MEMSITE_BRAIN_CAPS = {**settings.MEMSITE_BRAIN_CAPS, "thought": 1}
    thoughts(1, 7)
    assert kept() == [7] and Brain.objects.get(pk=agent.pk).record_floors == {"thought": 6}


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
        assert [write.explored(kind=kind, key=f"/k{number}", summary="", at=at(number)) for number in range(CAP)] == [
            True
        ] * CAP
        assert write.explored(kind=kind, key="/k0", summary="again", at=at(10)) is False  # seen again: newest
    assert getattr(Brain.objects.get(pk=agent.pk), count) == CAP

    with brain_writing(agent=agent) as write:
        assert write.explored(kind=kind, key="/k3", summary="", at=at(11)) is True
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
        "goal 0",
        "goal 2",
        "room made",
    ]


def test_the_last_seq_of_each_list_is_kept_on_the_brain_and_the_newest_are_read_in_one_query(
    agent, django_assert_num_queries
):
    from agents.brains.selectors.ticks import brain_records

    with brain_writing(agent=agent) as write:
        for number in range(5):
            write.record(kind=RecordKind.THOUGHT, text=f"t{number}", item={"text": f"t{number}"}, at=at(number))
        write.record(kind=RecordKind.EPISODE, text="e0", item={"summary": "e0"}, at=at(5))
    brain = Brain.objects.get(pk=agent.pk)
    assert brain.record_seqs == {"thought": 5, "episode": 1}

    with django_assert_num_queries(1):
        newest = brain_records(brain=brain, counts={"thought": 2, "episode": 5, "fact": 3, "log": 0})
    assert {kind: [record.text for record in records] for kind, records in newest.items()} == {
        "thought": ["t3", "t4"],
        "episode": ["e0"],
        "fact": [],
        "log": [],
    }


def test_a_brain_view_reads_the_lists_it_is_asked_for_and_names_the_ones_it_has(agent):
    from agents.brains.selectors.ticks import brain_view

    with brain_writing(agent=agent) as write:
        write.records([(RecordKind.THOUGHT, f"t{n}", {"text": f"t{n}"}) for n in range(3)], at=at(0))
    brain = Brain.objects.get(pk=agent.pk)

    view = brain_view(brain=brain, thoughts=2, facts=0)
    assert [record.text for record in view.thoughts] == ["t1", "t2"] and view.facts == []
    with pytest.raises(TypeError, match="no list thought; its lists are episodes, facts"):
        brain_view(brain=brain, thought=2)


def _models_at(migration: str):
    """The models as the agents app's migration saw them: they have moved to other apps since."""
    return MigrationLoader(connection).project_state(("agents", migration)).apps


def test_the_migration_fills_the_last_seqs_from_the_records(agent):
    import importlib

    with brain_writing(agent=agent) as write:
        for number in range(4):
            write.record(kind=RecordKind.LOG, text=f"l{number}", item={"message": f"l{number}"}, at=at(number))
    Brain.objects.filter(pk=agent.pk).update(record_seqs={})

    importlib.import_module("agents.migrations.0006_brain_reads").record_seqs_fill(_models_at("0006_brain_reads"), None)

    assert Brain.objects.get(pk=agent.pk).record_seqs == {"log": 4}  # 1 was trimmed: the last seq is kept


def test_the_migration_fills_the_floors_and_the_spans_and_counts_come_from_the_row(agent, django_assert_num_queries):
    import importlib

    from agents.brains.selectors.brains import brain_counts, brain_record_spans

    with brain_writing(agent=agent) as write:
        write.records([(RecordKind.LOG, f"l{n}", {"message": f"l{n}"}) for n in range(5)], at=at(0))
        write.record(kind=RecordKind.FACT, text="f", item={"text": "f"}, at=at(1))
    Brain.objects.filter(pk=agent.pk).update(record_floors={})  # as before the migration

    importlib.import_module("agents.migrations.0007_record_floors").record_floors_fill(
        _models_at("0007_record_floors"), None
    )

    brain = Brain.objects.get(pk=agent.pk)
    assert brain.record_floors == {"log": 2, "fact": 0}  # logs 3 to 5 are left at the cap of 3
    with django_assert_num_queries(0):
        assert brain_record_spans(brain=brain) == {"log": (3, 5), "fact": (1, 1)}
    counts = brain_counts(brain=brain)
    assert (counts["logs"], counts["facts"], counts["thoughts"]) == (3, 1, 0)


def test_neurons_and_links_written_together_add_up_and_keep_their_caps(agent, django_assert_num_queries):
    with brain_writing(agent=agent) as write:
        old = write.neuron(kind="concept", label="old", at=at(0), strength=2.0)
    # Neurons: a SELECT, one UPDATE (by two amounts) and an INSERT; links: a SELECT and an INSERT.
    with brain_writing(agent=agent) as write, django_assert_num_queries(5):
        me, old_again, new, new_again = write.neurons(
            [(SELF, SELF, 0.0), ("concept", "old", 1.0), ("concept", "new", 0.5), ("concept", "new", 0.5)], at=at(5)
        )
        write.connect_all([(me, new), (me, new), (new, old_again)], at=at(5), weight=0.25)

    assert old_again.pk == old.pk and new_again is new
    strengths = dict(Neuron.objects.filter(brain_id=agent.pk).values_list("key", "strength"))
    assert strengths == {SELF: 1.0, "concept:old": 3.0, "concept:new": 1.0}  # CAP 3: nothing forgotten
    weights = {(s.source.key, s.target.key): s.weight for s in Synapse.objects.filter(brain_id=agent.pk)}
    assert weights == {(SELF, "concept:new"): 0.5, ("concept:new", "concept:old"): 0.25}

    with brain_writing(agent=agent) as write:
        write.neurons([("concept", "a", 1.0), ("concept", "b", 1.0)], at=at(6))
    keys = set(Neuron.objects.filter(brain_id=agent.pk).values_list("key", flat=True))
    assert keys == {SELF, "concept:a", "concept:b"}  # the two least used went, with their links
    brain = Brain.objects.get(pk=agent.pk)
    assert (brain.neuron_count, brain.synapse_count) == (3, 0)
    assert not Synapse.objects.filter(brain_id=agent.pk).exists()
