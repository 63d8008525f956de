"""The login pages (the site's and the admin site's), with failed logins limited.
Explained in docs/memsite.md."""

import math
import time
from dataclasses import dataclass
from typing import Any, TypeVar

from django import forms
from django.conf import settings
from django.contrib import admin
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import AuthenticationForm
from django.http import HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from rest_framework.throttling import BaseThrottle

from memsite.throttles import Hit, Window, hit_release, key_part, window_hit

clock = time.time  # the wall clock, which every web process shares (memsite.throttles)
_Response = TypeVar("_Response", bound=HttpResponseBase)


@dataclass(frozen=True)
class LoginAttempt:
    """An attempt's hits on its username's and its address's counts."""

    hits: tuple[Hit, ...]

    @property
    def refused(self) -> bool:
        return not all(hit.allowed for hit in self.hits)

    @property
    def retry_after_s(self) -> int:
        return max(hit.retry_after_s for hit in self.hits if not hit.allowed)

    def release(self) -> None:
        for hit in self.hits:
            hit_release(hit)


def client_address(request: HttpRequest) -> str:
    """As the API's limits see it: the connection's address, or the trusted proxy's word for it
    (REST_FRAMEWORK's NUM_PROXIES, from MEMSITE_TRUSTED_PROXIES)."""
    # get_ident reads only META, which a Django request has as DRF's does.
    return BaseThrottle().get_ident(request) or ""  # type: ignore[arg-type]


def login_attempt_start(*, username: str, address: str, now: float) -> LoginAttempt:
    window = Window(limit=settings.MEMSITE_LOGIN_MAX_FAILURES, seconds=settings.MEMSITE_LOGIN_WINDOW_S)
    attempt = LoginAttempt(
        hits=tuple(
            window_hit(key=f"login:{what}:{key_part(value)}", window=window, now=now)
            for what, value in (("username", username), ("address", address))
        )
    )
    if attempt.refused:
        # A refused attempt checks no password: it must not lengthen the other count.
        attempt.release()
    return attempt


def refusal_message(retry_after_s: int) -> str:
    minutes = math.ceil(retry_after_s / 60)
    return (
        "Too many failed logins for this username or from this address. "
        f"Try again in {minutes} minute{'s' if minutes != 1 else ''}."
    )


class ThrottledAuthenticationForm(AuthenticationForm):
    """Counts the form's failed logins; `refusal` is set when the limit refused this one."""

    refusal: LoginAttempt | None = None
    request: HttpRequest  # the login views always pass it

    def clean(self) -> dict[str, Any]:
        username, password = self.cleaned_data.get("username"), self.cleaned_data.get("password")
        if username is None or not password:
            return super().clean()  # no password is checked: nothing to count
        attempt = login_attempt_start(username=username, address=client_address(self.request), now=clock())
        if attempt.refused:
            self.refusal = attempt
            raise forms.ValidationError(refusal_message(attempt.retry_after_s), code="throttled")
        # A wrong password, or a user who may not log in here, raises and stays counted.
        cleaned = super().clean()
        attempt.release()
        return cleaned


class LoginForm(ThrottledAuthenticationForm):
    pass


class AdminLoginForm(ThrottledAuthenticationForm, AdminAuthenticationForm):
    pass


def with_refusal_status(response: _Response) -> _Response:
    """A login page whose form the limit refused, as a 429 with Retry-After."""
    form = (getattr(response, "context_data", None) or {}).get("form")
    refusal = getattr(form, "refusal", None)
    if refusal is not None:
        response.status_code = 429
        response["Retry-After"] = str(refusal.retry_after_s)
    return response


_site_login = auth_views.LoginView.as_view(authentication_form=LoginForm)


def login(request: HttpRequest) -> HttpResponseBase:
    return with_refusal_status(_site_login(request))


class AdminSite(admin.AdminSite):
    """Django's admin site (memsite.apps.AdminConfig makes it the default), its login limited
    like the site's."""

    login_form = AdminLoginForm

    def login(self, request: HttpRequest, extra_context: dict | None = None) -> HttpResponse:
        return with_refusal_status(super().login(request, extra_context))
