"""Ticks of the reflection loop (seed 002): decide, act, reflect, record; every few ticks a deep
reflection; a new plan when the plan is done or the action failed.

One tick of a brain at a time. A tick takes a lease on its brain (`lease_until` empty or past)
with the brain's row locked, checks it at every step and renews it there once a tenth of it is
spent; a second tick started meanwhile finds the lease held and does nothing. A killed worker's
lease runs out after MEMSITE_TICK_LEASE_S and the next tick takes over, failing the tick run the
dead worker left running; a brain that does not tick again has that run failed by
`ticks_sweep_stale`. Every brain write checks, under the brain's row lock, that the tick still
holds its lease, so a tick that lost it writes nothing more.

Each tick is a `TickRun`, made with the lease once the tick has read its brain, numbered after
the brain's `tick_count`; each step is appended to its `steps` with its duration as it ends,
saved at once when something slow follows or else with the brain write that ends it, and its
LLM calls serve it in the ledger. LLM calls are made outside any transaction; what a tick learns
is written in short `brain_writing` transactions, only what changed.

A tick's status: `done` when it ran its loop, even if its action failed or was not valid (the
run's `error` and the brain's `last_error` say what went wrong); `failed` when it could not: the
decision's LLM call failed (other than with an invalid reply), its prompt did not fit, it lost
its lease, or something broke; a failed tick makes no new plan (its LLM is likely down). A failed
reflection, deep reflection or plan is recorded in its step and does not fail the tick.

A tick is the work of a user (memsite.quotas): whoever asked for it, or set the agent ticking
for the ticks beat queues. A brain holds at most one tick queued and not yet begun
(`tick_queued_at`, `tick_queued_by`): a second request meanwhile adds nothing, since the first
will tick the brain. The run takes the user over from the brain, and its LLM calls are charged
to them: once their daily budget is spent the next call fails the tick (or its step) like any
failed call. Starting ticks and ticking are capped per user (429)."""

import json
import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from itertools import pairwise
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q, Subquery
from django.utils import timezone

from agents.brains.logic import affect
from agents.brains.logic import memory_json as mj
from agents.brains.logic.caps import cap, clip
from agents.brains.models import Brain, Goal, RecordKind, TickRun
from agents.brains.selectors.ticks import BrainView, brain_view, brain_view_renewed
from agents.brains.services.actions import Outcome, Suggestion, action_run, explore_next, refused
from agents.brains.services.brains import SELF, BrainWrite, brain_create, brain_writing
from agents.brains.services.prompts import (
    Decision,
    DeepReflection,
    Plan,
    Reflection,
    decide_messages,
    deep_reflect_messages,
    plan_messages,
    reflect_messages,
)
from agents.context.models import Agent
from memsite.errors import Conflict, InvalidInput, ServiceError
from memsite.llm.errors import LLMError, Reason
from memsite.llm.gateway import complete
from memsite.llm.providers.offline import words
from memsite.llm.purposes import Purpose
from memsite.queue import broker_checked, broker_require, enqueue
from memsite.quotas.checks import acting_user_id, tick_quota_require, ticking_quota_require
from memsite.quotas.selectors import llm_spend_today, tick_queue_cutoff, ticks_in_flight

logger = logging.getLogger(__name__)

MAX_CONCEPTS = 3  # concept neurons one thought adds
FACT_SOURCE = "deep_reflect"  # a fact's source, as her deepReflect names it
CONCEPT_MIN_CHARS = 4
MAX_INTERVAL_S = 7 * 24 * 3_600
TICKS_PER_BEAT = 500  # brains started by one beat; the rest stay due for the next
WORKER_STOPPED = "Its worker stopped: the lease ran out."


class LeaseLost(Exception):
    """Another tick took the brain over (this one's lease had run out)."""


@dataclass
class _Tick:
    agent: Agent
    run: TickRun
    lease: datetime
    view: BrainView  # what the tick read before it decided
    suggestions: list[Suggestion]
    ended: bool = False  # the run is ended and the lease given back


# The lease -------------------------------------------------------------------------------------


def _lease_until() -> datetime:
    return timezone.now() + timedelta(seconds=settings.MEMSITE_TICK_LEASE_S)


def _lease_renewed(tick: _Tick) -> datetime | None:
    """The lease's new end once a tenth of it is spent, or None."""
    if timezone.now() < tick.lease - timedelta(seconds=0.9 * settings.MEMSITE_TICK_LEASE_S):
        return None
    return _lease_until()


