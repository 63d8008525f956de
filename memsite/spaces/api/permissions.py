from typing import TYPE_CHECKING

from rest_framework.permissions import BasePermission
from rest_framework.request import Request

from memsite.spaces.logic import role_needed
from memsite.spaces.principals import principal_of, role_require

if TYPE_CHECKING:  # rest_framework.views reads DEFAULT_PERMISSION_CLASSES, which names this module
    from rest_framework.views import APIView


class SpaceRolePermission(BasePermission):
    """After IsAuthenticated: reading needs a reader, anything else an editor, unless the view
    says otherwise with `required_role` (a POST that only reads), or for one method with
    `required_roles` (method: role). Refusals name the role needed. The methods a view names in
    `manages` manage the space, as any that needs an owner does: a token may call them only
    with the owner role and the manage scope.
    A view whose URL names its space (`space_url_kwarg`) acts in that space; a method the view
    does not have is left to DRF's 405, whatever the role."""

    def has_permission(self, request: Request, view: "APIView") -> bool:
        kwarg = getattr(view, "space_url_kwarg", None)
        principal = principal_of(request, slug=view.kwargs.get(kwarg) if kwarg else None)
        method = request.method or "GET"
        if method.lower() in view.http_method_names and hasattr(view, method.lower()):
            declared = getattr(view, "required_roles", {}).get(method, getattr(view, "required_role", None))
            role_require(principal, role_needed(method, declared), manages=method in getattr(view, "manages", ()))
        return True
