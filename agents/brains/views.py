"""An agent's brain on the dashboard (seed 002), a page of its own beside the agent's page: what the
reflection loop does, with a live stream that polls itself and brings the other panels along.
Reads go through `agents.brains.selectors`, writes through `agents.brains.services`. Explained in
docs/brains.md."""

import time
from dataclasses import dataclass
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HTMX_STOP_POLLING

from agents.brains import selectors, services
from agents.brains.forms import ChatForm, GoalForm, TickingForm
from agents.brains.logic import affect
from agents.brains.logic.caps import cap
from agents.brains.logic.charts import LineChart, line_chart
from agents.brains.logic.recall import Citable, anchor, records_cited
from agents.brains.models import Record, RecordKind, TickRun
from agents.brains.services.brains import goal_complete, goal_create
from agents.context import selectors as context_selectors
from agents.context.models import Agent, Message
from agents.http import agent_or_404
from memsite.errors import InvalidInput, ServiceError
from memsite.limits import wait_slots
from memsite.llm.selectors import llm_provider_serving
from memsite.pages import form_error, render_page
from memsite.request_types import HtmxHttpRequest
from memsite.spaces.principals import Principal, principal_of

BRAIN = "brains/brain.html"
CHART_TICKS = 60
STREAM_SIZE = 30
FACTS_SHOWN = 20
CHAT_SHOWN = 30
NEURONS_SHOWN = 12
POLL_S = 3
# How long the stream keeps polling for a tick asked for that has not started: the worker may
# be busy, or not running at all.
AWAIT_S = 120


# -- what the page shows -----------------------------------------------------------------------


@dataclass(frozen=True)
class Awaited:
    """A tick asked for from this page: the stream polls until it starts, or until `until`."""

    number: int  # the tick count it will bring the brain to
    until: int  # epoch seconds

    @property
    def pending(self) -> bool:
        return time.time() < self.until


def _awaited(request: HtmxHttpRequest) -> Awaited | None:
    number, until = request.GET.get("awaiting", ""), request.GET.get("until", "")
    if number.isascii() and number.isdigit() and until.isascii() and until.isdigit():
        return Awaited(number=int(number), until=int(until))
    return None


def _stream(agent: Agent) -> list[Record]:
    """The newest thoughts and episodes together, newest first."""
    entries = [
        *selectors.brain_records_newest(agent=agent, kind=RecordKind.THOUGHT, limit=STREAM_SIZE),
        *selectors.brain_records_newest(agent=agent, kind=RecordKind.EPISODE, limit=STREAM_SIZE),
    ]
    return sorted(entries, key=lambda record: (record.created_at, record.pk), reverse=True)[:STREAM_SIZE]


def _citable(
    agent: Agent, lines: list[Message], facts: list[Record] | None = None, stream: list[Record] | None = None
) -> Citable:
    """What the citations of the chat's `lines` may link to: the facts and the stream the page
    shows (each read here unless given); a chat may cite older entries, whose texts are read to be
    shown."""
    if facts is None:
        facts = selectors.brain_records_newest(agent=agent, kind=RecordKind.FACT, limit=FACTS_SHOWN)
    if stream is None:
        stream = _stream(agent)
    shown = frozenset(anchor(record.kind, str(record.seq)) for record in [*facts, *stream])
    cited = records_cited(line.data for line in lines)
    unseen = {(kind, seq) for kind, seq in cited if anchor(kind, str(seq)) not in shown}
    texts = selectors.brain_records_texts(agent=agent, records=unseen) if unseen else {}
    return Citable(shown=shown, texts={anchor(kind, str(seq)): text for (kind, seq), text in texts.items()})


def _version(agent: Agent, state: selectors.BrainState) -> str:
    """Moves whenever the panels would show something else: a change to the brain's row, an
    entry added to any list (every service that writes logs it), a tick ending (which writes
    its emotions and hormones to its run), or a message added to the conversation."""
    changed = state.brain.updated_at.timestamp() if state.brain.updated_at else 0
    last = state.ticking.last.number if state.ticking.last else 0
    newest = ".".join(str(state.newest.get(kind, 0)) for kind in RecordKind.values)
    return f"{changed:.6f}-{last}-{newest}-{agent.message_count}"


def _stream_context(
    agent: Agent, state: selectors.BrainState, awaited: Awaited | None, stream: list[Record]
) -> dict[str, Any]:
    if awaited is not None and (state.ticking.tick_count >= awaited.number or not awaited.pending):
        awaited = None  # it has started (and shows as running until it ends), or it is given up
    last = state.ticking.last
    return {
        "agent": agent,
        "state": state,
        "stream": stream,
        "awaited": awaited,
        "version": _version(agent, state),
        "settled": state.ticking.idle and awaited is None,
        "poll_s": POLL_S,
        # Whether heuristics wrote the last tick's thoughts and choices.
        "last_provider": llm_provider_serving(model=TickRun, served_id=last.pk) if last else None,
    }


