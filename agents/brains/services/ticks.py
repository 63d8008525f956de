"""Ticks of the reflection loop (seed 002): decide, act, reflect, record; every few ticks a deep
reflection; a new plan when the plan is done or the action failed. `logic.tick` decides what a
tick writes; this module asks the LLM, acts, and writes it under the tick's lease (`leases`).
Ticking: the beat's due ticks, requests and the sweep of stopped workers' runs. See docs/ticks.md."""

import logging
import math
import time
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, TypeVar

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from pydantic import BaseModel

from agents.brains.logic import memory_json as mj
from agents.brains.logic.caps import cap
from agents.brains.logic.outcomes import Outcome
from agents.brains.logic.thoughts import RECALL_SCAN, Place, Recall, recalled
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
    undecided,
)
from agents.brains.models import Brain, Goal, TickRun
from agents.brains.selectors.quotas import tick_queue_cutoff, ticks_in_flight
from agents.brains.selectors.ticks import BrainView, brain_explored_recent, brain_view, brain_view_renewed
from agents.brains.services.actions import Suggestion, action_run, explore_next
from agents.brains.services.brains import GOAL_CHARS, BrainWrite, brain_create, brain_writing
from agents.brains.services.leases import (
    Lease,
    LeaseLost,
    lease_release,
    lease_until,
    leased_writing,
    run_ended,
    run_saved,
)
from agents.brains.services.prompts import (
    Decision,
    DeepReflection,
    Plan,
    Reflection,
    decide_prompt,
    deep_reflect_prompt,
    plan_prompt,
    reflect_prompt,
    relevant,
)
from agents.context.models import Agent
from memsite.errors import Conflict, InvalidInput, ServiceError
from memsite.llm.errors import LLMError, Reason
from memsite.llm.gateway import complete
from memsite.llm.prompt import Prompt
from memsite.llm.purposes import Purpose
from memsite.queue import broker_checked, broker_require, enqueue
from memsite.quotas.checks import tick_quota_require, ticking_quota_require
from memsite.quotas.selectors import member_cap, spends_today
from memsite.spaces.models import Space
from memsite.spaces.principals import Principal, principal_rebuilt

Reply = TypeVar("Reply", bound=BaseModel)

logger = logging.getLogger(__name__)

MAX_INTERVAL_S = 7 * 24 * 3_600
TICKS_PER_BEAT = 500  # brains started by one beat; the rest stay due for the next
WORKER_STOPPED = "Its worker stopped: the lease ran out."
# A tick is never run as anyone but whoever asked for it.
ASKER_GONE = "Whoever asked for this tick (a member, or their token) can no longer act in this space."


def _member_require(by: Principal) -> None:
    if by.is_system:
        raise InvalidInput("An agent ticks for a member: memsite itself asks for no tick.")


@dataclass
class _Tick:
    lease: Lease
    run: TickRun
    view: BrainView  # what the tick read before it decided
    suggestions: list[Suggestion]
    ended: bool = False  # the run is ended and the lease given back

    @property
    def agent(self) -> Agent:
        return self.lease.agent


def _state_of(brain: Brain) -> BrainState:
    return BrainState(
        emotions=brain.emotions,
        hormones=brain.hormones,
        last_error=brain.last_error,
        plan=brain.plan or [],
        plan_step=brain.plan_step,
        extra_state=brain.extra_state or {},
        self_summary=brain.self_summary,
    )


# Steps -----------------------------------------------------------------------------------------


def _step_noted(tick: _Tick, name: str, started: float, **detail: Any) -> None:
    """Add a finished step to the run; the next write of the run saves it."""
    step = {"name": name, "ms": round((time.monotonic() - started) * 1_000), "detail": detail}
    tick.run.steps = [*tick.run.steps, step]


def _step_saved(tick: _Tick, name: str, started: float, fields: dict[str, Any] | None = None, **detail: Any) -> None:
    """Add a finished step to the run and save it now (with other `fields` of the run), for a
    step that something slow follows."""
    _step_noted(tick, name, started, **detail)
    run_saved(tick.lease, tick.run, fields)


