"""The memory tree in Django's admin. Every change goes through `memory.services`, as the
request's user in the node's own space (`memsite.admin.SpaceChecked`), so the admin keeps the
same rules as the API and the dashboard: editors change nodes, internal folders keep their name
and type, only the space's owners describe them, and nobody deletes them."""

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect

from memory import selectors, services
from memory.forms import creatable_type_choices
from memory.models import Node, Search, SearchStep, ToolCall
from memory.permissions import node_permissions
from memsite.admin import SpaceChecked, admin_principal
from memsite.errors import ServiceError
from memsite.spaces.logic import Role, role_allows
from memsite.spaces.principals import Principal

# Written by the tree itself or by the services; never typed in by hand.
ALWAYS_READ_ONLY = (
    "id",
    "readable_path",
    "path",
    "depth",
    "numchild",
    "is_folder",
    "created_by",
    "created_at",
    "updated_at",
    "version",
)
EDITABLE = ("name", "type", "description", "context")
# Set on the nodes of a changelist page, so that the page costs no query per row.
READABLE_PATH_ATTRIBUTE = "_readable_path"


class NodeAdminForm(forms.ModelForm):
    # The version the form was opened at: a save over someone else's change is a conflict.
    expected_version = forms.IntegerField(widget=forms.HiddenInput, required=False)

    class Meta:
        model = Node
        fields = EDITABLE

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if self.instance is not None and self.instance.pk:
            self.fields["expected_version"].initial = self.instance.version
        if "type" in self.fields:
            choices = creatable_type_choices()
            current = self.instance.type if self.instance else None
            if current and current not in dict(choices):
                choices.append((current, current.replace("_", " ")))
            self.fields["type"] = forms.ChoiceField(choices=choices)


@admin.register(Node)
class NodeAdmin(SpaceChecked, admin.ModelAdmin):
    form = NodeAdminForm
    list_display = ("readable_path", "name", "type", "numchild", "path", "updated_at")
    list_display_links = ("readable_path", "name")
    list_filter = ("type",)
    search_fields = ("name", "description")
    ordering = ("path",)
    list_per_page = 50
    show_full_result_count = False

    @admin.display(description="location")
    def readable_path(self, node: Node) -> str:
        # A changelist page has its paths read in one query (below); a change form has one node.
        readable = getattr(node, READABLE_PATH_ATTRIBUTE, None)
        return readable if readable is not None else selectors.node_path(node=node)

    def get_changelist_instance(self, request: HttpRequest):
        changelist = super().get_changelist_instance(request)
        nodes = changelist.result_list
        paths = selectors.node_paths(nodes=nodes)
        for node in nodes:
            setattr(node, READABLE_PATH_ATTRIBUTE, paths[node.pk])
        return changelist

    # -- permissions ---------------------------------------------------------------------------

    def has_add_permission(self, request: HttpRequest) -> bool:
        # A node needs a parent and, for documents, content: the dashboard and the API make them.
        return False

    def allows(self, by: Principal, obj: Node, action: str) -> bool:
        # An editor's, as an API write, and of an internal folder only what node_permissions allows.
        allowed = node_permissions(obj, by=by)
        return role_allows(by.role, Role.EDITOR) and (allowed.edit if action == "change" else allowed.delete)

    def get_fields(self, request: HttpRequest, obj: Node | None = None):
        return (*EDITABLE, "expected_version", *ALWAYS_READ_ONLY)

    def get_readonly_fields(self, request: HttpRequest, obj: Node | None = None):
        by = admin_principal(request, obj.space) if obj is not None else None
        if obj is None or by is None:  # a space the user is not in: all of the form is read-only
            return ALWAYS_READ_ONLY
        allowed = node_permissions(obj, by=by)
        locked = [] if allowed.rename else ["name", "type"]
        if not allowed.set_context:
            locked.append("context")
        return (*locked, *ALWAYS_READ_ONLY)

    # -- writes through the services -----------------------------------------------------------

    def save_model(self, request: HttpRequest, obj: Node, form: forms.ModelForm, change: bool) -> None:
        changes = {field: form.cleaned_data[field] for field in form.changed_data if field in EDITABLE}
        saved = services.node_update(
            node=obj,
            expected_version=form.cleaned_data.get("expected_version"),
            by=self.acting_require(request, obj, "change"),
            **changes,
        )
        obj.__dict__.update({field: getattr(saved, field) for field in (*EDITABLE, "version", "updated_at")})

    def save_related(self, request: HttpRequest, form: forms.ModelForm, formsets, change: bool) -> None:
        pass  # Node has no many-to-many fields or inlines; save_model wrote everything.

    def delete_model(self, request: HttpRequest, obj: Node) -> None:
        services.node_delete(node=obj, by=self.acting_require(request, obj, "delete"))

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Node]) -> None:
        for node in queryset.order_by("path"):
            # A node inside a branch deleted just before is already gone.
            if Node.objects.filter(pk=node.pk).exists():
                services.node_delete(node=node, by=self.acting_require(request, node, "delete"))

    # A refused write is shown as the service's message, and nothing is saved.

    def changeform_view(self, request: HttpRequest, object_id=None, form_url="", extra_context=None) -> HttpResponse:
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except ServiceError as error:
            self.message_user(request, error.message, messages.ERROR)
            return HttpResponseRedirect(request.get_full_path())

    def delete_view(self, request: HttpRequest, object_id, extra_context=None) -> HttpResponse:
        try:
            return super().delete_view(request, object_id, extra_context)
        except ServiceError as error:
            self.message_user(request, error.message, messages.ERROR)
            return HttpResponseRedirect(request.get_full_path())

    def changelist_view(self, request: HttpRequest, extra_context=None) -> HttpResponse:
        try:
            return super().changelist_view(request, extra_context)
        except ServiceError as error:
            self.message_user(request, error.message, messages.ERROR)
            return HttpResponseRedirect(request.get_full_path())


STEP_FIELDS = ("number", "kind", "node_name", "summary", "llm_call")


class SearchStepInline(admin.TabularInline):
    model = SearchStep
    fields = STEP_FIELDS
    readonly_fields = STEP_FIELDS
    extra = 0
    can_delete = False
    show_change_link = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Search)
class SearchAdmin(SpaceChecked, admin.ModelAdmin):
    """Read-only: searches are written step by step by their worker; cancel them from the
    dashboard or the API. An editor of its space may delete one."""

    list_display = [
        "id",
        "status",
        "created_at",
        "created_by",
        "output",
        "llm_calls",
        "prompt_tokens",
        "cost_usd",
        "ended_because",
    ]
    list_filter = ["status", "output", "fallback"]
    date_hierarchy = "created_at"
    inlines = [SearchStepInline]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(ToolCall)
class ToolCallAdmin(SpaceChecked, admin.ModelAdmin):
    """Read-only; deleted by an editor of its search's space (one whose search is gone, by a
    superuser)."""

    list_display = ["created_at", "tool", "key", "node", "search"]
    list_filter = ["tool"]

    def space_of(self, obj: ToolCall):
        return obj.search.space if obj.search is not None else None

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
