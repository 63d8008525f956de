"""What a tick writes, decided without a database: `agents.brains.logic.tick`."""

from datetime import UTC, datetime

from agents.brains.logic import affect
from agents.brains.logic.outcomes import Outcome, Perceived
from agents.brains.logic.tick import (
    BrainState,
    Decided,
    Reflected,
    deep_reflect_detail,
    deep_reflect_entries,
    deep_reflecting,
    failure,
    finish,
    record_changes,
    recording,
    replanning,
    state_counted,
    undecided,
)

NOW = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
MS = int(NOW.timestamp() * 1000)
CALM = BrainState(emotions=dict(affect.CALM_EMOTIONS), hormones=dict(affect.BASELINE_HORMONES))


def test_recording_links_self_to_what_was_perceived_and_thought():
    outcome = Outcome(
        ok=True,
        summary="Listed /notes.",
        perceived=(Perceived("path", "/notes", "3 notes", folder=True), Perceived("path", "/notes/a", "a note")),
        where="/notes",
    )
    decided = Decided(action="list_dir", arguments={"path": "/notes"}, reason="next step")

    made = recording(decided, outcome, Reflected(thought="Gardens need water; gardens grow."), NOW)

    assert made.neurons == [
        ("self", "self", 0.0),
        ("path", "/notes", 1.0),
        ("path", "/notes/a", 1.0),
        ("concept", "gardens", 0.5),
        ("concept", "need", 0.5),
        ("concept", "water", 0.5),
    ]
    # self to everything, each perception to each concept, the concepts in a chain
    assert made.links[:5] == [(0, 1), (0, 2), (0, 3), (0, 4), (0, 5)]
    assert made.links[5:11] == [(1, 3), (1, 4), (1, 5), (2, 3), (2, 4), (2, 5)]
    assert made.links[11:] == [(3, 4), (4, 5)]
    kinds = [(kind, text) for kind, text, _ in made.entries]
    assert kinds == [
        ("log", "explore_path: /notes"),
        ("log", "explore_path: /notes/a"),
        ("thought", "Gardens need water; gardens grow."),
        ("log", "Gardens need water; gardens grow."),
        ("episode", "Listed /notes."),
    ]
    episode = made.entries[4][2]
    assert episode == {
        "t": MS,
        "summary": "Listed /notes.",
        "type": "list_dir",
        "what": 'list_dir {"path": "/notes"}',
        "where": "/notes",
    }


def test_without_a_reflection_or_a_decision_the_log_says_what_happened():
    made = recording(None, undecided("bad JSON"), None, NOW)

    assert made.neurons == [("self", "self", 0.0)] and made.links == []
    (log_kind, log_text, log), (episode_kind, _, episode) = made.entries
    assert (log_kind, log_text, log["type"]) == ("log", "No valid action was decided: bad JSON", "error")
    assert episode_kind == "episode" and episode["type"] == "none" and episode["what"] == "no action"


def test_an_inner_thought_is_recorded_and_a_reply_is_no_entry_of_the_brain():
    outcome = Outcome(ok=True, summary="Said: Hello!")
    made = recording(Decided("reply", {"text": "Hello!"}, "greet"), outcome, Reflected("I greeted.", " shy "), NOW)

    # The reply itself is a message of the conversation, said by the action.
    assert [(kind, text) for kind, text, _ in made.entries] == [
        ("thought", "I greeted."),
        ("inner_thought", "shy"),
        ("log", "I greeted."),
        ("episode", "Said: Hello!"),
    ]


def test_counters_add_to_numbers_and_restart_what_is_not_one():
    outcome = Outcome(ok=True, summary="", state={"lastDir": "/a"}, counters={"notes": 1, "flag": 2, "new": 3})

    counted = state_counted({"notes": 4, "flag": True, "kept": "x"}, outcome)

    assert counted == {"notes": 5, "flag": 2, "new": 3, "kept": "x", "lastDir": "/a"}


def test_a_success_moves_the_plan_on_and_clears_the_error():
    brain = BrainState(
        emotions=dict(affect.CALM_EMOTIONS),
        hormones=dict(affect.BASELINE_HORMONES),
        last_error="it broke",
        plan=["a", "b"],
        plan_step=1,
    )

    changes = record_changes(brain, Outcome(ok=True, summary="done"), novel=True)

    assert changes["plan_step"] == 2 and changes["last_error"] == ""
    assert changes["emotions"]["joy"] > 0 and changes["emotions"]["interest"] > 0
    assert "extra_state" not in changes


def test_a_failure_keeps_the_plan_step_and_changes_only_what_changed():
    brain = BrainState(
        emotions=dict(affect.CALM_EMOTIONS),
        hormones=dict(affect.BASELINE_HORMONES),
        last_error="Not found.",
        plan=["a"],
    )

    changes = record_changes(brain, Outcome(ok=False, summary="Not found."), novel=False)

    assert set(changes) == {"emotions", "hormones"}
    assert changes["emotions"]["frustration"] > 0


