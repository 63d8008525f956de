"""memory.json import and export (seed 002's file of a whole brain)."""

import json
from pathlib import Path

import pytest

from agents import services
from agents.models import Neuron, Record, Synapse
from memsite.errors import InvalidInput
from tests.factories import AgentFactory

DATA = Path(__file__).parent / "data"
SMALL_CAPS = dict(
    thought=3, episode=2, fact=2, chat=2, log=2, user_message=2, goal=2, path=2, neuron=3, synapse=2,
    plan_steps=2, self_summary_chars=20, entry_chars=40,
)


def test_export_gives_back_an_imported_file_with_every_key_and_extra_fields(db):
    agent = AgentFactory()
    document = json.loads((DATA / "memory_complete.json").read_text())

    report = services.brain_import(agent=agent, document=(DATA / "memory_complete.json").read_bytes())

    assert report.trimmed == {} and report.dropped == {} and report.clipped == {}
    assert report.added_self_neuron is False
    assert services.brain_export(agent=agent) == document


def test_import_of_a_hand_written_file_trims_to_the_caps_and_fills_missing_keys(db, settings):
    settings.MEMSITE_BRAIN_CAPS = SMALL_CAPS
    agent = AgentFactory()

    report = services.brain_import(agent=agent, document=(DATA / "memory.json").read_bytes())
    exported = services.brain_export(agent=agent)

    # The newest entries are kept at each cap; the oldest are trimmed and counted.
    assert [entry if isinstance(entry, str) else entry["text"] for entry in exported["thoughts"]] == [
        "three", "four", "five is a thought far longer than the f\u2026",
    ]
    assert report.trimmed["thoughts"] == 2 and report.clipped["thoughts"] == 1
    assert [episode["where"] for episode in exported["episodes"]] == ["/a", "/c"]
    assert list(exported["exploredPaths"]) == ["/a", "/c"]  # /b was the least recently seen
    assert exported["userModel"] == {"lastMessages": ["read /a", "thanks"], "name": "Ada"}
    assert exported["state"]["plan"] == {"steps": ["read /c", "write a fact"], "current": 0}
    assert exported["state"]["selfSummary"] == "I look around folde\u2026"
    # A bare string goal is an active goal; the done one is the first to go at the cap.
    assert exported["state"]["goals"] == [
        {"text": "Read /a", "status": "active"},
        {"text": "Read /c", "status": "active", "at": "2024-05-01T10:00:00.000Z"},
    ]
    # Missing keys come from the defaults.
    assert exported["innerThoughts"] == [] and exported["logs"] == [] and exported["exploredUrls"] == {}
    assert exported["state"]["emotions"] == {"joy": 0.5, "frustration": 0.0, "interest": 0.0, "confusion": 0.0}
    assert exported["state"]["hormones"] == {"dopamine": 0.5, "cortisol": 0.5, "serotonin": 0.5}
    # The self neuron exists; the least used neuron went, and the synapses that could not stand
    # (to a missing or trimmed neuron, a self-loop, a repeat) are dropped, not stored.
    assert report.added_self_neuron is True
    assert list(exported["neurons"]) == ["self", "path:/a", "concept:new"]
    assert report.dropped == {"synapses": 4}
    assert [(s["from"], s["to"], s["weight"]) for s in exported["synapses"]] == [
        ("path:/a", "concept:new", 10), ("self", "path:/a", 0.7),
    ]
    assert report.ignored_keys == ["version", "savedAt"]
    brain = agent.brain
    assert Neuron.objects.filter(brain=brain).count() == 3
    assert Synapse.objects.filter(brain=brain).count() == 2


def test_an_invalid_file_changes_nothing(db):
    agent = AgentFactory()
    services.brain_import(agent=agent, document=(DATA / "memory_complete.json").read_bytes())
    before = services.brain_export(agent=agent)
    records = Record.objects.filter(brain=agent.brain).count()

    with pytest.raises(InvalidInput) as refused:
        services.brain_import(agent=agent, document=b'{"thoughts": [{"text": 5}]}')

    assert refused.value.message == "memory.json is not valid: thoughts[0].text: should be a string."
    assert services.brain_export(agent=agent) == before
    assert Record.objects.filter(brain=agent.brain).count() == records


def test_an_import_numbers_the_lists_afresh_and_the_next_append_trims_them_at_the_cap(db, settings):
    from django.utils import timezone

    from agents.models import RecordKind
    from agents.services.brains import brain_writing

    settings.MEMSITE_BRAIN_CAPS = {"thought": 3}
    agent = AgentFactory()
    with brain_writing(agent=agent) as write:  # seqs 1 to 5, the first two trimmed
        write.records([(RecordKind.THOUGHT, f"old {n}", {"text": f"old {n}"}) for n in range(5)], at=timezone.now())

    services.brain_import(agent=agent, document={"thoughts": ["one", "two", "three"]})
    with brain_writing(agent=agent) as write:
        write.record(kind=RecordKind.THOUGHT, text="four", item={"text": "four"}, at=timezone.now())

    kept = Record.objects.filter(brain=agent.brain, kind=RecordKind.THOUGHT).order_by("seq")
    assert list(kept.values_list("seq", "text")) == [(2, "two"), (3, "three"), (4, "four")]
