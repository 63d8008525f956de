"""The dashboard's changes to an agent, for editors: its settings, deleting it once its page
has said what goes with it, and saving and restoring checkpoints once the page has said what a
restore changes. Every write is the API's own service. Explained in docs/context.md."""

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from agents.context import selectors, services
from agents.context.forms import AgentEditForm, settings_initial
from agents.context.logic.restore import restore_changes
from agents.context.models import Agent, Checkpoint
from agents.context.selectors import DeletionEffect
from agents.context.services.agents import SETTINGS, agent_settings
from agents.context.views import setting_refused
from agents.http import agent_or_404
from memsite.errors import ServiceError
from memsite.llm.config import llm_config
from memsite.pages import form_error, render_page
from memsite.request_types import HtmxHttpRequest
from memsite.spaces.logic import Role
from memsite.spaces.middleware import required_role

EDIT = "context/agent_edit.html"
DELETE = "context/agent_delete.html"
RESTORE = "context/checkpoint_restore.html"
# What an agent's deletion takes, by model: (one, many); a model not named here shows its own
# name.
DELETION_LABELS = {
    "context.message": ("message", "messages"),
    "context.checkpoint": ("checkpoint", "checkpoints"),
    "context.summary": ("conversation summary", "conversation summaries"),
    "brains.brain": ("brain", "brains"),
    "brains.brainextra": None,  # the rest of the brain's row: its line stands for it
    "brains.record": ("brain record", "brain records (thoughts, episodes, facts, logs)"),
    "brains.goal": ("goal", "goals"),
    "brains.explored": ("explored path or URL", "explored paths and URLs"),
    "brains.neuron": ("neuron", "neurons"),
    "brains.synapse": ("synapse", "synapses"),
    "brains.tickrun": ("tick run", "tick runs"),
    "graphs.graph": ("reasoning graph", "reasoning graphs"),
}


def counted(count: int, one: str, many: str = "") -> str:
    return f"{count} {one if count == 1 else many or one + 's'}"


def _agent_page_url(agent: Agent, anchor: str = "") -> str:
    return reverse("agents:agent_detail", args=[agent.pk]) + anchor


# -- settings ----------------------------------------------------------------------------------


def _edit_page(request: HtmxHttpRequest, agent: Agent, form: AgentEditForm, *, status: int = 200) -> HttpResponse:
    error = form_error(form) if form.is_bound else ""
    context = {"agent": agent, "form": form, "error": error, "known_models": sorted(llm_config().models)}
    return render_page(request, EDIT, context, status=status)


@required_role(Role.EDITOR)
@require_http_methods(["GET", "POST"])
@login_required
def agent_edit(request: HtmxHttpRequest, agent_id: int) -> HttpResponse:
    agent = agent_or_404(request, agent_id)
    if request.method == "GET":
        return _edit_page(request, agent, AgentEditForm(initial=settings_initial(agent)))
    form = AgentEditForm(request.POST)
    if not form.is_valid():
        return _edit_page(request, agent, form, status=400)
    try:
        agent = services.agent_update(
            agent=agent, changes=form.settings(), unchanged_since=form.cleaned_data["updated_at"]
        )
    except ServiceError as error:
        return _edit_page(request, agent, setting_refused(form, error), status=error.status)
    messages.success(request, f"Saved the settings of '{agent.name}'.")
    return redirect(_agent_page_url(agent, "#settings"))


# -- deleting ----------------------------------------------------------------------------------


def deletion_lines(effects: list[DeletionEffect]) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    """(what goes, what stays unlinked) as (count, label) lines."""
    deleted: list[tuple[int, str]] = []
    unlinked: list[tuple[int, str]] = []
    for effect in effects:
        labels = DELETION_LABELS.get(effect.model, (effect.model, effect.model))
        if labels is not None:
            line = (effect.count, labels[effect.count != 1])
            (deleted if effect.deleted else unlinked).append(line)
    return deleted, unlinked


@required_role(Role.EDITOR)
@require_http_methods(["GET", "POST"])
@login_required
def agent_delete(request: HtmxHttpRequest, agent_id: int) -> HttpResponse:
    """GET: what deleting the agent takes with it; POST: delete it."""
    agent = agent_or_404(request, agent_id)
    deleted, unlinked = deletion_lines(selectors.agent_deletion(agent=agent))
    if request.method == "GET":
        return render_page(request, DELETE, {"agent": agent, "deleted": deleted, "unlinked": unlinked})
    services.agent_delete(agent=agent)
    taken = ", ".join(f"{count} {label}" for count, label in deleted)
    messages.success(request, f"Deleted agent '{agent.name}'" + (f" with {taken}." if taken else "."))
    return redirect("agents:agent_list")


# -- checkpoints -------------------------------------------------------------------------------


@require_POST
@login_required
def checkpoint_create(request: HtmxHttpRequest, agent_id: int) -> HttpResponse:
    checkpoint = services.checkpoint_create(agent=agent_or_404(request, agent_id))
    messages.success(
        request,
        f"Saved checkpoint {checkpoint.version}: the settings and {counted(checkpoint.message_count, 'message')}.",
    )
    return redirect(_agent_page_url(checkpoint.agent, "#checkpoints"))


def _restore_page(
    request: HtmxHttpRequest, agent: Agent, checkpoint: Checkpoint, *, error: str = "", status: int = 200
) -> HttpResponse:
    document: Any = checkpoint.document
    saved = document.get("agent") if isinstance(document, dict) else None
    context = {
        "agent": agent,
        "checkpoint": checkpoint,
        "changes": restore_changes(current=agent_settings(agent), saved=saved, fields=SETTINGS),
        "summary_count": selectors.summary_list(agent=agent).count(),
        "error": error,
    }
    return render_page(request, RESTORE, context, status=status)


@required_role(Role.EDITOR)
@require_http_methods(["GET", "POST"])
@login_required
def checkpoint_restore(request: HtmxHttpRequest, agent_id: int, checkpoint_id: int) -> HttpResponse:
    """GET: what restoring the checkpoint changes; POST: restore it."""
    agent = agent_or_404(request, agent_id)
    try:
        checkpoint = selectors.checkpoint_get(agent=agent, checkpoint_id=checkpoint_id)
    except ServiceError as error:
        raise Http404(error.message) from None
    if request.method == "GET":
        return _restore_page(request, agent, checkpoint)
    try:
        agent = services.checkpoint_restore(agent=agent, checkpoint=checkpoint)
    except ServiceError as error:
        return _restore_page(request, agent, checkpoint, error=error.message, status=error.status)
    messages.success(
        request,
        f"Restored checkpoint {checkpoint.version}: {counted(agent.message_count, 'message')} and its settings.",
    )
    return redirect(_agent_page_url(agent))