def _lease_release(tick: _Tick) -> None:
    Brain.objects.filter(pk=tick.agent.pk, lease_until=tick.lease).update(lease_until=None)


# Steps -----------------------------------------------------------------------------------------


def _step_noted(tick: _Tick, name: str, started: float, **detail: Any) -> None:
    """Add a finished step to the run; the next write of the run saves it."""
    step = {"name": name, "ms": round((time.monotonic() - started) * 1_000), "detail": detail}
    tick.run.steps = [*tick.run.steps, step]


def _step_saved(tick: _Tick, name: str, started: float, fields: dict[str, Any] | None = None, **detail: Any) -> None:
    """Add a finished step to the run and save the run's steps (and other `fields` of the run)
    now, for a step that something slow follows: the check that the tick holds its lease, the
    write and the lease's renewal when due, in one transaction (one commit: on PostgreSQL each
    commit waits for the WAL flush); nothing is written once the lease is lost."""
    _step_noted(tick, name, started, **detail)
    with transaction.atomic():
        # A subquery, not a join: on SQLite an UPDATE through a join costs a SELECT first.
        leased = Brain.objects.filter(pk=tick.agent.pk, lease_until=tick.lease)
        held = TickRun.objects.filter(pk=tick.run.pk, brain__in=leased)
        if not held.update(steps=tick.run.steps, **(fields or {})):
            raise LeaseLost
        lease = _lease_renewed(tick)
        # Only if the lease is still this tick's: the check above locks nothing, and another tick
        # may take over a lease that ran out meanwhile.
        if lease is not None and not leased.update(lease_until=lease):
            raise LeaseLost
    tick.lease = lease or tick.lease


@contextmanager
def _writing(tick: _Tick) -> Iterator[BrainWrite]:
    """`brain_writing`, only while the tick holds its lease. The run's steps, with those noted
    since it was last written, are saved with the writes, and the lease is renewed with them
    when due."""
    with brain_writing(agent=tick.agent) as write:
        if write.brain.lease_until != tick.lease:
            raise LeaseLost
        yield write
        TickRun.objects.filter(pk=tick.run.pk).update(steps=tick.run.steps)
        lease = _lease_renewed(tick)
        if lease is not None:
            write.set(lease_until=lease)
    tick.lease = lease or tick.lease


def _ask(tick: _Tick, purpose: str, messages: list[dict], schema: type) -> tuple[Any, int]:
    completion = complete(
        purpose=purpose,
        messages=messages,
        schema=schema,
        served=tick.run,
        user_id=tick.run.user_id,
        model=tick.agent.model,
        max_tokens=tick.agent.reserved_output_tokens,
    )
    return completion.value, completion.call.pk


def _failure_detail(exc: LLMError | ServiceError) -> dict[str, Any]:
    """A step's detail when its LLM call failed or its prompt did not fit: what went wrong, and
    the ledger's call if one was made."""
    call = exc.call if isinstance(exc, LLMError) else None
    return {"error": exc.message, "call": call.pk if call is not None else None}


# The tick --------------------------------------------------------------------------------------


def tick_run(*, agent_id: int) -> TickRun | None:
    """Run one tick of the agent's brain. None when there is nothing to run: no such agent, or
    another tick holds the brain's lease."""
    agent = Agent.objects.filter(pk=agent_id).first()
    if agent is None:
        return None
    tick = _open(agent)
    if tick is None:
        logger.info("Tick of agent %s skipped: another tick holds its brain or has just run.", agent_id)
        return None
    try:
        _loop(tick)
    except LeaseLost:
        logger.warning("Tick of agent %s stopped: another tick took its brain over.", agent_id)
    except Exception as exc:
        logger.exception("Tick of agent %s failed.", agent_id)
        _fail(tick, f"{type(exc).__name__}: {exc}", record=False)
    finally:
        if not tick.ended:
            _lease_release(tick)
    tick.run.refresh_from_db()
    return tick.run


