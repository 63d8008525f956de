"""memory.json import and export: the file of the "her" app (seed 002), as her `Memory.save()`
writes it (`tests/fixtures/her/`) and as a hand-written file may have it."""

import json
from pathlib import Path

import pytest
from django.utils import timezone

from agents.brains import services
from agents.brains.logic import memory_json as mj
from agents.brains.models import (
    Brain,
    BrainExtra,
    Explored,
    Goal,
    Neuron,
    Record,
    RecordKind,
    Synapse,
)
from agents.brains.services.brains import brain_writing, goal_create
from agents.context.logic.wire import wire_tokens
from agents.context.models import Message, Summary
from agents.context.services import checkpoint_create, message_append
from memsite.errors import InvalidInput, TooLarge
from memsite.llm.tokens import counter_for_model
from tests.agents.brains.loop import her
from tests.factories import AgentFactory, system

DATA = Path(__file__).parent / "data"
SMALL_CAPS = {
    "thought": 3,
    "episode": 2,
    "fact": 2,
    "chat": 2,
    "log": 2,
    "user_message": 2,
    "goal": 2,
    "path": 2,
    "neuron": 3,
    "synapse": 2,
    "embedding": 2,
    "plan_steps": 2,
    "self_summary_chars": 20,
    "entry_chars": 40,
}


def imported(version: str) -> tuple[dict, services.ImportReport, dict]:
    """Her file of `version`, the report of its import into a new agent, and its export."""
    agent = AgentFactory()
    report = services.brain_import(agent=agent, document=her.fixture(version).read_bytes())
    original = json.loads(her.fixture(version).read_text())
    return original, report, services.brain_export(agent=agent)


def said(agent) -> list[tuple[str, str]]:
    return list(Message.objects.filter(agent=agent).order_by("position").values_list("role", "content"))


def round_trip(document) -> tuple[dict, dict]:
    """`document` imported into a new agent and exported, and that export imported into another
    and exported again."""
    first = AgentFactory()
    services.brain_import(agent=first, document=document)
    exported = services.brain_export(agent=first)
    second = AgentFactory()
    services.brain_import(agent=second, document=json.dumps(exported))
    return exported, services.brain_export(agent=second)


def texts(agent, kind: str) -> list[str]:
    rows = Record.objects.filter(brain_id=agent.pk, kind=kind).order_by("seq")
    return list(rows.values_list("text", flat=True))


@pytest.mark.parametrize("version", her.VERSIONS)
def test_a_file_her_wrote_comes_back_field_by_field(db, version):
    original, report, exported = imported(version)

    assert her.differences(exported, original) == []
    assert report.trimmed == {} and report.dropped == {} and report.clipped == {}
    assert report.added_self_neuron is False and report.kept_keys == ["fileContents", "embeddings"]
    assert report.imported["synapses"] == len(original["synapses"]) == 31


@pytest.mark.parametrize("version", her.VERSIONS)
def test_a_file_her_wrote_round_trips_through_an_import_of_its_export(db, version):
    exported, again = round_trip(her.fixture(version).read_bytes())

    assert json.dumps(again) == json.dumps(exported)
    assert exported["chatHistory"] == json.loads(her.fixture(version).read_text())["chatHistory"]


@pytest.mark.parametrize("version", her.VERSIONS)
def test_her_chat_history_is_the_agents_conversation(db, version):
    agent = AgentFactory()
    message_append(agent=agent, role="user", content="An older thread, replaced.")

    report = services.brain_import(agent=agent, document=her.fixture(version).read_bytes())

    assert said(agent) == [("user", "How do we deploy?"), ("assistant", "Migrate first, then restart.")]
    times = list(Message.objects.filter(agent=agent).order_by("position").values_list("created_at", flat=True))
    assert [mj.ms(moment) for moment in times] == [1770411716000, 1770411717000]
    assert report.imported["chatHistory"] == 2
    agent.refresh_from_db()
    counted = sum(Message.objects.filter(agent=agent).values_list("token_count", flat=True))
    assert agent.message_count == 2 and agent.conversation_tokens == agent.history_tokens == counted


