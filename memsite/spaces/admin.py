"""Spaces, their members and their tokens in Django's admin, each change judged in the space
it changes, and allowed to that space's owners (`memsite.admin.SpaceChecked`)."""

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.actions import delete_selected as django_delete_selected
from django.contrib.admin.utils import quote, unquote
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.translation import gettext_lazy
from rest_framework.authtoken.models import TokenProxy

from memsite.admin import SpaceChecked
from memsite.spaces.logic import Role
from memsite.spaces.models import ApiToken, Membership, Space
from memsite.spaces.principals import Principal
from memsite.spaces.services import membership_set, memberships_remove, owner_kept_problem, token_revoke

# Its tokens are ApiTokens now (migration 0002): nothing of it is left to manage.
if admin.site.is_registered(TokenProxy):
    admin.site.unregister(TokenProxy)


@admin.register(Space)
class SpaceAdmin(SpaceChecked, admin.ModelAdmin):
    """A space's name, changed by its owners: none is added or deleted here."""

    role_to_change = Role.OWNER

    list_display = ("slug", "name", "created_at")
    readonly_fields = ("slug", "created_at")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def space_of(self, obj: Space) -> Space:
        return obj

    def has_delete_permission(self, request: HttpRequest, obj: Space | None = None) -> bool:
        return False


class MembershipForm(forms.ModelForm):
    class Meta:
        model = Membership
        fields = ("user", "space", "role")

    def clean(self) -> dict[str, Any]:
        """A role change that would leave the space without an owner is the role's error. The
        admin's view is one transaction: the owners stay locked until the change is saved."""
        super().clean()
        cleaned = self.cleaned_data  # what ModelForm.clean returns, though typed as Optional
        if self.instance.pk is not None and "role" in cleaned:
            stored = Membership.objects.select_related("space", "user").get(pk=self.instance.pk)
            if problem := owner_kept_problem([(stored, Role(cleaned["role"]))]):
                self.add_error("role", problem)
        return cleaned


@admin.register(Membership)
class MembershipAdmin(SpaceChecked, admin.ModelAdmin):
    """Members added and their roles changed by the space's owners, never leaving a space
    without an owner (the services' rule). A membership's user and space are set when it is
    added."""

    role_to_change = Role.OWNER

    form = MembershipForm
    list_display = ("user", "space", "role", "created_at")
    list_filter = ("space", "role")
    search_fields = ("user__username",)
    autocomplete_fields = ("user",)
    actions = ["delete_selected"]  # this class's, in place of the site's

    def get_readonly_fields(self, request: HttpRequest, obj: Membership | None = None) -> tuple[str, ...]:
        # Moving a membership to another user or space would take an owner from its space.
        return ("user", "space") if obj is not None else ()

    def save_model(self, request: HttpRequest, obj: Membership, form: forms.ModelForm, change: bool) -> None:
        self.acting_require(request, obj, "change")  # a new one's space is the form's
        obj.pk = membership_set(space=obj.space, member=obj.user, role=obj.role).pk

    def delete_view(self, request: HttpRequest, object_id: str, extra_context: dict | None = None) -> HttpResponse:
        """The last owner's deletion is refused before its confirmation page, with the reason."""
        with transaction.atomic():
            membership = self.get_object(request, unquote(object_id))
            problem = owner_kept_problem([(membership, None)]) if membership is not None else None
            if problem is None:
                return super().delete_view(request, object_id, extra_context)
        self.message_user(request, problem, messages.ERROR)
        return HttpResponseRedirect(reverse("admin:spaces_membership_change", args=[quote(object_id)]))

    def delete_model(self, request: HttpRequest, obj: Membership) -> None:
        memberships_remove(memberships=[obj])

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Membership]) -> None:
        memberships_remove(memberships=queryset.select_related("space", "user"))

    @admin.action(permissions=["delete"], description=gettext_lazy("Delete selected %(verbose_name_plural)s"))
    def delete_selected(self, request: HttpRequest, queryset: QuerySet[Membership]) -> HttpResponse | None:
        """Django's bulk deletion, refused whole, before its confirmation page, when it would
        leave a space without an owner."""
        with transaction.atomic():
            problem = owner_kept_problem(
                [(membership, None) for membership in queryset.select_related("space", "user")]
            )
            if problem is None:
                return django_delete_selected(self, request, queryset)
        self.message_user(request, problem, messages.ERROR)
        return None


@admin.register(ApiToken)
class ApiTokenAdmin(SpaceChecked, admin.ModelAdmin):
    """Tokens are made by `manage.py token_create`, which shows the key once; here they are
    read and revoked: by the space's owners, and by a member their own (as on the dashboard).
    The digest is not shown."""

    role_to_change = Role.OWNER

    list_display = (
        "name",
        "prefix",
        "user",
        "space",
        "role",
        "manage",
        "write_under",
        "expires_at",
        "revoked_at",
        "last_used_at",
    )
    list_filter = ("space", "role", "manage")
    search_fields = ("name", "prefix", "user__username")
    fields = readonly_fields = (*list_display, "minted_by", "created_at")
    actions = ["revoke"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: ApiToken | None = None) -> bool:
        return False  # revoked, it stays on record

    def allows(self, by: Principal, obj: ApiToken, action: str) -> bool:
        return super().allows(by, obj, action) or (action == "revoke" and obj.user_id == by.user_id)

    @admin.action(description="Revoke the selected tokens")
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> None:
        """All or none: one token the user may not revoke refuses the lot (403)."""
        tokens = list(queryset.select_related("space"))
        for token in tokens:
            self.acting_require(request, token, "revoke")
        for token in tokens:
            token_revoke(token=token)
        self.message_user(request, f"Revoked {len(tokens)} token(s).", messages.SUCCESS)