def _charts(agent: Agent) -> tuple[LineChart, LineChart]:
    history = selectors.brain_affect_history(agent=agent, ticks=CHART_TICKS)
    return (
        line_chart("Emotions", affect.EMOTIONS, history, field="emotions"),
        line_chart("Hormones", affect.HORMONES, history, field="hormones"),
    )


def _panels(agent: Agent, state: selectors.BrainState, stream: list[Record]) -> dict[str, Any]:
    """Every panel but the stream (given, for what citations link to), the forms and the controls."""
    emotions, hormones = _charts(agent)
    # The conversation's newest messages, as the agent's page shows them: one thread.
    chat = context_selectors.message_page(agent=agent, size=CHAT_SHOWN).messages
    facts = selectors.brain_records_newest(agent=agent, kind=RecordKind.FACT, limit=FACTS_SHOWN)
    return {
        "emotions_chart": emotions,
        "hormones_chart": hormones,
        "goals": state.goals,
        "plan": state.plan,
        "self_instructions": selectors.brain_records_newest(
            agent=agent, kind=RecordKind.SELF_INSTRUCTION, limit=cap("self_instruction")
        ),
        "facts": facts,
        "neurons": selectors.neuron_strongest(agent=agent, limit=NEURONS_SHOWN),
        "chat_lines": list(reversed(chat)),
        "citable": _citable(agent, chat, facts, stream),
    }


def _page(request: HtmxHttpRequest, agent: Agent, *, status: int = 200, **forms_and_errors: Any) -> HttpResponse:
    """The whole page; `forms_and_errors` are a refused form and its message (None: the default)."""
    state, stream = selectors.brain_state(agent=agent), _stream(agent)
    context = {
        **_stream_context(agent, state, None, stream),
        **_panels(agent, state, stream),
        "goal_form": GoalForm(),
        "chat_form": ChatForm(),
        "ticking_form": TickingForm(initial={"interval_s": state.brain.tick_interval_s}),
    }
    context.update((name, value) for name, value in forms_and_errors.items() if value is not None)
    return render_page(request, BRAIN, context, status=status)


def _done(request: HtmxHttpRequest, agent: Agent, message: str) -> HttpResponse:
    messages.success(request, message)
    return redirect("agents:brain_detail", agent_id=agent.pk)


# -- the page and its stream -------------------------------------------------------------------


@require_GET
@login_required
def brain_detail(request: HtmxHttpRequest, agent_id: int) -> HttpResponse:
    return _page(request, agent_or_404(request, agent_id))


@require_GET
@login_required
def brain_stream(request: HtmxHttpRequest, agent_id: int) -> HttpResponse:
    """The stream, and the other panels when the brain has changed since `v`; 286 once there is
    nothing left to wait for."""
    agent = agent_or_404(request, agent_id)
    if not request.htmx:
        return redirect("agents:brain_detail", agent_id=agent.pk)
    state, stream = selectors.brain_state(agent=agent), _stream(agent)
    context = _stream_context(agent, state, _awaited(request), stream)
    if context["version"] != request.GET.get("v"):
        context.update(_panels(agent, state, stream), refresh=True)
    status = HTMX_STOP_POLLING if context["settled"] else 200
    return render_page(request, f"{BRAIN}#stream_update", context, status=status)


# -- tick controls -----------------------------------------------------------------------------


def _controls(
    request: HtmxHttpRequest,
    agent: Agent,
    *,
    form: TickingForm | None = None,
    message: str = "",
    error: str = "",
    status: int = 200,
    awaited: Awaited | None = None,
) -> HttpResponse:
    """The controls with what happened, and the stream (out of band), polling again if there is
    anything to wait for. Without JavaScript, the page again, or back to it."""
    if not request.htmx:
        if error:
            return _page(request, agent, ticking_form=form, controls_error=error, status=status)
        return _done(request, agent, message)
    state = selectors.brain_state(agent=agent)
    context = {
        **_stream_context(agent, state, awaited, _stream(agent)),
        "ticking_form": form or TickingForm(initial={"interval_s": state.brain.tick_interval_s}),
        "controls_message": message,
        "controls_error": error,
    }
    return render_page(request, f"{BRAIN}#controls_update", context, status=status)


@require_POST
@login_required
def brain_tick(request: HtmxHttpRequest, agent_id: int) -> HttpResponse:
    agent = agent_or_404(request, agent_id)
    try:
        services.tick_request(agent=agent, by=principal_of(request))
    except ServiceError as error:
        return _controls(request, agent, error=error.message, status=error.status)
    brain, _ = selectors.brain_or_empty(agent=agent)
    awaited = Awaited(number=brain.tick_count + 1, until=int(time.time()) + AWAIT_S)
    return _controls(request, agent, message="A tick is queued.", awaited=awaited)


@require_POST
@login_required
def brain_ticking_start(request: HtmxHttpRequest, agent_id: int) -> HttpResponse:
    agent = agent_or_404(request, agent_id)
    form = TickingForm(request.POST)
    if not form.is_valid():
        return _controls(request, agent, form=form, error=form_error(form), status=400)
    try:
        brain = services.ticking_start(
            agent=agent, interval_s=form.cleaned_data["interval_s"], by=principal_of(request)
        )
    except ServiceError as error:
        return _controls(request, agent, form=form, error=error.message, status=error.status)
    return _controls(request, agent, form=form, message=f"Ticking every {brain.tick_interval_s} s.")