def test_a_tick_that_did_nothing_only_lets_emotions_and_hormones_decay():
    stirred = BrainState(
        emotions={"joy": 0.6, "frustration": 0.2, "interest": 0.4, "confusion": 0.0},
        hormones={"dopamine": 0.8, "cortisol": 0.3, "serotonin": 0.5},
    )

    changes = record_changes(stirred, Outcome(ok=True, summary="Idled.", happened=False), novel=False)

    assert changes["emotions"] == affect.emotions_decayed(stirred.emotions)
    assert changes["hormones"] == affect.hormones_decayed(stirred.hormones)
    assert changes["emotions"]["joy"] < 0.6 and changes["hormones"]["dopamine"] < 0.8  # no joy for idling
    assert "hormones" not in record_changes(CALM, Outcome(ok=True, summary="Idled.", happened=False), novel=False)


def test_what_follows_the_record():
    planned = BrainState(emotions={}, hormones={}, plan=["a", "b"], plan_step=1)
    done = BrainState(emotions={}, hormones={}, plan=["a"], plan_step=1)
    ok, failed = Outcome(ok=True, summary="fine"), Outcome(ok=False, summary="broke")

    middle = finish(number=4, deep_reflect_every=5, brain=planned, outcome=ok)
    assert (middle.deep_reflect, middle.replan_because) == (False, None)
    assert (middle.status, middle.outcome, middle.error) == ("done", "fine", "")

    fifth = finish(number=10, deep_reflect_every=5, brain=done, outcome=ok)
    assert (fifth.deep_reflect, fifth.replan_because) == (True, "the plan is done")

    broke = finish(number=3, deep_reflect_every=5, brain=planned, outcome=failed)
    assert broke.replan_because == "the action failed"
    assert (broke.status, broke.error) == ("done", "broke")


def test_a_failed_tick_is_felt_as_a_failure():
    (kind, text, entry), changes = failure(CALM, "decide: timed out", NOW)

    assert (kind, text, entry) == (
        "log",
        "decide: timed out",
        {"t": MS, "message": "decide: timed out", "type": "error"},
    )
    assert changes["last_error"] == "decide: timed out"
    assert changes["emotions"]["frustration"] > 0 and changes["hormones"]["cortisol"] > 0.5


def test_a_deep_reflection_adds_only_what_is_new():
    brain = BrainState(emotions={}, hormones={}, self_summary="I explore.")

    reflecting = deep_reflecting(
        brain=brain,
        self_summary="  I explore.  ",
        goals=["Read the notes", "read the NOTES", "Map the tree", "Known goal"],
        facts=["Water is wet", "Old fact"],
        rules=["Be brief", "be careful"],
        known_goals=["known goal"],
        known_facts=["old FACT"],
        known_rules=["Be Careful"],
        goal_chars=500,
    )

    assert reflecting.self_summary == "I explore." and not reflecting.summary_changed
    assert reflecting.goals == [(0, "Read the notes"), (2, "Map the tree")]
    assert reflecting.facts == ["Water is wet"] and reflecting.rules == ["Be brief"]

    entries = deep_reflect_entries(reflecting, 1, NOW)
    assert [(kind, text) for kind, text, _ in entries] == [
        ("fact", "Water is wet"),
        ("self_instruction", "Be brief"),
        ("log", "deep reflection: 1 goals, 1 facts, 1 self-instructions"),
    ]
    assert entries[0][2]["source"] == "deep_reflect" and entries[1][2] == "Be brief"
    assert entries[2][2] == {"t": MS, "message": "I explore.", "type": "deep_reflect"}

    detail = deep_reflect_detail(reflecting, ["Read the notes"], "The agent has 20 active goals.", 7)
    assert detail == {
        "self_summary": "I explore.",
        "goals": ["Read the notes"],
        "facts": ["Water is wet"],
        "self_instructions": ["Be brief"],
        "call": 7,
        "refused": "The agent has 20 active goals.",
    }


def test_a_goal_is_compared_as_it_is_stored():
    reflecting = deep_reflecting(
        brain=CALM,
        self_summary="Me.",
        goals=["abcdef", "ABC"],
        facts=[],
        rules=[],
        known_goals=[],
        known_facts=[],
        known_rules=[],
        goal_chars=3,
    )

    assert reflecting.summary_changed and reflecting.goals == [(0, "abcdef")]


def test_a_new_plan_replaces_the_old_one_and_its_other_keys(settings):
    settings.MEMSITE_BRAIN_CAPS = {"plan_steps": 2}

    plan = replanning(
        steps=["list /notes", "read /notes/a", "write a note"],
        extra_state={"plan": {"createdAt": 1}, "lastDir": "/notes"},
        because="the plan is done",
        now=NOW,
    )

    assert plan.steps == ["list /notes", "read /notes/a"]
    assert plan.fields == {"plan": plan.steps, "plan_step": 0, "extra_state": {"lastDir": "/notes"}}
    assert plan.entry == (
        "log",
        "new plan (the plan is done): list /notes | read /notes/a",
        {"t": MS, "message": "list /notes | read /notes/a", "type": "plan"},
    )
    assert "extra_state" not in replanning(steps=["a", "b"], extra_state={}, because="x", now=NOW).fields