def _writing(tick: _Tick) -> AbstractContextManager[BrainWrite]:
    """`brain_writing` while the tick holds its lease, saving the run's steps noted since."""
    return leased_writing(tick.lease, tick.run)


def _ask(tick: _Tick, purpose: str, prompt: Prompt, schema: type[Reply], *, by: Principal) -> tuple[Reply, int]:
    completion = complete(
        purpose=purpose,
        messages=prompt.messages,
        reading=prompt.reading,
        schema=schema,
        served=tick.run,
        by=by,
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
    """Run one tick of the agent's brain, as whoever asked for it (who queued it, else who set
    the agent ticking): its LLM calls, writes and searches are theirs, within their folder, caps
    and budgets; it fails if they can no longer act in the space. None when there is nothing to
    run: no such agent, or another tick holds the brain's lease."""
    agent = Agent.objects.filter(pk=agent_id).first()
    if agent is None:
        return None
    tick = _open(agent)
    if tick is None:
        logger.info("Tick of agent %s skipped: another tick holds its brain or has just run.", agent_id)
        return None
    try:
        by = _acting_for(agent.space, (tick.run.user_id, tick.run.token_id))
        if by is None:
            _fail(tick, ASKER_GONE, record=False)
        else:
            _loop(tick, by=by)
    except LeaseLost:
        logger.warning("Tick of agent %s stopped: another tick took its brain over.", agent_id)
    except Exception as exc:
        logger.exception("Tick of agent %s failed.", agent_id)
        _fail(tick, f"{type(exc).__name__}: {exc}", record=False)
    finally:
        if not tick.ended:
            lease_release(tick.lease)
    tick.run.refresh_from_db()
    return tick.run


def _acting_for(space: Space, ids: tuple[int | None, int | None]) -> Principal | None:
    """Who a tick acts for, by the (user, token) ids its row keeps, as they may act in the space
    now; None if they can no longer, or if there is no user (deleted, or no one ever set the
    agent ticking): a tick is a member's work, never memsite's own."""
    user_id, token_id = ids
    return principal_rebuilt(space=space, user_id=user_id, token_id=token_id) if user_id is not None else None


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
        lease = Lease(agent=agent, until=lease_until())
        number = write.brain.tick_count + 1
        suggestions = exploration.suggestions
        run = TickRun(brain=write.brain, number=number, **_asker(write.brain))
        tick = _Tick(lease=lease, run=run, view=view, suggestions=suggestions)
        _step_noted(tick, "read", started, suggestions=[suggestion.key for suggestion in suggestions])
        tick.run.save()
        write.set(
            tick_count=number, lease_until=lease.until, tick_queued_at=None, tick_queued_by=None, tick_queued_token=None
        )
        write.folders_spent(exploration.spent)
    return tick


def _asker(brain: Brain) -> dict[str, int | None]:
    """Whose work a tick of `brain` beginning now is: who queued it, else who set it ticking."""
    if brain.tick_queued_by_id is not None:
        return {"user_id": brain.tick_queued_by_id, "token_id": brain.tick_queued_token_id}
    return {"user_id": brain.ticking_by_id, "token_id": brain.ticking_token_id}


def _queue_mark_clear(brain: Brain) -> None:
    """The brain's queued tick, as `brain` read it, has begun: it no longer counts as queued.
    One queued since (after the read) keeps its mark."""
    if brain.tick_queued_at is not None:
        Brain.objects.filter(pk=brain.pk, tick_queued_at=brain.tick_queued_at).update(
            tick_queued_at=None, tick_queued_by=None, tick_queued_token=None
        )


def _loop(tick: _Tick, *, by: Principal) -> None:
    acted = _decide_and_act(tick, by=by)
    if acted is None:
        return
    decided, outcome = acted
    reflected = _reflect(tick, decided, outcome, by=by)
    brain = _record(tick, decided, outcome, reflected)  # it saves the reflection's step too
    every = settings.MEMSITE_TICK_DEEP_REFLECT_EVERY
    then = finish(number=tick.run.number, deep_reflect_every=every, brain=_state_of(brain), outcome=outcome)
    if then.deep_reflect:
        brain = _deep_reflect(tick, brain, by=by)  # it leaves the plan as it was
    if then.replan_because is not None:
        _replan(tick, brain, because=then.replan_because, by=by)
    _finish(tick, status=then.status, outcome=then.outcome, error=then.error)


def _decide_and_act(tick: _Tick, *, by: Principal) -> tuple[Decided | None, Outcome] | None:
    """The decision and what the action came to; no decision when the reply never validated
    (the outcome says so). None when the tick failed: the call failed or the prompt did not fit."""
    started = time.monotonic()
    try:
        prompt = decide_prompt(agent=tick.agent, view=tick.view, suggestions=tick.suggestions)
        decision, call = _ask(tick, Purpose.DECIDE, prompt, Decision, by=by)
    except ServiceError as exc:  # the prompt does not fit the agent's window
        _step_noted(tick, "decide", started, error=exc.message)
        _fail(tick, f"decide: {exc.message}")
        return None
    except LLMError as exc:
        if exc.reason != Reason.INVALID_REPLY:
            _step_noted(tick, "decide", started, **_failure_detail(exc))
            _fail(tick, f"decide: {exc.message}")
            return None
        _step_saved(tick, "decide", started, **_failure_detail(exc))
        return None, undecided(exc.message)
    decided = Decided(action=decision.action, arguments=decision.given, reason=decision.reason)
    chosen = {"action": decided.action, "arguments": decided.arguments}
    _step_saved(tick, "decide", started, fields=chosen, **chosen, reason=decided.reason, call=call)

    started = time.monotonic()
    outcome = action_run(agent=tick.agent, name=decided.action, arguments=decided.arguments, by=by)
    _step_saved(tick, "act", started, ok=outcome.ok, summary=outcome.summary, **outcome.detail)
    return decided, outcome


def _recall(tick: _Tick, outcome: Outcome) -> Recall:
    """What the reflection recalls among the places explored before this tick: those that touch
    on the primary goal, or with no goal on what the action came to. A tick that did nothing
    goes over them in turn, by its number."""
    perceived = {item.key for item in outcome.perceived}
    explored = brain_explored_recent(brain=tick.view.brain, kind=None, count=RECALL_SCAN)
    places = [Place(key=item.key, summary=item.summary) for item in explored if item.key not in perceived]
    goal = tick.view.primary_goal
    about = goal.text if goal is not None else f"{outcome.summary}\n{outcome.content}"
    found = relevant(about, [f"{place.key} {place.summary}" for place in places], limit=len(places))
    turn = 0 if outcome.happened else tick.run.number
    return recalled(goal.text if goal is not None else None, places, found, turn=turn)


def _reflect(tick: _Tick, decided: Decided | None, outcome: Outcome, *, by: Principal) -> Reflected | None:
    """The reflection on what the tick did, its goal and what it recalls for it; None when its
    call failed (its step says why)."""
    started = time.monotonic()
    recall = _recall(tick, outcome)
    prompt = reflect_prompt(
        agent=tick.agent,
        action=decided.action if decided else "",
        arguments=decided.arguments if decided else {},
        reason=decided.reason if decided else "",
        ok=outcome.ok,
        summary=outcome.summary,
        content=outcome.content,
        view=tick.view,
        recall=recall,
    )
    try:
        reflection, call = _ask(tick, Purpose.REFLECT, prompt, Reflection, by=by)
    except (LLMError, ServiceError) as exc:
        _step_noted(tick, "reflect", started, **_failure_detail(exc))
        return None
    thought, inner = reflection.thought, reflection.inner_thought
    detail = {"goal": recall.goal, "recalled": [place.key for place in recall.places]}
    _step_noted(tick, "reflect", started, thought=thought, inner_thought=inner, call=call, **detail)
    return Reflected(thought=thought, inner_thought=inner)


def _record(tick: _Tick, decided: Decided | None, outcome: Outcome, reflected: Reflected | None) -> Brain:
    """What the tick did and felt, in one write with its step: perception, thought and its
    concepts, inner thought, episode, log, emotions, hormones, last error, plan step.
    The brain as the write left it."""
    started = time.monotonic()
    now = timezone.now()
    record = recording(decided, outcome, reflected, now)
    with _writing(tick) as write:
        neurons = write.neurons(record.neurons, at=now)
        write.connect_all([(neurons[source], neurons[target]) for source, target in record.links], at=now)
        novel = outcome.novel
        for item in outcome.perceived:
            novel |= write.explored(kind=item.kind, key=item.key, summary=item.summary, at=now, folder=item.folder)
        write.records(record.entries, at=now)
        changes = record_changes(_state_of(write.brain), outcome, novel=novel)
        if changes:
            write.set(**changes)
        perceived = [item.key for item in outcome.perceived]
        _step_noted(tick, "record", started, perceived=perceived, last_error=write.brain.last_error)
    return write.brain


def _deep_reflect(tick: _Tick, brain: Brain, *, by: Principal) -> Brain:
    """A new self-summary, and new goals, facts and self-instructions, from `brain` as the
    record step left it. The brain as the deep reflection leaves it (with the plan as it was)."""
    started = time.monotonic()
    view = brain_view_renewed(
        view=tick.view, brain=brain, thoughts=10, episodes=10, facts=10, self_instructions=cap("self_instruction")
    )
    try:
        prompt = deep_reflect_prompt(agent=tick.agent, view=view)
        reply, call = _ask(tick, Purpose.DEEP_REFLECT, prompt, DeepReflection, by=by)
    except (LLMError, ServiceError) as exc:
        _step_saved(tick, "deep_reflect", started, **_failure_detail(exc))  # a new plan's LLM call may follow
        return brain
    now = timezone.now()
    with _writing(tick) as write:
        reflecting = deep_reflecting(
            brain=_state_of(write.brain),
            self_summary=reply.self_summary,
            goals=reply.goals,
            facts=reply.facts,
            rules=reply.self_instructions,
            known_goals=list(Goal.objects.filter(brain=write.brain).values_list("text", flat=True)),
            known_facts=[record.text for record in view.facts],
            known_rules=[record.text for record in view.self_instructions],
            goal_chars=GOAL_CHARS,
        )
        if reflecting.summary_changed:
            write.set(self_summary=reflecting.self_summary)
        added, refused = _goals_added(write, reflecting.goals, now)
        write.records(deep_reflect_entries(reflecting, len(added), now), at=now)
        _step_noted(tick, "deep_reflect", started, **deep_reflect_detail(reflecting, added, refused, call))
    return write.brain


def _goals_added(write: BrainWrite, goals: list[tuple[int, str]], now: datetime) -> tuple[list[str], str | None]:
    """Add the goals in order (each with its index in the reply), until one is refused: every
    goal is active and the cap is reached. The goals added, and why the rest were not."""
    added: list[str] = []
    for index, text in goals:
        try:
            goal = write.goal(text=text, item=mj.goal_item(text=text, at=now, index=index), at=now)
        except Conflict as exc:  # nothing was written
            return added, exc.message
        added.append(goal.text)
    return added, None


def _replan(tick: _Tick, brain: Brain, *, because: str, by: Principal) -> None:
    """A new plan, from `brain` as the tick's last write left it."""
    started = time.monotonic()
    view = brain_view_renewed(view=tick.view, brain=brain)
    exploration = explore_next(brain=brain)
    try:
        prompt = plan_prompt(agent=tick.agent, view=view, suggestions=exploration.suggestions)
        reply, call = _ask(tick, Purpose.DECIDE, prompt, Plan, by=by)
    except (LLMError, ServiceError) as exc:
        _step_noted(tick, "replan", started, because=because, **_failure_detail(exc))  # the run's end saves it
        return
    now = timezone.now()
    with _writing(tick) as write:
        plan = replanning(steps=reply.steps, extra_state=write.brain.extra_state, because=because, now=now)
        write.set(**plan.fields)
        write.folders_spent(exploration.spent)
        write.records([plan.entry], at=now)
        _step_noted(tick, "replan", started, because=because, steps=plan.steps, call=call)


def _fail(tick: _Tick, error: str, *, record: bool = True) -> None:
    """End the tick as failed; with `record`, the brain takes it as a failure: last error, a log
    entry, emotions and hormones."""
    if record:
        now = timezone.now()
        with _writing(tick) as write:
            entry, changes = failure(_state_of(write.brain), error, now)
            write.records([entry], at=now)
            write.set(**changes)
    _finish(tick, status=TickRun.Status.FAILED, outcome="", error=error)


def _finish(tick: _Tick, *, status: str, outcome: str, error: str) -> None:
    """End the run and give the lease back (see `leases.run_ended`)."""
    if not run_ended(tick.lease, tick.run, status=status, outcome=outcome, error=error):
        logger.warning("Tick of agent %s ended after another tick took its brain over.", tick.agent.pk)
        return
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


def ticking_start(*, agent: Agent, interval_s: int, by: Principal) -> Brain:
    """Tick the agent every `interval_s` seconds for `by` (a member, through a token if one
    asked), starting now (or, if it ticks already, at the new interval from its next tick at the
    latest): each tick acts as `by`. The agents ticking for one user are capped and the LLM
    budgets the ticks count against must not be spent (QuotaExceeded, 429)."""
    interval_s = _interval_check(interval_s)
    _member_require(by)
    broker_require()  # beat queues the ticks: with the broker down none would run
    now = timezone.now()
    with transaction.atomic():
        ticking_quota_require(by=by, agent_id=agent.pk)
        with brain_writing(agent=agent) as write:
            brain = write.brain
            if brain.ticking and brain.next_tick_at is not None:
                next_at = min(brain.next_tick_at, now + timedelta(seconds=interval_s))
            else:
                next_at = now
            write.set(
                ticking=True,
                tick_interval_s=interval_s,
                next_tick_at=next_at,
                ticking_by=by.user,
                ticking_token=by.token,
            )
    return brain


def ticking_pause(*, agent: Agent) -> Brain:
    """Stop ticking; a tick that is running ends normally."""
    with brain_writing(agent=agent) as write:
        write.set(ticking=False, next_tick_at=None)
    return write.brain


def _queue_mark(agent_id: int, now: datetime, *, by: Principal) -> bool:
    """Mark a tick of the brain queued for `by`; False when one is queued already and not yet
    begun (it will tick the brain: this one would add nothing)."""
    free = Q(tick_queued_at__isnull=True) | Q(tick_queued_at__lte=tick_queue_cutoff(now))
    marked = Brain.objects.filter(free, pk=agent_id).update(
        tick_queued_at=now, tick_queued_by_id=by.user_id, tick_queued_token_id=by.token_id
    )
    return bool(marked)


def tick_request(*, agent: Agent, by: Principal) -> None:
    """Run one tick now for `by`, whether or not the agent ticks (queued once the transaction
    commits; refused with nothing made when the broker does not answer, or past the user's
    quota). A tick of the agent already queued and not yet begun stands for this one."""
    _member_require(by)
    with transaction.atomic():
        brain_create(agent=agent)
        tick_quota_require(by=by)
        if _queue_mark(agent.pk, timezone.now(), by=by):
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
    """How many more ticks each member may have queued in each space, during one beat: counted
    at a member's first due brain there, then kept, so a beat costs a few queries per user,
    space and token rather than per brain. None has room while a budget its tick would count
    against is spent (`spends_today`: the user's, theirs in the space, the whole space's, the
    token's it ticks through). Each asker is rebuilt once (`principal`)."""

    def __init__(self, now: datetime, spaces: dict[int, Space]):
        self.now = now
        self.spaces = spaces
        self.askers: dict[tuple[int, int | None, int | None], Principal | None] = {}
        self.left: dict[tuple[int | None, int], float] = {}
        self.spent: dict[tuple[int | None, int, int | None], bool] = {}
        self.skipped: dict[tuple[int | None, int], int] = {}

    def principal(self, asker: tuple[int, int | None, int | None]) -> Principal | None:
        """Who set a brain ticking, by the (space, user, token) ids its row keeps (`_acting_for`)."""
        if asker not in self.askers:
            space_id, user_id, token_id = asker
            self.askers[asker] = _acting_for(self.spaces[space_id], (user_id, token_id))
        return self.askers[asker]

    def take(self, by: Principal) -> bool:
        key = (by.user_id, by.space.pk)
        if not self._spent(by):
            if key not in self.left:
                self.left[key] = self._cap_room(by)
            if self.left[key] > 0:
                self.left[key] -= 1
                return True
        self.skipped[key] = self.skipped.get(key, 0) + 1
        return False

    def _spent(self, by: Principal) -> bool:
        key = (by.user_id, by.space.pk, by.token_id)
        if key not in self.spent:
            self.spent[key] = any(spend.spent for spend in spends_today(by=by, now=self.now))
        return self.spent[key]

    def _cap_room(self, by: Principal) -> float:
        if by.is_system:
            return math.inf
        return member_cap(by.space, "quota_ticks") - ticks_in_flight(by=by, now=self.now)

    def give_back(self, by: Principal) -> None:
        self.left[(by.user_id, by.space.pk)] += 1


def _start_due(agent_id: int, next_at: datetime | None, interval_s: int, by: Principal | None, room: _Room) -> bool:
    """Move the brain's next tick on and queue this one, if no other beat moved it first, `by`
    (who set it ticking) has room in its space, and it has no tick queued already. A brain set
    ticking by someone who can no longer act in the space stops ticking instead: it would tick
    as nobody. Whether it queued one."""
    with transaction.atomic():
        if by is None:
            Brain.objects.filter(pk=agent_id, ticking=True, next_tick_at=next_at).update(
                ticking=False, next_tick_at=None
            )
            logger.warning("Agent %s stopped ticking: %s", agent_id, ASKER_GONE)
            return False
        moved = Brain.objects.filter(pk=agent_id, ticking=True, next_tick_at=next_at).update(
            next_tick_at=room.now + timedelta(seconds=interval_s)
        )
        if not moved or not room.take(by):
            return False
        if not _queue_mark(agent_id, room.now, by=by):
            room.give_back(by)
            return False
        _enqueue(agent_id)
    return True


def ticks_start_due() -> int:
    """Queue a tick for each ticking brain whose tick is due, and move its next tick on by its
    interval. Run by beat; two beats at once queue each tick once. A brain whose member has no
    room for another tick (MEMSITE_QUOTA_TICKS, or a spent LLM budget: theirs, the whole
    space's or its token's), or that has a tick queued already, skips this tick. Returns how
    many it queued."""
    now = timezone.now()
    due = list(
        Brain.objects.filter(ticking=True, next_tick_at__lte=now)
        .order_by("next_tick_at")
        .values_list("pk", "next_tick_at", "tick_interval_s", "ticking_by_id", "ticking_token_id", "agent__space_id")[
            :TICKS_PER_BEAT
        ]
    )
    if not due:
        return 0
    room = _Room(now, Space.objects.in_bulk({row[-1] for row in due}))
    with broker_checked():
        started = sum(
            _start_due(pk, next_at, interval_s, room.principal((space_id, user_id, token_id)), room)
            for pk, next_at, interval_s, user_id, token_id, space_id in due
        )
    if room.skipped:
        logger.info("Due ticks skipped, by user and space: their quota or LLM budget is reached: %s.", room.skipped)
    return started