def _open(agent: Agent) -> _Tick | None:
    """Read what the tick decides on, then take the brain's lease and make the tick's run,
    numbered after the brain's count, in one transaction; None when another tick holds the
    lease or ran since the read. The read is made before, not under the brain's lock: on SQLite
    that lock is the whole database's. A lease that ran out was a dead worker's: its run, still
    `running`, fails."""
    started = time.monotonic()
    brain = Brain.objects.filter(pk=agent.pk).first() or brain_create(agent=agent)
    if brain.lease_until is not None and brain.lease_until > timezone.now():
        _queue_mark_clear(brain)  # the tick under way stands for the queued one
        return None
    view = brain_view(brain=brain)
    exploration = explore_next(brain=brain)
    with brain_writing(agent=agent) as write:
        now = timezone.now()
        held = write.brain.lease_until
        # Held, or another tick ran since the read: this one would decide on what it read.
        if (held is not None and held > now) or write.brain.tick_count != brain.tick_count:
            _queue_mark_clear(write.brain)
            return None
        if held is not None:
            TickRun.objects.filter(brain=write.brain, status=TickRun.Status.RUNNING).update(
                status=TickRun.Status.FAILED, error=WORKER_STOPPED, ended_at=now
            )
        lease = _lease_until()
        number = write.brain.tick_count + 1
        suggestions = exploration.suggestions
        user_id = write.brain.tick_queued_by_id or write.brain.ticking_by_id
        run = TickRun(brain=write.brain, number=number, user_id=user_id)
        tick = _Tick(agent=agent, run=run, lease=lease, view=view, suggestions=suggestions)
        _step_noted(tick, "read", started, suggestions=[suggestion.key for suggestion in suggestions])
        tick.run.save()
        write.set(tick_count=number, lease_until=lease, tick_queued_at=None, tick_queued_by=None)
        write.folders_spent(exploration.spent)
    return tick


def _queue_mark_clear(brain: Brain) -> None:
    """The brain's queued tick, as `brain` read it, has begun: it no longer counts as queued.
    One queued since (after the read) keeps its mark."""
    if brain.tick_queued_at is not None:
        Brain.objects.filter(pk=brain.pk, tick_queued_at=brain.tick_queued_at).update(
            tick_queued_at=None, tick_queued_by=None
        )


def _loop(tick: _Tick) -> None:
    agent, view = tick.agent, tick.view

    started = time.monotonic()
    decision: Decision | None = None
    try:
        messages = decide_messages(agent=agent, view=view, suggestions=tick.suggestions)
        decision, call = _ask(tick, Purpose.DECIDE, messages, Decision)
    except ServiceError as exc:  # the prompt does not fit the agent's window
        _step_noted(tick, "decide", started, error=exc.message)
        _fail(tick, f"decide: {exc.message}")
        return
    except LLMError as exc:
        if exc.reason != Reason.INVALID_REPLY:
            _step_noted(tick, "decide", started, **_failure_detail(exc))
            _fail(tick, f"decide: {exc.message}")
            return
        outcome = refused(f"No valid action was decided: {exc.message}")
        _step_saved(tick, "decide", started, **_failure_detail(exc))
    else:
        _step_saved(
            tick,
            "decide",
            started,
            fields={"action": decision.action, "arguments": decision.given},
            action=decision.action,
            arguments=decision.given,
            reason=decision.reason,
            call=call,
        )

        started = time.monotonic()
        outcome = action_run(agent=agent, name=decision.action, arguments=decision.given)
        _step_saved(tick, "act", started, ok=outcome.ok, summary=outcome.summary, **outcome.detail)

    started = time.monotonic()
    reflection: Reflection | None = None
    try:
        reflection, call = _ask(
            tick,
            Purpose.REFLECT,
            reflect_messages(
                agent=agent,
                action=decision.action if decision else "",
                arguments=decision.given if decision else {},
                reason=decision.reason if decision else "",
                ok=outcome.ok,
                summary=outcome.summary,
                content=outcome.content,
                view=view,
            ),
            Reflection,
        )
    except (LLMError, ServiceError) as exc:
        _step_noted(tick, "reflect", started, **_failure_detail(exc))
    else:
        _step_noted(
            tick, "reflect", started, thought=reflection.thought, inner_thought=reflection.inner_thought, call=call
        )

    brain = _record(tick, decision, outcome, reflection)  # it saves the reflection's step too

    if tick.run.number % settings.MEMSITE_TICK_DEEP_REFLECT_EVERY == 0:
        brain = _deep_reflect(tick, brain)  # it leaves the plan as it was

    plan_done = brain.plan_step >= len(brain.plan or [])
    if plan_done or not outcome.ok:
        _replan(tick, brain, because="the action failed" if not outcome.ok else "the plan is done")

    _finish(tick, status=TickRun.Status.DONE, outcome=outcome.summary, error="" if outcome.ok else outcome.summary)


