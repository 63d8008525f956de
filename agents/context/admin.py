"""Agents in Django's admin. An agent's settings change through
`agents.context.services.agent_update`, so the admin keeps the API's rules; agents are created on
the dashboard or through the API. Messages, checkpoints and summaries are written by the services
alone and only shown here: a message is never changed, and goes only with its agent. Context
variables are shown by name only."""

from typing import cast

from django import forms
from django.contrib import admin, messages
from django.db.models import Count, Model, QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.html import format_html
from django.utils.text import Truncator

from agents.context import services
from agents.context.models import Agent, Checkpoint, Message, Summary
from agents.context.services.agents import SETTINGS
from memsite.admin import ReadOnlyAdmin, SpaceChecked
from memsite.errors import ServiceError

# Set through the API with their values; the admin shows their names only.
EDITABLE = tuple(field for field in SETTINGS if field != "context_variables")
COUNTERS = ("message_count", "conversation_tokens", "history_tokens", "pending_tool_calls")


@admin.register(Agent)
class AgentAdmin(SpaceChecked, admin.ModelAdmin):
    """Changed and deleted by the editors of the agent's space, as through the API."""

    list_display = (
        "name",
        "model",
        "strategy",
        "message_count",
        "conversation_tokens",
        "history_tokens",
        "checkpoint_count",
        "updated_at",
    )
    list_filter = ("strategy",)
    search_fields = ("name",)
    fields = (*EDITABLE, "variable_names", *COUNTERS, "conversation", "created_at", "updated_at")
    readonly_fields = ("variable_names", *COUNTERS, "conversation", "created_at", "updated_at")
    list_per_page = 50

    def get_queryset(self, request: HttpRequest) -> QuerySet[Agent]:
        return super().get_queryset(request).annotate(checkpoint_total=Count("checkpoints"))

    @admin.display(description="checkpoints", ordering="checkpoint_total")
    def checkpoint_count(self, agent: Agent) -> int:
        return agent.checkpoint_total  # type: ignore[attr-defined]  # annotated by get_queryset

    @admin.display(description="context variables")
    def variable_names(self, agent: Agent) -> str:
        return ", ".join(sorted(agent.context_variables)) or "none"

    @admin.display(description="conversation")
    def conversation(self, agent: Agent) -> str:
        return format_html(
            '<a href="{}?agent__id__exact={}">{} messages</a> · <a href="{}">the agent\'s page</a>',
            reverse("admin:context_message_changelist"),
            agent.pk,
            agent.message_count,
            reverse("agents:agent_detail", args=[agent.pk]),
        )

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: Agent, form: forms.ModelForm, change: bool) -> None:
        self.acting_require(request, obj, "change")
        changes = {field: form.cleaned_data[field] for field in form.changed_data if field in EDITABLE}
        if changes:
            services.agent_update(agent=obj, changes=changes)

    def get_deleted_objects(self, objs, request: HttpRequest):
        # Counts of the rows that go with the agents, not a line per message: a conversation can
        # be long. Messages and checkpoints cannot be deleted on their own, so they are not
        # asked about.
        agents = list(objs)
        deleted = [f"Agent: {agent.name}" for agent in agents]
        model_count = {Agent._meta.verbose_name_plural: len(agents)}
        for relation in Agent._meta.related_objects:
            related = cast(type[Model], relation.related_model)  # a class once the apps are loaded
            rows = related._default_manager.filter(**{f"{relation.field.name}__in": agents})
            model_count[related._meta.verbose_name_plural] = rows.count()
        allowed = all(self.has_delete_permission(request, agent) for agent in agents)
        perms_needed = set() if allowed else {Agent._meta.verbose_name}
        return deleted, model_count, perms_needed, []

    def changeform_view(self, request: HttpRequest, object_id=None, form_url="", extra_context=None) -> HttpResponse:
        # A refused change shows the service's message, and nothing is saved.
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except ServiceError as error:
            self.message_user(request, error.message, messages.ERROR)
            return HttpResponseRedirect(request.get_full_path())


@admin.register(Message)
class MessageAdmin(ReadOnlyAdmin):
    list_display = ("position", "agent", "role", "pinned", "token_count", "excerpt", "created_at")
    list_filter = ("role", "pinned")
    list_select_related = ("agent",)
    search_fields = ("agent__name",)
    ordering = ("agent", "-position")
    show_full_result_count = False

    @admin.display(description="content")
    def excerpt(self, message: Message) -> str:
        return Truncator(message.content).chars(80)


@admin.register(Checkpoint)
class CheckpointAdmin(ReadOnlyAdmin):
    """The document is left out: it holds the agent's context variables."""

    list_display = ("agent", "version", "message_count", "created_at")
    list_select_related = ("agent",)
    search_fields = ("agent__name",)
    fields = ("agent", "version", "message_count", "created_at")
    ordering = ("agent", "-version")

    def get_queryset(self, request: HttpRequest) -> QuerySet[Checkpoint]:
        return super().get_queryset(request).defer("document")


@admin.register(Summary)
class SummaryAdmin(ReadOnlyAdmin):
    """Written by the summarize task; a restore deletes them with the messages they read."""

    list_display = ("agent", "since", "through", "level", "status", "token_count", "updated_at")
    list_filter = ("status",)
    list_select_related = ("agent",)
    search_fields = ("agent__name",)
    ordering = ("agent", "-through")
