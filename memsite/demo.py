"""Demo data is for a developer's machine: its commands refuse to run with DEBUG off."""

from django.conf import settings
from django.core.management.base import CommandError


def demo_require_debug(*, command: str) -> None:
    """CommandError unless DEBUG is on: the demo's published login and its ticking agent have
    no place in a deployment."""
    if not settings.DEBUG:
        raise CommandError(
            f"{command} adds demo data for a developer's machine and is refused with DEBUG off. "
            "On a developer's machine run it with DJANGO_DEBUG=true (`make run` does); nothing was changed."
        )