def _key_terms(text: str) -> list[str]:
    """The thought's most frequent content terms (ties in order of appearance)."""
    counts: dict[str, int] = {}
    for term, _ in words(text):
        if len(term) >= CONCEPT_MIN_CHARS and not term.isdigit():
            counts[term] = counts.get(term, 0) + 1
    order = {term: position for position, term in enumerate(counts)}
    return sorted(counts, key=lambda term: (-counts[term], order[term]))[:MAX_CONCEPTS]


def _record(tick: _Tick, decision: Decision | None, outcome: Outcome, reflection: Reflection | None) -> Brain:
    """What the tick did and felt, in one write with its step: perception, thought and its
    concepts, inner thought, episode, chat line, log, emotions, hormones, last error, plan step.
    The brain as the write left it."""
    started = time.monotonic()
    now = timezone.now()
    thought = clip(reflection.thought.strip(), "entry_chars") if reflection is not None else ""
    terms = _key_terms(thought)
    with _writing(tick) as write:
        brain = write.brain
        self_neuron, *neurons = write.neurons(
            [
                (SELF, SELF, 0.0),
                *((item.kind, item.key, 1.0) for item in outcome.perceived),
                *(("concept", term, 0.5) for term in terms),
            ],
            at=now,
        )
        perceived, concepts = neurons[: len(outcome.perceived)], neurons[len(outcome.perceived) :]
        write.connect_all(
            [
                *((self_neuron, neuron) for neuron in (*perceived, *concepts)),
                *((neuron, concept) for neuron in perceived for concept in concepts),
                *pairwise(concepts),
            ],
            at=now,
        )
        novel = outcome.novel
        entries: list[tuple[str, str, Any]] = []
        for item in outcome.perceived:
            novel |= write.explored(kind=item.kind, key=item.key, summary=item.summary, at=now, folder=item.folder)
            message = f"explore_{item.kind}: {item.key}"
            log = mj.entry(RecordKind.LOG, item.key, now, type=f"explore_{item.kind}")
            entries.append((RecordKind.LOG, message, log))
        if outcome.state or outcome.counters:
            write.set(extra_state=_state_counted(brain.extra_state or {}, outcome))
        write.records([*entries, *_entries(decision, outcome, reflection, thought, now)], at=now)

        felt = affect.emotions_felt(affect.emotions_decayed(brain.emotions), succeeded=outcome.ok, novel=novel)
        hormones = affect.hormones_after(brain.hormones, succeeded=outcome.ok, novel=novel)
        changes: dict[str, Any] = {}
        if felt != brain.emotions:
            changes["emotions"] = felt
        if hormones != brain.hormones:
            changes["hormones"] = hormones
        error = "" if outcome.ok else outcome.summary
        if error != brain.last_error:
            changes["last_error"] = error
        if outcome.ok and brain.plan_step < len(brain.plan or []):
            changes["plan_step"] = brain.plan_step + 1
        if changes:
            write.set(**changes)
        _step_noted(
            tick, "record", started, perceived=[item.key for item in outcome.perceived], last_error=brain.last_error
        )
    return brain


def _state_counted(state: dict[str, Any], outcome: Outcome) -> dict[str, Any]:
    """memory.json's other state keys with what the action set and counted."""
    state = {**state, **outcome.state}
    for name, step in outcome.counters.items():
        previous = state.get(name)
        counted = isinstance(previous, int) and not isinstance(previous, bool)
        state[name] = (previous if counted else 0) + step
    return state


