"""The dashboard's side of roles: a logged-in user's page requests pass the same check as the
API's (memsite.spaces.api.permissions); the API, the admin and pages outside spaces (logging in
and out) are left to their own. And a token's use is noted once it was answered without refusal."""

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from rest_framework.views import APIView

from memsite.errors import ServiceError
from memsite.middleware import DATABASE_ERRORS, database_unavailable
from memsite.spaces.logic import Role, role_needed
from memsite.spaces.models import ApiToken
from memsite.spaces.principals import principal_of, role_require
from memsite.spaces.services import token_use_note

PLAIN_TEXT = "text/plain; charset=utf-8"  # the refusal names a header's text: never read as HTML


def refusal_response(refusal: ServiceError) -> HttpResponse:
    return HttpResponse(refusal.message, status=refusal.status, content_type=PLAIN_TEXT)


def required_role(role: Role) -> Callable:
    """For a page view whose method says otherwise: a POST that only reads needs a reader."""

    def mark(view: Callable) -> Callable:
        view.required_role = role  # type: ignore[attr-defined]
        return view

    return mark


def outside_spaces(view: Callable) -> Callable:
    """For a page any logged-in user may use, member of a space or not (logging out)."""
    view.outside_spaces = True  # type: ignore[attr-defined]
    return view


def _is_space_page(request: HttpRequest, view: Callable) -> bool:
    view_class = getattr(view, "cls", None)
    if isinstance(view_class, type) and issubclass(view_class, APIView):
        return False  # the API's permission classes check it, after its own authentication
    match = request.resolver_match
    return not (getattr(view, "outside_spaces", False) or (match is not None and "admin" in match.app_names))


class SpaceRoleMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        token = getattr(request, "auth", None)  # set by the API's authentication
        if isinstance(token, ApiToken) and response.status_code < 400:
            token_use_note(token=token)  # a refused request writes nothing, not even this
        return response

    def process_view(self, request: HttpRequest, view: Callable, args: tuple, kwargs: dict) -> HttpResponse | None:
        if not _is_space_page(request, view):
            return None
        try:
            if not request.user.is_authenticated:  # reads the session
                return None  # the views send anonymous requests to log in
            needed = role_needed(request.method or "GET", getattr(view, "required_role", None))
            role_require(principal_of(request), needed)
        except ServiceError as refusal:
            return refusal_response(refusal)
        except DATABASE_ERRORS as error:  # met before the view: DatabaseUnavailableMiddleware never sees it
            return database_unavailable(request, error)
        return None