@pytest.mark.parametrize("version", her.VERSIONS)
def test_her_load_reads_the_export_back_to_the_state_of_her_file(db, version):
    original, _, exported = imported(version)
    state = her.load(original, version)

    assert her.differences(state, original) == []  # what her load makes of her own file: the file
    assert her.differences(her.load(exported, version), state) == []
    # Field by field, where the import and export went wrong before.
    assert exported["state"]["plan"] == original["state"]["plan"]
    assert exported["state"]["plan"]["currentStepIndex"] == 1
    assert exported["neurons"] == original["neurons"] and exported["synapses"] == original["synapses"]
    assert exported["semanticFacts"] == original["semanticFacts"] and exported["logs"] == original["logs"]
    assert exported["embeddings"] == original["embeddings"]
    assert exported["fileContents"] == original["fileContents"]
    assert exported["state"]["lastError"] is None and exported["state"]["lastSelfConclusion"] is None
    assert exported["episodes"][1]["where"] is None
    # The newest her has neither emotions nor hormones, and gets none invented.
    for name in ("emotions", "hormones"):
        assert (name in exported["state"]) == (name in original["state"]) == (version == her.OLDER)


def test_a_file_her_wrote_fills_the_brain_with_its_texts_labels_links_and_plan_step(db):
    agent = AgentFactory()
    services.brain_import(agent=agent, document=her.fixture(her.NEWEST).read_bytes())

    brain = Brain.objects.get(pk=agent.pk)
    assert texts(agent, RecordKind.FACT) == [
        "Deployments need a migration first.",
        "deploy.md is the newest note.",
    ]
    assert texts(agent, RecordKind.LOG) == [
        "/home/ada/notes",
        "/home/ada/notes/deploy.md",
        "https://example.org/deploy",
        "Deployment needs the migration first.",
    ]
    labels = dict(Neuron.objects.filter(brain=brain).values_list("key", "label"))
    assert labels["path:homeadanotesdeploymd"] == "/home/ada/notes/deploy.md"
    assert labels["url:httpsexampleorgdeploy"] == "https://example.org/deploy"
    strongest = Synapse.objects.filter(brain=brain).order_by("-weight").first()
    assert (strongest.source.key, strongest.target.key) == ("self", "concept:deployment")
    assert strongest.weight == 0.13999999999999999
    assert brain.plan == ["list /home/ada/notes", "read deploy.md", "write a summary"]
    assert brain.plan_step == 1 and brain.last_error == "" and brain.emotions == {}
    assert brain.extra_state["plan"] == {"createdAt": 1770411714000}
    assert Goal.objects.filter(brain=brain, status="done").get().text == "Map the notes folder"
    kept = BrainExtra.objects.get(brain=brain).document
    assert set(kept) == {"embeddings", "fileContents"} and len(kept["embeddings"]) == 2