def _entries(
    decision: Decision | None,
    outcome: Outcome,
    reflection: Reflection | None,
    thought: str,
    now: datetime,
) -> list[tuple[str, str, Any]]:
    """The tick's list entries after its perception: thought, inner thought, log, episode, chat;
    each (kind, text, the entry as her writes one)."""
    texts: list[tuple[str, str, dict[str, Any]]] = []  # (kind, text, the entry's other keys)
    if reflection is not None:
        inner = (reflection.inner_thought or "").strip()
        texts.append((RecordKind.THOUGHT, thought, {}))
        texts.extend([(RecordKind.INNER_THOUGHT, inner, {})] if inner else [])
        texts.append((RecordKind.LOG, thought, {"type": "thought"}))
    else:
        kind = "action" if outcome.ok else "error"
        texts.append((RecordKind.LOG, outcome.summary, {"type": kind}))
    action = decision.action if decision else ""
    what = f"{action} {json.dumps(decision.given, ensure_ascii=False)}" if decision else "no action"
    episode = {"type": action or "none", "what": clip(what, "entry_chars"), "where": outcome.where}
    texts.append((RecordKind.EPISODE, outcome.summary, episode))
    texts.extend([(RecordKind.CHAT, outcome.chat, {"role": "assistant"})] if outcome.chat else [])
    return [(kind, text, mj.entry(kind, text, now, **keys)) for kind, text, keys in texts]


def _deep_reflect(tick: _Tick, brain: Brain) -> Brain:
    """A new self-summary, and new goals, facts and self-instructions, from `brain` as the
    record step left it. The brain as the deep reflection leaves it (with the plan as it was)."""
    started = time.monotonic()
    view = brain_view_renewed(
        view=tick.view, brain=brain, thoughts=10, episodes=10, facts=10, self_instructions=cap("self_instruction")
    )
    try:
        reply, call = _ask(
            tick, Purpose.DEEP_REFLECT, deep_reflect_messages(agent=tick.agent, view=view), DeepReflection
        )
    except (LLMError, ServiceError) as exc:
        _step_saved(tick, "deep_reflect", started, **_failure_detail(exc))  # a new plan's LLM call may follow
        return brain
    now = timezone.now()
    added_goals: list[Goal] = []
    refused_goals: list[str] = []
    with _writing(tick) as write:
        brain = write.brain
        summary = reply.self_summary.strip()
        if summary != brain.self_summary:
            write.set(self_summary=summary)
        known = {goal.casefold() for goal in Goal.objects.filter(brain=brain).values_list("text", flat=True)}
        for n, text in enumerate(reply.goals):
            if text.casefold() in known:
                continue
            try:
                goal = write.goal(text=text, item=mj.goal_item(text=text, at=now, index=n), at=now)
            except Conflict as exc:  # every goal is active and the cap is reached: nothing was written
                refused_goals.append(exc.message)
                break
            known.add(goal.text.casefold())
            added_goals.append(goal)
        known_facts = {record.text.casefold() for record in view.facts}
        facts = [fact for fact in reply.facts if fact.casefold() not in known_facts]
        known_rules = {record.text.casefold() for record in view.self_instructions}
        rules = [rule for rule in reply.self_instructions if rule.casefold() not in known_rules]
        write.records(
            [
                *((RecordKind.FACT, fact, mj.entry(RecordKind.FACT, fact, now, source=FACT_SOURCE)) for fact in facts),
                *(
                    (RecordKind.SELF_INSTRUCTION, rule, mj.entry(RecordKind.SELF_INSTRUCTION, rule, now))
                    for rule in rules
                ),
                (
                    RecordKind.LOG,
                    f"deep reflection: {len(added_goals)} goals, {len(facts)} facts, {len(rules)} self-instructions",
                    mj.entry(RecordKind.LOG, summary, now, type="deep_reflect"),
                ),
            ],
            at=now,
        )
        detail: dict[str, Any] = {
            "self_summary": summary,
            "goals": [goal.text for goal in added_goals],
            "facts": facts,
            "self_instructions": rules,
            "call": call,
        }
        if refused_goals:
            detail["refused"] = refused_goals[0]
        _step_noted(tick, "deep_reflect", started, **detail)
    return brain


def _replan(tick: _Tick, brain: Brain, *, because: str) -> None:
    """A new plan, from `brain` as the tick's last write left it."""
    started = time.monotonic()
    view = brain_view_renewed(view=tick.view, brain=brain)
    exploration = explore_next(brain=brain)
    try:
        reply, call = _ask(
            tick, Purpose.DECIDE, plan_messages(agent=tick.agent, view=view, suggestions=exploration.suggestions), Plan
        )
    except (LLMError, ServiceError) as exc:
        _step_noted(tick, "replan", started, because=because, **_failure_detail(exc))  # the run's end saves it
        return
    steps = [clip(step, "entry_chars") for step in reply.steps[: cap("plan_steps")]]
    now = timezone.now()
    with _writing(tick) as write:
        fields: dict[str, Any] = {"plan": steps, "plan_step": 0}
        if "plan" in write.brain.extra_state:  # other keys of the plan replaced (her createdAt)
            fields["extra_state"] = {k: v for k, v in write.brain.extra_state.items() if k != "plan"}
        write.set(**fields)
        write.folders_spent(exploration.spent)
        write.record(
            kind=RecordKind.LOG,
            text=f"new plan ({because}): " + " | ".join(steps),
            item=mj.entry(RecordKind.LOG, " | ".join(steps), now, type="plan"),
            at=now,
        )
        _step_noted(tick, "replan", started, because=because, steps=steps, call=call)


