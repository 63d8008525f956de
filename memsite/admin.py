"""What the apps' admins share: read-only rows, and changes judged in the space of the row they
change, never in the space the user last chose nor in `default` (`SpaceChecked`; a superuser
acts as an owner of every space, docs/spaces.md). Imports nothing of memory's or agents' apps."""

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest

from memsite.spaces.logic import Role, role_allows
from memsite.spaces.models import Space
from memsite.spaces.principals import Principal, principal_in_space


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


def admin_principal(request: HttpRequest, space: Space) -> Principal | None:
    """Who the admin's request acts as in `space`: its user there, an owner for a superuser;
    None for a user who is not a member there."""
    if request.user.is_superuser:
        return Principal(request.user, space, Role.OWNER, "", None)
    return principal_in_space(request, space)


class SpaceChecked:
    """Changes and deletions, each allowed only to a principal of the row's own space whose
    role there allows it (`role_to_change` or above, unless `allows` knows more). `may` is the
    one answer: the change form turns read-only, a POST to it is a 403, and a deletion, single
    or bulk, is refused whole."""

    role_to_change: Role = Role.EDITOR

    def space_of(self, obj) -> Space | None:
        return obj.space

    def allows(self, by: Principal, obj, action: str) -> bool:
        """Whether `by` may take `action` ("change" or "delete") on `obj`."""
        return role_allows(by.role, self.role_to_change)

    def may(self, request: HttpRequest, obj, action: str) -> bool:
        space = self.space_of(obj)
        if space is None:
            return request.user.is_superuser
        by = admin_principal(request, space)
        return by is not None and self.allows(by, obj, action)

    def acting_require(self, request: HttpRequest, obj, action: str) -> Principal:
        """The request's principal in `obj`'s space, for the services a change calls;
        PermissionDenied (the admin's 403) unless it may take `action` there."""
        space = self.space_of(obj)
        by = admin_principal(request, space) if space is not None else None
        if by is None or not self.allows(by, obj, action):
            raise PermissionDenied
        return by

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        allowed = super().has_change_permission(request, obj)  # type: ignore[misc]
        return allowed and (obj is None or self.may(request, obj, "change"))

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        allowed = super().has_delete_permission(request, obj)  # type: ignore[misc]
        return allowed and (obj is None or self.may(request, obj, "delete"))
