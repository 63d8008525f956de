"""What the navigation counts on every page: the questions waiting for the user."""

from functools import cached_property

from django.http import HttpRequest

from dashboard import selectors
from memsite.errors import ServiceError
from memsite.spaces.principals import principal_of


class NavCounts:
    """Counted when a template first asks, so a page without the navigation (the login form,
    the admin) costs no query; then one indexed COUNT."""

    def __init__(self, request: HttpRequest):
        self._request = request

    @cached_property
    def questions_waiting(self) -> int:
        user = getattr(self._request, "user", None)
        if user is None or not user.is_authenticated:
            return 0
        try:
            space = principal_of(self._request).space
        except ServiceError:  # a user in no space yet
            return 0
        return selectors.questions_waiting_count(space=space)


def nav_counts(request: HttpRequest) -> dict[str, NavCounts]:
    """`nav_counts` in every template."""
    return {"nav_counts": NavCounts(request)}
