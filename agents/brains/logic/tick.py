"""What a tick of the reflection loop writes, decided from what it read and what its LLM calls
and action came to; no database, clock or LLM here: `services.ticks` asks, acts and writes.
Explained in docs/ticks.md."""

import json
from dataclasses import dataclass, field
from datetime import datetime
from itertools import pairwise
from typing import Any

from agents.brains.logic import affect
from agents.brains.logic import memory_json as mj
from agents.brains.logic.caps import cap, clip
from agents.brains.logic.concepts import key_terms
from agents.brains.logic.outcomes import Outcome, Perceived, refused
from agents.brains.models import RecordKind, TickRun

FACT_SOURCE = "deep_reflect"  # a fact's source, as her deepReflect names it

Entry = tuple[str, str, Any]  # (kind, text, the entry as her writes one)


@dataclass(frozen=True)
class BrainState:
    """The brain's row as a write of the tick reads it, under its lock."""

    emotions: dict[str, float]
    hormones: dict[str, float]
    last_error: str = ""
    plan: list[str] = field(default_factory=list)
    plan_step: int = 0
    extra_state: dict[str, Any] = field(default_factory=dict)
    self_summary: str = ""


@dataclass(frozen=True)
class Decided:
    """The decision's reply: the action, the arguments it was given, and why."""

    action: str
    arguments: dict[str, Any]
    reason: str


@dataclass(frozen=True)
class Reflected:
    """The reflection's reply."""

    thought: str
    inner_thought: str | None = None


# Recording what the tick did -------------------------------------------------------------------


@dataclass(frozen=True)
class Recording:
    """The record step's writes that do not depend on the brain's row: neurons (self, then what
    was perceived, then the thought's concepts), links between them as positions in `neurons`,
    and list entries, in order."""

    neurons: list[tuple[str, str, float]]
    links: list[tuple[int, int]]
    entries: list[Entry]


def thought_of(reflected: Reflected | None) -> str:
    return clip(reflected.thought.strip(), "entry_chars") if reflected is not None else ""


def recording(decided: Decided | None, outcome: Outcome, reflected: Reflected | None, now: datetime) -> Recording:
    """What the record step writes of what the tick decided, did and thought."""
    thought = thought_of(reflected)
    terms = key_terms(thought)
    perceived = range(1, 1 + len(outcome.perceived))
    concepts = range(perceived.stop, perceived.stop + len(terms))
    links = [
        *((0, neuron) for neuron in (*perceived, *concepts)),
        *((neuron, concept) for neuron in perceived for concept in concepts),
        *pairwise(concepts),
    ]
    neurons = [
        (mj.SELF, mj.SELF, 0.0),
        *((item.kind, item.key, 1.0) for item in outcome.perceived),
        *(("concept", term, 0.5) for term in terms),
    ]
    entries = [*explore_entries(outcome.perceived, now), *tick_entries(decided, outcome, reflected, thought, now)]
    return Recording(neurons=neurons, links=links, entries=entries)


def explore_entries(perceived: tuple[Perceived, ...], now: datetime) -> list[Entry]:
    """A log entry for each path or URL the action perceived."""
    return [
        (
            RecordKind.LOG,
            f"explore_{item.kind}: {item.key}",
            mj.entry(RecordKind.LOG, item.key, now, type=f"explore_{item.kind}"),
        )
        for item in perceived
    ]


def tick_entries(
    decided: Decided | None, outcome: Outcome, reflected: Reflected | None, thought: str, now: datetime
) -> list[Entry]:
    """The tick's list entries after its perception: thought, inner thought, log, episode."""
    texts: list[tuple[str, str, dict[str, Any]]] = []  # (kind, text, the entry's other keys)
    if reflected is not None:
        inner = (reflected.inner_thought or "").strip()
        texts.append((RecordKind.THOUGHT, thought, {}))
        texts.extend([(RecordKind.INNER_THOUGHT, inner, {})] if inner else [])
        texts.append((RecordKind.LOG, thought, {"type": "thought"}))
    else:
        kind = "action" if outcome.ok else "error"
        texts.append((RecordKind.LOG, outcome.summary, {"type": kind}))
    action = decided.action if decided else ""
    what = f"{action} {json.dumps(decided.arguments, ensure_ascii=False)}" if decided else "no action"
    episode = {"type": action or "none", "what": clip(what, "entry_chars"), "where": outcome.where}
    texts.append((RecordKind.EPISODE, outcome.summary, episode))
    return [(kind, text, mj.entry(kind, text, now, **keys)) for kind, text, keys in texts]


def state_counted(state: dict[str, Any], outcome: Outcome) -> dict[str, Any]:
    """memory.json's other state keys with what the action set and counted."""
    state = {**state, **outcome.state}
    for name, step in outcome.counters.items():
        previous = state.get(name)
        counted = previous if isinstance(previous, int) and not isinstance(previous, bool) else 0
        state[name] = counted + step
    return state


def record_changes(brain: BrainState, outcome: Outcome, *, novel: bool) -> dict[str, Any]:
    """The brain's fields the record step changes, and only those that change: the other state
    keys, emotions, hormones, last error and plan step. `novel`: the action met something new."""
    changes: dict[str, Any] = {}
    if outcome.state or outcome.counters:
        changes["extra_state"] = state_counted(brain.extra_state or {}, outcome)
    felt, hormones = affect.tick_felt(
        brain.emotions, brain.hormones, happened=outcome.happened, succeeded=outcome.ok, novel=novel
    )
    if felt != brain.emotions:
        changes["emotions"] = felt
    if hormones != brain.hormones:
        changes["hormones"] = hormones
    error = "" if outcome.ok else outcome.summary
    if error != brain.last_error:
        changes["last_error"] = error
    if outcome.ok and brain.plan_step < len(brain.plan or []):
        changes["plan_step"] = brain.plan_step + 1
    return changes


