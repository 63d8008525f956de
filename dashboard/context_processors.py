"""What the navigation counts on every page: the questions waiting for the user."""

from functools import cached_property

from django.http import HttpRequest

from dashboard import selectors
from memsite.spaces.context_processors import SpaceNav


class NavCounts:
    """Counted when a template first asks, so a page without the navigation (the login form,
    the admin) costs no query; then one indexed COUNT."""

    def __init__(self, request: HttpRequest):
        self._request = request

    @cached_property
    def questions_waiting(self) -> int:
        space = SpaceNav(self._request).space  # none when signed out or in no space yet
        return 0 if space is None else selectors.questions_waiting_count(space=space)


def nav_counts(request: HttpRequest) -> dict[str, NavCounts]:
    """`nav_counts` in every template."""
    return {"nav_counts": NavCounts(request)}
