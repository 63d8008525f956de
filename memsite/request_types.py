"""The requests views are given, typed with what middleware and decorators guarantee them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.http import HttpRequest
from rest_framework.request import Request

if TYPE_CHECKING:
    from django.contrib.auth.models import User
    from django_htmx.middleware import HtmxDetails


class HtmxHttpRequest(HttpRequest):
    """Any request of the site: django_htmx's middleware says whether htmx sent it."""

    htmx: HtmxDetails


class AuthenticatedHttpRequest(HtmxHttpRequest):
    """A request to a view behind `login_required`."""

    user: User


class AuthenticatedRequest(Request):
    """A request to an API view: IsAuthenticated, the default permission, lets no other in."""

    user: User