def _fail(tick: _Tick, error: str, *, record: bool = True) -> None:
    """End the tick as failed; with `record`, the brain takes it as a failure: last error, a log
    entry, emotions and hormones."""
    if record:
        now = timezone.now()
        with _writing(tick) as write:
            brain = write.brain
            log = mj.entry(RecordKind.LOG, error, now, type="error")
            write.record(kind=RecordKind.LOG, text=error, item=log, at=now)
            write.set(
                last_error=error,
                emotions=affect.emotions_felt(affect.emotions_decayed(brain.emotions), succeeded=False, novel=False),
                hormones=affect.hormones_after(brain.hormones, succeeded=False, novel=False),
            )
    _finish(tick, status=TickRun.Status.FAILED, outcome="", error=error)


def _finish(tick: _Tick, *, status: str, outcome: str, error: str) -> None:
    """The run's end, with its steps, the emotions and hormones the tick left, and the lease
    given back, in one transaction; runs beyond the cap go. A tick that lost its lease leaves
    its run to the tick that took over (which has failed it)."""
    brain = Brain.objects.filter(pk=tick.agent.pk)
    leased = brain.filter(lease_until=tick.lease)
    run = tick.run
    with transaction.atomic():
        ended = TickRun.objects.filter(pk=run.pk, brain__in=leased).update(
            status=status,
            steps=run.steps,
            outcome=outcome[:10_000],
            error=error[:10_000],
            emotions=Subquery(brain.values("emotions")),
            hormones=Subquery(brain.values("hormones")),
            ended_at=timezone.now(),
        )
        if not ended:
            logger.warning("Tick of agent %s ended after another tick took its brain over.", tick.agent.pk)
            return
        TickRun.objects.filter(brain_id=tick.agent.pk, number__lte=run.number - cap("tick")).delete()
        _lease_release(tick)
    tick.ended = True


# Ticking ---------------------------------------------------------------------------------------


def _enqueue(agent_id: int) -> None:
    from agents.brains.tasks import tick_run as tick_run_task  # tasks import this module

    # Inside the caller's transaction: a broker that does not answer rolls it back.
    enqueue(tick_run_task, agent_id=agent_id)


def _interval_check(interval_s: object) -> int:
    shortest = settings.MEMSITE_TICK_MIN_INTERVAL_S
    if isinstance(interval_s, bool) or not isinstance(interval_s, int) or not shortest <= interval_s <= MAX_INTERVAL_S:
        raise InvalidInput(
            f"interval_s must be an integer from {shortest} to {MAX_INTERVAL_S}: beat queues due ticks "
            f"every {shortest} s (MEMSITE_TICK_MIN_INTERVAL_S), so a shorter interval ticks no faster."
        )
    return interval_s


def ticking_start(*, agent: Agent, interval_s: int, user: Any = None) -> Brain:
    """Tick the agent every `interval_s` seconds for `user`, starting now (or, if it ticks
    already, at the new interval from its next tick at the latest). The agents ticking for one
    user are capped and their LLM budget must not be spent (QuotaExceeded, 429)."""
    interval_s = _interval_check(interval_s)
    broker_require()  # beat queues the ticks: with the broker down none would run
    user_id = acting_user_id(user)
    now = timezone.now()
    with transaction.atomic():
        ticking_quota_require(user_id=user_id, agent_id=agent.pk)
        with brain_writing(agent=agent) as write:
            brain = write.brain
            if brain.ticking and brain.next_tick_at is not None:
                next_at = min(brain.next_tick_at, now + timedelta(seconds=interval_s))
            else:
                next_at = now
            write.set(ticking=True, tick_interval_s=interval_s, next_tick_at=next_at, ticking_by_id=user_id)
    return brain