def test_import_of_a_hand_written_file_trims_to_the_caps_and_keeps_what_it_leaves_out(db, settings):
    settings.MEMSITE_BRAIN_CAPS = SMALL_CAPS
    agent = AgentFactory()

    report = services.brain_import(agent=agent, document=(DATA / "memory.json").read_bytes())
    exported = services.brain_export(agent=agent)

    # The newest entries are kept at each cap; the oldest are trimmed and counted.
    assert texts(agent, RecordKind.THOUGHT) == [
        "three",
        "four",
        "five is a thought far longer than the f\u2026",
    ]
    assert report.trimmed["thoughts"] == 2 and report.clipped["thoughts"] == 1
    assert texts(agent, RecordKind.EPISODE) == [
        "/a",
        "Read self memory_summary",
    ]  # no summary: what
    assert texts(agent, RecordKind.LOG) == ["a is first", "rest"]  # a log's thought, else its type
    assert texts(agent, RecordKind.FACT) == ["a is first", "c follows a"]
    assert said(agent) == [("assistant", "hi"), ("user", "read /a")]  # the conversation, at the chat cap
    assert exported["chatHistory"] == [
        {"role": "assistant", "content": "hi", "t": 1714550401000},
        {"role": "user", "content": "read /a", "t": 1714550460000},
    ]
    assert report.trimmed["chatHistory"] == 1 and report.imported["chatHistory"] == 2
    assert list(exported["exploredPaths"]) == ["/a", "/c"]  # /b was the least recently seen
    assert exported["userModel"] == {
        "lastMessages": ["read /a", "thanks"],
        "inferredFocus": "files",
    }
    # The plan keeps the steps from the current one; its other keys stay.
    assert exported["state"]["plan"] == {
        "steps": ["read /c", "write a fact"],
        "currentStepIndex": 0,
        "createdAt": 1714550400000,
    }
    assert exported["state"]["selfSummary"] == "I look around folde\u2026"
    # A bare string goal is an active goal; the done one is the first to go at the cap.
    assert [goal["text"] for goal in exported["state"]["goals"]] == ["Read /a", "Read /c"]
    # Keys the file leaves out come back as her defaults have them, and nothing is invented.
    assert exported["innerThoughts"] == [] and exported["exploredUrls"] == {}
    assert exported["fileContents"] == {} and exported["state"]["selfInstructions"] == []
    assert exported["state"]["lastError"] is None and exported["state"]["lastUserMessage"] is None
    assert "emotions" not in exported["state"] and "hormones" not in exported["state"]
    # The self neuron exists; the least used neuron went, and the synapses that could not stand
    # (to a missing or trimmed neuron, a self-loop, a repeat) are dropped, not stored.
    assert report.added_self_neuron is True
    assert list(exported["neurons"]) == ["self", "path:a", "concept:new"]
    assert exported["neurons"]["concept:new"]["label"] == "new"
    assert report.dropped == {"synapses": 4}
    assert [(s["fromId"], s["toId"], s["weight"]) for s in exported["synapses"]] == [
        ("path:a", "concept:new", 10),
        ("self", "path:a", 0.7),
    ]
    # Other top-level keys are kept; embeddings to their cap, the newest.
    assert report.kept_keys == ["version", "savedAt", "embeddings"]
    assert exported["version"] == 2 and exported["savedAt"] == 1714564800000
    assert [embedding["text"] for embedding in exported["embeddings"]] == ["two", "three"]
    assert report.trimmed["embeddings"] == 1
    assert Neuron.objects.filter(brain=agent.brain).count() == 3
    assert Synapse.objects.filter(brain=agent.brain).count() == 2


def test_a_new_import_replaces_the_kept_keys_of_the_last(db):
    agent = AgentFactory()
    services.brain_import(agent=agent, document=(DATA / "memory.json").read_bytes())

    services.brain_import(agent=agent, document={"thoughts": ["one"], "mood": "calm"})

    exported = services.brain_export(agent=agent)
    assert exported["mood"] == "calm" and "version" not in exported
    assert exported["embeddings"] == [] and exported["fileContents"] == {}


@pytest.mark.parametrize(
    ("extra", "refusal", "message"),
    [
        ({"fileContents": {"/big": "x" * 2_000}}, TooLarge, "the limit is 1024 bytes"),
        ({"fileContents": {"/deep": json.loads("[" * 40 + "]" * 40)}}, InvalidInput, "too deeply"),
        ({"embeddings": [{"text": "a\x00b"}]}, InvalidInput, "embeddings[0].text holds a NUL"),
        ({"embeddings": {"text": "a"}}, InvalidInput, "embeddings: should be a list"),
    ],
)
def test_kept_keys_are_bounded_as_the_whole_file_is(db, settings, extra, refusal, message):
    settings.MEMSITE_BRAIN_IMPORT_MAX_BYTES = 1_024
    agent = AgentFactory()
    services.brain_import(agent=agent, document={"thoughts": ["kept"], "fileContents": {"/a": 1}})

    with pytest.raises(refusal) as refused:
        services.brain_import(agent=agent, document={"thoughts": ["new"], **extra})

    assert message in refused.value.message
    exported = services.brain_export(agent=agent)
    assert exported["thoughts"] == ["kept"] and exported["fileContents"] == {"/a": 1}


