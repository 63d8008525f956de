from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from rest_framework.authtoken.models import TokenProxy

from memsite.spaces.models import ApiToken, Membership, Space
from memsite.spaces.services import token_revoke

# Its tokens are ApiTokens now (migration 0002): nothing of it is left to manage.
if admin.site.is_registered(TokenProxy):
    admin.site.unregister(TokenProxy)


@admin.register(Space)
class SpaceAdmin(admin.ModelAdmin):
    """One space, made by the migrations: none is added or deleted here."""

    list_display = ("slug", "name", "created_at")
    readonly_fields = ("slug", "created_at")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Space | None = None) -> bool:
        return False


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ("user", "space", "role", "created_at")
    list_filter = ("space", "role")
    search_fields = ("user__username",)
    autocomplete_fields = ("user",)


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Tokens are made by `manage.py token_create`, which shows the key once; here they are
    read and revoked. The digest is not shown."""

    list_display = (
        "name",
        "prefix",
        "user",
        "space",
        "role",
        "write_under",
        "expires_at",
        "revoked_at",
        "last_used_at",
    )
    list_filter = ("space", "role")
    search_fields = ("name", "prefix", "user__username")
    fields = readonly_fields = (*list_display, "created_at")
    actions = ["revoke"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: ApiToken | None = None) -> bool:
        return False  # revoked, it stays on record

    @admin.action(description="Revoke the selected tokens")
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> None:
        for token in queryset:
            token_revoke(token=token)
        self.message_user(request, f"Revoked {queryset.count()} token(s).", messages.SUCCESS)