def ticking_pause(*, agent: Agent) -> Brain:
    """Stop ticking; a tick that is running ends normally."""
    with brain_writing(agent=agent) as write:
        write.set(ticking=False, next_tick_at=None)
    return write.brain


def _queue_mark(agent_id: int, user_id: int | None, now: datetime) -> bool:
    """Mark a tick of the brain queued for `user_id`; False when one is queued already and not
    yet begun (it will tick the brain: this one would add nothing)."""
    free = Q(tick_queued_at__isnull=True) | Q(tick_queued_at__lte=tick_queue_cutoff(now))
    return bool(Brain.objects.filter(free, pk=agent_id).update(tick_queued_at=now, tick_queued_by_id=user_id))


def tick_request(*, agent: Agent, user: Any = None) -> None:
    """Run one tick now for `user`, whether or not the agent ticks (queued once the transaction
    commits; refused with nothing made when the broker does not answer, or past the user's
    quota). A tick of the agent already queued and not yet begun stands for this one."""
    user_id = acting_user_id(user)
    with transaction.atomic():
        brain_create(agent=agent)
        tick_quota_require(user_id=user_id)
        if _queue_mark(agent.pk, user_id, timezone.now()):
            _enqueue(agent.pk)


def ticks_sweep_stale() -> int:
    """Fail the runs left `running` by ticks whose worker stopped: their brain's lease ran out
    (a live tick keeps renewing it). Without it such a run would wait for the brain's
    next tick, which a brain ticked on request alone may never have. Run by beat; how many
    runs it failed."""
    now = timezone.now()
    ended = Q(brain__lease_until__isnull=True) | Q(brain__lease_until__lte=now)
    return TickRun.objects.filter(ended, status=TickRun.Status.RUNNING).update(
        status=TickRun.Status.FAILED, error=WORKER_STOPPED, ended_at=now
    )


class _Room:
    """How many more ticks each user may have queued, during one beat: counted at a user's
    first due brain, then kept, so a beat costs two queries per user rather than per brain.
    A user whose LLM budget is spent has none."""

    def __init__(self, now: datetime):
        self.now = now
        self.left: dict[int, int] = {}
        self.skipped: dict[int, int] = {}

    def take(self, user_id: int | None) -> bool:
        if user_id is None:
            return True
        if user_id not in self.left:
            spent = llm_spend_today(user_id=user_id, now=self.now).spent
            in_flight = ticks_in_flight(user_id=user_id, now=self.now)
            self.left[user_id] = 0 if spent else settings.MEMSITE_QUOTA_TICKS - in_flight
        if self.left[user_id] <= 0:
            self.skipped[user_id] = self.skipped.get(user_id, 0) + 1
            return False
        self.left[user_id] -= 1
        return True

    def give_back(self, user_id: int | None) -> None:
        if user_id is not None:
            self.left[user_id] += 1


def _start_due(agent_id: int, next_at: datetime, interval_s: int, user_id: int | None, room: _Room) -> bool:
    """Move the brain's next tick on and queue this one, if no other beat moved it first, its
    user has room, and it has no tick queued already. Whether it queued one."""
    with transaction.atomic():
        moved = Brain.objects.filter(pk=agent_id, ticking=True, next_tick_at=next_at).update(
            next_tick_at=room.now + timedelta(seconds=interval_s)
        )
        if not moved or not room.take(user_id):
            return False
        if not _queue_mark(agent_id, user_id, room.now):
            room.give_back(user_id)
            return False
        _enqueue(agent_id)
    return True


def ticks_start_due() -> int:
    """Queue a tick for each ticking brain whose tick is due, and move its next tick on by its
    interval. Run by beat; two beats at once queue each tick once. A brain whose user has no
    room for another tick (MEMSITE_QUOTA_TICKS, or a spent LLM budget), or that has a tick
    queued already, skips this tick. Returns how many it queued."""
    now = timezone.now()
    due = list(
        Brain.objects.filter(ticking=True, next_tick_at__lte=now)
        .order_by("next_tick_at")
        .values_list("pk", "next_tick_at", "tick_interval_s", "ticking_by_id")[:TICKS_PER_BEAT]
    )
    if not due:
        return 0
    room = _Room(now)
    with broker_checked():
        started = sum(_start_due(*row, room=room) for row in due)
    if room.skipped:
        logger.info("Due ticks skipped, by user: their quota or LLM budget is reached: %s.", room.skipped)
    return started