def test_a_brain_memsite_wrote_exports_entries_as_her_writes_them(db):
    agent = AgentFactory()
    at = timezone.now()
    goal_create(agent=agent, text="Read the notes")
    with brain_writing(agent=agent) as write:
        write.records(
            [
                (
                    RecordKind.THOUGHT,
                    "Notes first.",
                    mj.entry(RecordKind.THOUGHT, "Notes first.", at),
                ),
                (RecordKind.FACT, "Cats purr.", {}),  # an entry kept without one: from its columns
                (RecordKind.SELF_INSTRUCTION, "Be brief.", "Be brief."),
            ],
            at=at,
        )
        write.explored(kind=Explored.Kind.PATH, key="/notes", summary="2 items", at=at)
        plan = ["list /notes", "read /notes/a.md"]
        write.set(plan=plan, plan_step=2, last_error="", self_summary="I read notes.")

    exported = services.brain_export(agent=agent)

    assert exported["thoughts"] == [{"t": mj.ms(at), "text": "Notes first."}]
    assert exported["semanticFacts"] == [{"t": mj.ms(at), "fact": "Cats purr."}]
    assert exported["state"]["selfInstructions"] == ["Be brief."]
    assert exported["logs"][0]["type"] == "goal" and isinstance(exported["logs"][0]["t"], int)
    [goal] = exported["state"]["goals"]
    assert goal["id"] == f"g{goal['createdAt']}" and goal["status"] == "active"
    assert exported["exploredPaths"] == {"/notes": {"at": mj.ms(at), "summary": "2 items"}}
    assert exported["neurons"]["self"]["id"] == "self" and exported["neurons"]["self"]["label"] == "self"
    assert isinstance(exported["neurons"]["self"]["lastUsed"], int)
    # Every step done: her advancePlan leaves no plan. No error: null, as her setLastError.
    assert exported["state"]["plan"] is None and exported["state"]["lastError"] is None
    assert set(exported["state"]["emotions"]) == {"joy", "frustration", "interest", "confusion"}
    newest = her.load(exported, her.NEWEST)
    assert her.differences(newest["state"]["goals"], exported["state"]["goals"]) == []
    assert her.differences(newest["thoughts"], exported["thoughts"]) == []


