"""Demo data is for a developer's machine: its commands refuse to run with DEBUG off. The demo
user (`seed_demo` makes them) owns the demo's work: its memory, its search and its agent."""

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import CommandError

from memsite.spaces.models import Space
from memsite.spaces.principals import Principal, principal_rebuilt

DEMO_USERNAME = "demo"
DEMO_PASSWORD = "demo-password"


def demo_require_debug(*, command: str) -> None:
    """CommandError unless DEBUG is on: the demo's published login and its agent have no place
    in a deployment."""
    if not settings.DEBUG:
        raise CommandError(
            f"{command} adds demo data for a developer's machine and is refused with DEBUG off. "
            "On a developer's machine run it with DJANGO_DEBUG=true (`make run` does); nothing was changed."
        )


def demo_principal(*, space: Space) -> Principal:
    """The demo user acting in `space`; CommandError when `seed_demo` has not made them a member."""
    user_id = get_user_model().objects.filter(username=DEMO_USERNAME).values_list("pk", flat=True).first()
    principal = principal_rebuilt(space=space, user_id=user_id) if user_id is not None else None
    if principal is None:
        raise CommandError(f"The demo user '{DEMO_USERNAME}' is not a member of '{space.slug}': run seed_demo first.")
    return principal
