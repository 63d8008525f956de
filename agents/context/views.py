"""The dashboard's agent pages, as small htmx views: the list of agents with a form to create
one, and an agent's page with its settings, its conversation a page at a time with a form to
append to it, its checkpoints, and the context-window view with the messages it sends.
Changing settings, deleting and checkpoints: `agents.context.edit_views`. See docs/context.md."""

from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpResponse, QueryDict
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import push_url, trigger_client_event

from agents.context import selectors, services
from agents.context.forms import AgentSettingsForm, ContextForm, MessageAppendForm, settings_initial
from agents.context.logic.sent import sent_groups
from agents.context.models import Agent, Strategy, Summary
from agents.context.selectors.assembly import ContextReport, Dropped
from agents.http import agent_or_404
from memsite.errors import ServiceError
from memsite.llm.config import llm_config
from memsite.llm.selectors import llm_provider_serving
from memsite.pages import form_error, render_page
from memsite.request_types import HtmxHttpRequest
from memsite.spaces.logic import Role, role_allows
from memsite.spaces.principals import principal_of

AGENTS = "context/agent_list.html"
AGENT = "context/agent_detail.html"
AGENTS_PAGE_SIZE = 50
MESSAGES_PAGE_SIZE = 20
CHECKPOINTS_SHOWN = 20
SettingsFormT = TypeVar("SettingsFormT", bound=AgentSettingsForm)
# Sent with a successful append: the context form listens for it and assembles again.
CONVERSATION_CHANGED = "conversation-changed"
TIER_LABELS = {
    "system": "instructions",
    "pinned": "pinned messages",
    "working_memory": "working memory",
    "long_term": "long-term memory",
    "short_term": "conversation",
    "reply_priming": "reply priming",
}
# The bar's colours, given to tiers in the report's order; CSS defines this many.
TONES = 8


# -- the context-window view -------------------------------------------------------------------


@dataclass(frozen=True)
class Segment:
    key: str  # the tier, or "free"
    label: str
    tokens: int
    share: str  # of the bar's length, a CSS percentage
    tone: int | None = None  # a tier's colour; the free space has its own


@dataclass(frozen=True)
class Marker:
    key: str
    label: str
    tokens: int
    share: str


@dataclass(frozen=True)
class DroppedRow:
    tier_label: str
    where: str  # message positions, or a memory tier's item number
    count: int
    tokens: int
    detail: str


@dataclass(frozen=True)
class ContextView:
    report: ContextReport
    segments: list[Segment]
    free: Segment
    markers: list[Marker]
    sent_messages: int  # stored messages the context includes
    dropped: list[DroppedRow]


@dataclass(frozen=True)
class ContextRefusal:
    message: str
    status: int
    numbers: list[tuple[str, Any]]


def tier_label(tier: str) -> str:
    return TIER_LABELS.get(tier, tier.replace("_", " "))


def _percent(tokens: int, scale: int) -> str:
    return f"{100 * max(tokens, 0) / scale:.3f}%"


def _dropped_row(entry: Dropped) -> DroppedRow:
    if entry.first_position is None:
        where = f"item {entry.item}" if entry.item is not None else ""
    elif entry.first_position == entry.last_position:
        where = f"message {entry.first_position}"
    else:
        where = f"messages {entry.first_position}–{entry.last_position}"
    return DroppedRow(
        tier_label=tier_label(entry.tier),
        where=where,
        count=entry.count,
        tokens=entry.tokens,
        detail=entry.detail,
    )


