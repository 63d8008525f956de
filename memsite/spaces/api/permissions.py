from typing import TYPE_CHECKING

from rest_framework.permissions import BasePermission
from rest_framework.request import Request

from memsite.spaces.logic import role_needed
from memsite.spaces.principals import principal_of, role_require

if TYPE_CHECKING:  # rest_framework.views reads DEFAULT_PERMISSION_CLASSES, which names this module
    from rest_framework.views import APIView


class SpaceRolePermission(BasePermission):
    """After IsAuthenticated: reading needs a reader, anything else an editor, unless the view
    says otherwise with `required_role` (a POST that only reads). Refusals name the role needed."""

    def has_permission(self, request: Request, view: "APIView") -> bool:
        needed = role_needed(request.method or "GET", getattr(view, "required_role", None))
        role_require(principal_of(request), needed)
        return True
