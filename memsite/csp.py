"""The Content-Security-Policy header (Django 5.2 has none built in).

The policy is MEMSITE_CONTENT_SECURITY_POLICY, sent with every response while DEBUG is off.
With DEBUG on it is left out: Django's debug pages run inline scripts and styles."""

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse

HEADER = "Content-Security-Policy"


class ContentSecurityPolicyMiddleware:
    """Outermost but for SecurityMiddleware, so refusals from later middleware carry it too."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        policy = settings.MEMSITE_CONTENT_SECURITY_POLICY
        if policy and not settings.DEBUG:
            response.headers.setdefault(HEADER, policy)
        return response