def context_window(report: ContextReport) -> ContextView:
    # The window is the bar's length; a context over it (it should not be) stretches the bar.
    scale = max(report.window, report.total, 1)
    segments = [
        Segment(
            key=tier,
            label=tier_label(tier),
            tokens=tokens,
            share=_percent(tokens, scale),
            tone=index % TONES,
        )
        for index, (tier, tokens) in enumerate(report.tiers.items())
    ]
    markers = [
        Marker(key=key, label=label, tokens=tokens, share=_percent(tokens, scale))
        for key, label, tokens in sorted(
            [
                ("target", "compaction target", report.target_at),
                ("warning", "warning", report.warning_at),
                ("trigger", "compaction trigger", report.trigger_at),
            ],
            key=lambda marker: marker[2],
        )
    ]
    return ContextView(
        report=report,
        segments=segments,
        free=Segment(key="free", label="free", tokens=report.free, share=_percent(report.free, scale)),
        markers=markers,
        sent_messages=sum(1 for entry in report.included if entry.position is not None),
        dropped=[_dropped_row(entry) for entry in report.dropped],
    )


def _context_section(agent: Agent, query: QueryDict) -> tuple[dict[str, Any], int]:
    """The context form's values and the report for them, or the refusal; and the status an
    htmx answer carries."""
    model, strategy = query.get("model"), query.get("strategy")
    section: dict[str, Any] = {
        "context_model": agent.model if model is None else model,
        "context_strategy": agent.strategy if strategy is None else strategy,
        "strategies": Strategy.choices,
        "known_models": sorted(llm_config().models),
    }
    form = ContextForm(query)
    if not form.is_valid():
        # The first wrong field, as assembly itself names it.
        message = str(next(iter(form.errors.values()))[0])
        section["context_refusal"] = ContextRefusal(message=message, status=400, numbers=[])
        return section, 400
    try:
        assembled = services.context_build(agent=agent, **form.cleaned_data)
    except ServiceError as error:
        numbers = [(key.replace("_", " "), value) for key, value in error.data.items() if key != "reason"]
        section["context_refusal"] = ContextRefusal(message=error.message, status=error.status, numbers=numbers)
        return section, error.status
    window = context_window(assembled.report)
    tones = {segment.key: segment.tone for segment in window.segments}
    section["window"] = window
    section["sent_groups"] = [
        (tier_label(group.tier), tones.get(group.tier), group)
        for group in sent_groups(assembled.messages, assembled.report.included)
    ]
    used = assembled.report.summary
    # Whether heuristics wrote the summary the context sends.
    section["summary_provider"] = llm_provider_serving(model=Summary, served_id=used.id) if used else None
    return section, 200


# -- helpers -----------------------------------------------------------------------------------


def can_edit(request: HtmxHttpRequest) -> bool:
    """Whether the page offers its changes: readers see them refused anyway."""
    return role_allows(principal_of(request).role, Role.EDITOR)


def setting_refused(form: SettingsFormT, error: ServiceError) -> SettingsFormT:
    """The service's refusal, beside the field it names (`SettingInvalid.field`), or over the form."""
    field = getattr(error, "field", None)
    form.add_error(field if field in form.fields else None, error.message)
    return form


def _position(raw: str | None) -> int | None:
    return int(raw) if raw and raw.isascii() and raw.isdigit() else None


def _conversation_context(
    agent: Agent,
    *,
    form: MessageAppendForm,
    before: int | None = None,
    message: str = "",
    error: str = "",
) -> dict[str, Any]:
    return {
        "agent": agent,
        "append_form": form,
        "page": selectors.message_page(agent=agent, before=before, size=MESSAGES_PAGE_SIZE),
        "before": before,
        "message": message,
        "error": error,
    }


def _agent_page(
    request: HtmxHttpRequest,
    agent: Agent,
    *,
    form: MessageAppendForm,
    error: str = "",
    status: int = 200,
) -> HttpResponse:
    before = _position(request.GET.get("before"))
    section, _ = _context_section(agent, request.GET)
    checkpoints = selectors.checkpoint_list(agent=agent)
    context = {
        **_conversation_context(agent, form=form, before=before, error=error),
        **section,
        "variable_names": sorted(agent.context_variables),
        "checkpoints": list(checkpoints[:CHECKPOINTS_SHOWN]),
        "checkpoint_count": checkpoints.count(),
        "can_edit": can_edit(request),
    }
    return render_page(request, AGENT, context, status=status)


# -- the list of agents ------------------------------------------------------------------------


