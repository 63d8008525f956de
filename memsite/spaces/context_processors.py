"""What every page shows of spaces: the space the user acts in, their role there, and the other
spaces they may switch to."""

from functools import cached_property

from django.http import HttpRequest

from memsite.errors import ServiceError
from memsite.spaces.logic import Role
from memsite.spaces.models import Space
from memsite.spaces.principals import Principal, principal_of, spaces_of


class SpaceNav:
    """Read when a template first asks, so a page that shows none of it (the login form, the
    admin) costs no query: the principal (none when a space page's check already found it) and
    the user's memberships, one query each."""

    def __init__(self, request: HttpRequest):
        self._request = request

    @cached_property
    def _signed_in(self) -> bool:
        user = getattr(self._request, "user", None)
        return bool(user is not None and user.is_authenticated)

    @cached_property
    def _principal(self) -> Principal | None:
        if not self._signed_in:
            return None
        try:
            return principal_of(self._request)
        except ServiceError:  # a user in no space yet
            return None

    @property
    def space(self) -> Space | None:
        return self._principal.space if self._principal is not None else None

    @property
    def role(self) -> Role | None:
        return self._principal.role if self._principal is not None else None

    @cached_property
    def spaces(self) -> list[tuple[Space, Role]]:
        """Every space of the user's, with their role in each."""
        return spaces_of(self._request) if self._signed_in else []

    @property
    def others(self) -> list[tuple[Space, Role]]:
        """The spaces to switch to: all but the current one."""
        current = self.space.pk if self.space is not None else None
        return [(space, role) for space, role in self.spaces if space.pk != current]


def space_nav(request: HttpRequest) -> dict[str, SpaceNav]:
    """`space_nav` in every template."""
    return {"space_nav": SpaceNav(request)}