# What follows the record -----------------------------------------------------------------------


@dataclass(frozen=True)
class Finish:
    """What follows the record step, and how the run ends."""

    deep_reflect: bool
    replan_because: str | None  # why a new plan is made, or None
    status: str
    outcome: str
    error: str


def finish(*, number: int, deep_reflect_every: int, brain: BrainState, outcome: Outcome) -> Finish:
    """Every `deep_reflect_every` ticks a deep reflection (it leaves the plan as it was); a new
    plan when the action failed or the plan is done. A tick that ran its loop is done."""
    plan_done = brain.plan_step >= len(brain.plan or [])
    because = "the action failed" if not outcome.ok else "the plan is done" if plan_done else None
    return Finish(
        deep_reflect=number % deep_reflect_every == 0,
        replan_because=because,
        status=TickRun.Status.DONE,
        outcome=outcome.summary,
        error="" if outcome.ok else outcome.summary,
    )


def undecided(message: str) -> Outcome:
    """The outcome of a tick whose decision's reply never validated: no action was taken."""
    return refused(f"No valid action was decided: {message}")


def failure(brain: BrainState, error: str, now: datetime) -> tuple[Entry, dict[str, Any]]:
    """A failed tick, as the brain takes it: a log entry, and its last error, emotions and
    hormones."""
    entry = (RecordKind.LOG, error, mj.entry(RecordKind.LOG, error, now, type="error"))
    emotions, hormones = affect.tick_felt(brain.emotions, brain.hormones, happened=True, succeeded=False, novel=False)
    return entry, {"last_error": error, "emotions": emotions, "hormones": hormones}


# Deep reflection -------------------------------------------------------------------------------


@dataclass(frozen=True)
class DeepReflecting:
    """What a deep reflection's reply adds: a self-summary (written when it changed), the goals
    to try in order (with their index in the reply), and the facts and self-instructions not
    known yet."""

    self_summary: str
    summary_changed: bool
    goals: list[tuple[int, str]]
    facts: list[str]
    rules: list[str]


def deep_reflecting(
    *,
    brain: BrainState,
    self_summary: str,
    goals: list[str],
    facts: list[str],
    rules: list[str],
    known_goals: list[str],
    known_facts: list[str],
    known_rules: list[str],
    goal_chars: int | None,
) -> DeepReflecting:
    """The reply's additions, each compared without case with what the brain knows; a goal is
    stored within `goal_chars`, and compared so with the goals after it."""
    summary = self_summary.strip()
    known = {goal.casefold() for goal in known_goals}
    new_goals: list[tuple[int, str]] = []
    for n, text in enumerate(goals):
        if text.casefold() not in known:
            new_goals.append((n, text))
            known.add(text[:goal_chars].casefold())
    facts_known = {fact.casefold() for fact in known_facts}
    rules_known = {rule.casefold() for rule in known_rules}
    return DeepReflecting(
        self_summary=summary,
        summary_changed=summary != brain.self_summary,
        goals=new_goals,
        facts=[fact for fact in facts if fact.casefold() not in facts_known],
        rules=[rule for rule in rules if rule.casefold() not in rules_known],
    )


def deep_reflect_entries(reflecting: DeepReflecting, goals_added: int, now: datetime) -> list[Entry]:
    """The facts and self-instructions a deep reflection adds, then its log entry."""
    facts, rules = reflecting.facts, reflecting.rules
    log = f"deep reflection: {goals_added} goals, {len(facts)} facts, {len(rules)} self-instructions"
    return [
        *((RecordKind.FACT, fact, mj.entry(RecordKind.FACT, fact, now, source=FACT_SOURCE)) for fact in facts),
        *((RecordKind.SELF_INSTRUCTION, rule, mj.entry(RecordKind.SELF_INSTRUCTION, rule, now)) for rule in rules),
        (RecordKind.LOG, log, mj.entry(RecordKind.LOG, reflecting.self_summary, now, type="deep_reflect")),
    ]


def deep_reflect_detail(
    reflecting: DeepReflecting, goals_added: list[str], refused: str | None, call: int
) -> dict[str, Any]:
    """The deep reflection step's detail; `refused`: why the goals after those added were not."""
    detail: dict[str, Any] = {
        "self_summary": reflecting.self_summary,
        "goals": goals_added,
        "facts": reflecting.facts,
        "self_instructions": reflecting.rules,
        "call": call,
    }
    if refused is not None:
        detail["refused"] = refused
    return detail


# A new plan ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Replanning:
    steps: list[str]
    fields: dict[str, Any]  # the brain's fields the plan replaces
    entry: Entry


def replanning(*, steps: list[str], extra_state: dict[str, Any], because: str, now: datetime) -> Replanning:
    """A new plan from the reply's steps, within the caps; memory.json's other keys of the plan
    (her createdAt) go with the old one."""
    steps = [clip(step, "entry_chars") for step in steps[: cap("plan_steps")]]
    fields: dict[str, Any] = {"plan": steps, "plan_step": 0}
    if "plan" in extra_state:
        fields["extra_state"] = {key: value for key, value in extra_state.items() if key != "plan"}
    joined = " | ".join(steps)
    entry = (RecordKind.LOG, f"new plan ({because}): {joined}", mj.entry(RecordKind.LOG, joined, now, type="plan"))
    return Replanning(steps=steps, fields=fields, entry=entry)