def _list_page(request: HtmxHttpRequest, form: AgentSettingsForm, *, status: int = 200) -> HttpResponse:
    agents = selectors.agent_list(space=principal_of(request).space)
    page = Paginator(agents, AGENTS_PAGE_SIZE).get_page(request.GET.get("page"))
    context = {
        "page": page,
        "form": form,
        "error": form_error(form) if form.is_bound else "",
        "known_models": sorted(llm_config().models),
        "can_edit": can_edit(request),
    }
    return render_page(request, AGENTS, context, status=status)


@require_GET
@login_required
def agent_list(request: HtmxHttpRequest) -> HttpResponse:
    initial = settings_initial(Agent(model=llm_config().default_model))
    return _list_page(request, AgentSettingsForm(initial=initial))


@require_POST
@login_required
def agent_create(request: HtmxHttpRequest) -> HttpResponse:
    form = AgentSettingsForm(request.POST)
    if not form.is_valid():
        return _list_page(request, form, status=400)
    try:
        agent = services.agent_create(space=principal_of(request).space, **form.settings())
    except ServiceError as error:
        return _list_page(request, setting_refused(form, error), status=error.status)
    messages.success(request, f"Created agent '{agent.name}'.")
    return redirect("agents:agent_detail", agent_id=agent.pk)


# -- an agent's page ---------------------------------------------------------------------------


@require_GET
@login_required
def agent_detail(request: HtmxHttpRequest, agent_id: int) -> HttpResponse:
    return _agent_page(request, agent_or_404(request, agent_id), form=MessageAppendForm())


@require_GET
@login_required
def agent_context(request: HtmxHttpRequest, agent_id: int) -> HttpResponse:
    """The context report for the form's model and strategy; a refusal comes with its status."""
    agent = agent_or_404(request, agent_id)
    page_url = reverse("agents:agent_detail", args=[agent.pk])
    query = urlencode({key: request.GET[key] for key in ("model", "strategy") if key in request.GET})
    if not request.htmx:
        return redirect(f"{page_url}?{query}" if query else page_url)
    section, status = _context_section(agent, request.GET)
    response = render_page(request, f"{AGENT}#context_report", {"agent": agent, **section}, status=status)
    if status == 200:
        push_url(response, f"{page_url}?{query}" if query else page_url)
    return response


@require_GET
@login_required
def message_list(request: HtmxHttpRequest, agent_id: int) -> HttpResponse:
    """The page of messages older than `before`, which htmx puts in place of its "older" link."""
    agent = agent_or_404(request, agent_id)
    before = _position(request.GET.get("before"))
    if not request.htmx:
        url = reverse("agents:agent_detail", args=[agent.pk])
        return redirect(f"{url}?before={before}#conversation" if before else url)
    page = selectors.message_page(agent=agent, before=before, size=MESSAGES_PAGE_SIZE)
    context = {"agent": agent, "page": page, "before": before}
    return render_page(request, f"{AGENT}#messages_page", context)


@require_POST
@login_required
def message_append(request: HtmxHttpRequest, agent_id: int) -> HttpResponse:
    agent = agent_or_404(request, agent_id)
    form = MessageAppendForm(request.POST)
    status, message, error = 200, "", ""
    if not form.is_valid():
        status, error = 400, form_error(form)
    else:
        try:
            appended = services.message_append(agent=agent, **form.cleaned_data)
            message = f"Appended message {appended.position}."
        except ServiceError as error_:
            status, error = error_.status, error_.message
    if not request.htmx:
        if error:
            return _agent_page(request, agent, form=form, error=error, status=status)
        messages.success(request, message)
        return redirect("agents:agent_detail", agent_id=agent.pk)
    if error:
        context = _conversation_context(agent, form=form, error=error)
        return render_page(request, f"{AGENT}#conversation", context, status=status)
    agent = selectors.agent_fresh(agent=agent)  # with the counters the append moved
    context = _conversation_context(agent, form=MessageAppendForm(), message=message)
    response = render_page(request, f"{AGENT}#conversation_update", context)
    return trigger_client_event(response, CONVERSATION_CHANGED)