@require_POST
@login_required
def brain_ticking_pause(request: HtmxHttpRequest, agent_id: int) -> HttpResponse:
    agent = agent_or_404(request, agent_id)
    try:
        services.ticking_pause(agent=agent)
    except ServiceError as error:
        return _controls(request, agent, error=error.message, status=error.status)
    return _controls(request, agent, message="Paused.")


# -- goals -------------------------------------------------------------------------------------


def _goals(
    request: HtmxHttpRequest, agent: Agent, *, form: GoalForm, message: str = "", error: str = "", status: int = 200
) -> HttpResponse:
    if not request.htmx:
        if error:
            return _page(request, agent, goal_form=form, goals_error=error, status=status)
        return _done(request, agent, message)
    brain, exists = selectors.brain_or_empty(agent=agent)
    context = {
        "agent": agent,
        "goals": selectors.brain_goals(brain=brain) if exists else [],
        "goal_form": form,
        "goals_message": message,
        "goals_error": error,
    }
    return render_page(request, f"{BRAIN}#goals", context, status=status)


@require_POST
@login_required
def brain_goal_create(request: HtmxHttpRequest, agent_id: int) -> HttpResponse:
    agent = agent_or_404(request, agent_id)
    form = GoalForm(request.POST)
    if not form.is_valid():
        return _goals(request, agent, form=form, error=form_error(form), status=400)
    try:
        goal = goal_create(agent=agent, text=form.cleaned_data["text"])
    except ServiceError as error:
        return _goals(request, agent, form=form, error=error.message, status=error.status)
    return _goals(request, agent, form=GoalForm(), message=f"Added the goal “{goal.text}”.")


@require_POST
@login_required
def brain_goal_complete(request: HtmxHttpRequest, agent_id: int, goal_id: int) -> HttpResponse:
    agent = agent_or_404(request, agent_id)
    try:
        goal = goal_complete(agent=agent, goal_id=goal_id)
    except ServiceError as error:
        return _goals(request, agent, form=GoalForm(), error=error.message, status=error.status)
    return _goals(request, agent, form=GoalForm(), message=f"Done: “{goal.text}”.")


# -- chat --------------------------------------------------------------------------------------


def _chat_send(agent: Agent, text: str, by: Principal) -> tuple[list[Message], bool, ServiceError | None]:
    """The messages to append, whether "goal: ..." added a goal, and the refusal if there was
    one. The reply is an LLM call made while the request waits: it takes one of the process's
    slots for waiting, or is refused as Busy. When the LLM fails the user's message is kept, and
    shown."""
    try:
        with wait_slots().hold_or_busy():
            exchange = services.chat_send(agent=agent, text=text, by=by)
    except ServiceError as error:
        kept = error.data.get("user_message")
        said = context_selectors.message_at(agent=agent, position=kept) if isinstance(kept, int) else None
        return ([said] if said is not None else []), False, error
    return [exchange.user_message, exchange.reply_message], exchange.goal is not None, None


@require_POST
@login_required
def brain_chat(request: HtmxHttpRequest, agent_id: int) -> HttpResponse:
    """The form, cleared, with the exchange appended to the chat (out of band); refused, the
    form keeps the text and says why."""
    agent = agent_or_404(request, agent_id)
    form = ChatForm(request.POST)
    lines: list[Message] = []
    goal_added = False
    refusal: ServiceError | None = None
    if not form.is_valid():
        refusal = InvalidInput(form_error(form))
    else:
        lines, goal_added, refusal = _chat_send(agent, form.cleaned_data["text"], principal_of(request))
    status, error = (refusal.status, refusal.message) if refusal else (200, "")
    if not request.htmx:
        if not error:
            return _done(request, agent, "Sent.")
        return _retry_after(_page(request, agent, chat_form=form, chat_error=error, status=status), refusal)
    context = {
        "agent": agent,
        "chat_form": ChatForm() if not error else form,
        "chat_error": error,
        "new_lines": lines,
        "citable": _citable(agent, lines),
    }
    if goal_added:  # "goal: ..." added one: the goals panel shows it (out of band)
        brain, _ = selectors.brain_or_empty(agent=agent)
        context["goals"] = selectors.brain_goals(brain=brain)
    # htmx swaps no 5xx answer (base.html's responseHandling): a failed LLM call is told in the
    # form, with the user's kept line, in a 200.
    response = render_page(request, f"{BRAIN}#chat_update", context, status=status if status < 500 else 200)
    return _retry_after(response, refusal)


def _retry_after(response: HttpResponse, refusal: ServiceError | None) -> HttpResponse:
    """A refusal that says when to come back (Busy) says it in Retry-After too."""
    if refusal is not None and refusal.retry_after_s:
        response["Retry-After"] = str(refusal.retry_after_s)
    return response
