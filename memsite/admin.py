"""What the apps' admins share. Imports nothing of memory's or the agents' apps."""

from django.contrib import admin
from django.http import HttpRequest


class ReadOnly:
    """Rows that only the services write: shown, never added, changed or deleted in the admin."""

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


class ReadOnlyAdmin(ReadOnly, admin.ModelAdmin):
    pass


class ReadOnlyInline(ReadOnly, admin.TabularInline):
    extra = 0
    can_delete = False
    show_change_link = False