def memsite_chat(agent) -> None:
    """A conversation as memsite writes it: appended messages, among them a tool call and its
    result, and a chat exchange whose reply cites a fact."""
    with brain_writing(agent=agent) as write:
        write.record(kind=RecordKind.FACT, text="Deploys need a migration first.", item={}, at=timezone.now())
        write.set(self_summary="I keep the deploy notes.")  # her load seeds a memory without one
    message_append(agent=agent, role="system", content="Be brief.", pinned=True)
    call = {"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
    message_append(agent=agent, role="assistant", tool_calls=[call])
    message_append(agent=agent, role="tool", tool_call_id="call_1", content="3 notes")
    message_append(agent=agent, role="user", content="What do deploys need?", sender="ops")
    services.chat_send(agent=agent, text="Tell me about deploys and migrations.", by=system())


def test_a_conversation_memsite_wrote_exports_its_chat_lines_as_her_writes_them(db, offline_llm):
    agent = AgentFactory()
    memsite_chat(agent)
    reply = Message.objects.filter(agent=agent).order_by("position").last()

    chat = services.brain_export(agent=agent)["chatHistory"]

    # Its user and assistant messages with text: the tool call, its result and the system message stay out.
    assert [(line["role"], line["content"]) for line in chat] == [
        ("user", "What do deploys need?"),
        ("user", "Tell me about deploys and migrations."),
        ("assistant", reply.content),
    ]
    assert set(chat[0]) == {"role", "content", "t"} and isinstance(chat[0]["t"], int)
    assert chat[2]["citations"] == [{"id": "fact:1", "kind": "fact", "ref": "1", "label": "fact 1"}]
    assert chat[2]["provider"] == "offline" and set(chat[2]) == {"role", "content", "t", "citations", "provider"}
    newest = her.load(services.brain_export(agent=agent), her.NEWEST)
    assert her.differences(newest["chatHistory"], chat) == []


def test_a_conversation_memsite_wrote_round_trips_and_its_replies_keep_their_citations(db, offline_llm):
    agent = AgentFactory()
    memsite_chat(agent)

    exported, again = round_trip(services.brain_export(agent=agent))

    assert json.dumps(again) == json.dumps(exported)
    second = Message.objects.order_by("agent_id", "position").last()
    assert second.agent_id != agent.pk and second.role == "assistant"
    assert second.data["citations"] == exported["chatHistory"][-1]["citations"]


def test_an_import_replaces_the_conversation_whole(db, offline_llm):
    agent = AgentFactory()
    memsite_chat(agent)
    Summary.objects.create(agent=agent, through=2)
    kept = checkpoint_create(agent=agent)
    document = {"chatHistory": [{"role": "user", "content": "Hello."}, {"role": "assistant", "content": "  "}, "Hi"]}

    report = services.brain_import(agent=agent, document=document)

    assert said(agent) == [("user", "Hello."), ("user", "Hi")]  # a bare string is a user's line
    assert report.dropped == {"chatHistory": 1}  # a line without text is no message
    assert not Summary.objects.filter(agent=agent).exists()
    agent.refresh_from_db()
    costs = list(Message.objects.filter(agent=agent).order_by("position").values_list("token_count", "history_offset"))
    assert [offset for _, offset in costs] == [0, costs[0][0]]
    assert agent.message_count == 2 and agent.pending_tool_calls == []
    assert agent.conversation_tokens == agent.history_tokens == sum(tokens for tokens, _ in costs)
    assert costs[0][0] == wire_tokens(counter_for_model(agent.model), {"role": "user", "content": "Hello."})
    assert kept.message_count == 6  # a checkpoint made before keeps the conversation it replaced


def test_a_file_without_chat_history_leaves_the_conversation_as_it_is(db):
    agent = AgentFactory()
    message_append(agent=agent, role="user", content="Keep me.")

    services.brain_import(agent=agent, document={"thoughts": ["one"]})

    assert said(agent) == [("user", "Keep me.")]
    assert services.brain_export(agent=agent)["chatHistory"] == [
        {"role": "user", "content": "Keep me.", "t": mj.ms(Message.objects.get(agent=agent).created_at)}
    ]


def test_an_invalid_file_changes_nothing(db):
    agent = AgentFactory()
    services.brain_import(agent=agent, document=her.fixture(her.NEWEST).read_bytes())
    before = services.brain_export(agent=agent)
    records = Record.objects.filter(brain=agent.brain).count()

    with pytest.raises(InvalidInput) as refused:
        services.brain_import(agent=agent, document=b'{"thoughts": [{"text": 5}]}')

    assert refused.value.message == "memory.json is not valid: thoughts[0].text: should be a string."
    assert services.brain_export(agent=agent) == before
    assert Record.objects.filter(brain=agent.brain).count() == records


def test_an_import_numbers_the_lists_afresh_and_the_next_append_trims_them_at_the_cap(db, settings):
    settings.MEMSITE_BRAIN_CAPS = {"thought": 3}
    agent = AgentFactory()
    with brain_writing(agent=agent) as write:  # seqs 1 to 5, the first two trimmed
        old = [(RecordKind.THOUGHT, f"old {n}", {"text": f"old {n}"}) for n in range(5)]
        write.records(old, at=timezone.now())

    services.brain_import(agent=agent, document={"thoughts": ["one", "two", "three"]})
    with brain_writing(agent=agent) as write:
        write.record(kind=RecordKind.THOUGHT, text="four", item={"text": "four"}, at=timezone.now())

    kept = Record.objects.filter(brain=agent.brain, kind=RecordKind.THOUGHT).order_by("seq")
    assert list(kept.values_list("seq", "text")) == [(2, "two"), (3, "three"), (4, "four")]
