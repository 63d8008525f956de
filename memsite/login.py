"""The login pages (the site's and the admin site's), with failed logins limited.
Explained in docs/memsite.md."""

import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from django import forms
from django.conf import settings
from django.contrib import admin
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import AuthenticationForm
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from redis.exceptions import RedisError
from rest_framework.throttling import BaseThrottle

from memsite.throttles import Hit, Window, hit_release, key_part, window_hit

clock = time.time  # the wall clock, which every web process shares (memsite.throttles)
logger = logging.getLogger(__name__)
_Response = TypeVar("_Response", bound=HttpResponseBase)

# Each count a login attempt takes a hit on: the setting of its limit, and what the login says
# past it. The pair (an address trying one username) is held tightest; the other two are loose
# enough that a stranger's address cannot reach them alone (docs/memsite.md).
COUNTS = {
    "pair": ("MEMSITE_LOGIN_MAX_FAILURES", "Too many failed logins for this username from this address."),
    "address": ("MEMSITE_LOGIN_ADDRESS_MAX_FAILURES", "Too many failed logins from this address."),
    "username": (
        "MEMSITE_LOGIN_USERNAME_MAX_FAILURES",
        "Too many failed logins for this username, from many addresses.",
    ),
}
# The first failures of a streak cost nothing (typos); after each later one the pair waits
# twice as long as after the one before, from 2 seconds.
FREE_FAILURES = 3


def streak_wait_s(*, failures: int, limit: int, window_s: int) -> int:
    """How long an address waits before trying a username again after the `failures`-th failure
    of its streak: nothing after the first few, then 2, 4, 8... seconds, never longer than the
    window; nothing at the limit either, where the lockout takes over."""
    if failures <= FREE_FAILURES or failures >= limit:
        return 0
    return min(2 ** (failures - FREE_FAILURES), window_s)


@dataclass(frozen=True)
class LoginAttempt:
    """An attempt of an address on a username (`pair`, its key): its hits on the counts, or the
    wait its streak still asks for, which refused it before any hit was taken."""

    pair: str
    hits: dict[str, Hit] = field(default_factory=dict)
    wait_s: int = 0

    @property
    def refused_by(self) -> str:
        """`wait`, or the first count past its limit; empty when nothing refused it."""
        if self.wait_s:
            return "wait"
        return next((count for count, hit in self.hits.items() if not hit.allowed), "")

    @property
    def refused(self) -> bool:
        return bool(self.refused_by)

    @property
    def retry_after_s(self) -> int:
        return self.wait_s or max(hit.retry_after_s for hit in self.hits.values() if not hit.allowed)

    def release(self) -> None:
        for hit in self.hits.values():
            hit_release(hit)

    def fail(self, now: float) -> None:
        """The password was wrong: past the first few failures, the streak waits before its next try."""
        wait_s = streak_wait_s(
            failures=self.hits["pair"].count,
            limit=settings.MEMSITE_LOGIN_MAX_FAILURES,
            window_s=settings.MEMSITE_LOGIN_WINDOW_S,
        )
        if wait_s:
            _cache_call(cache.set, f"login:wait:{self.pair}", now + wait_s, timeout=wait_s)


def _cache_call(call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """What the cache answers; None, with a warning, when it does not answer: a login goes ahead."""
    try:
        return call(*args, **kwargs)
    except (RedisError, OSError) as exc:
        logger.warning("A failed login's wait was not read or kept, the cache did not answer: %s", exc)
        return None


def client_address(request: HttpRequest) -> str:
    """As the API's limits see it: the connection's address, or the trusted proxy's word for it
    (REST_FRAMEWORK's NUM_PROXIES, from MEMSITE_TRUSTED_PROXIES)."""
    # get_ident reads only META, which a Django request has as DRF's does.
    return BaseThrottle().get_ident(request) or ""  # type: ignore[arg-type]


def login_attempt_start(*, username: str, address: str, now: float) -> LoginAttempt:
    pair = key_part(f"{address}\n{username}")
    until = _cache_call(cache.get, f"login:wait:{pair}")
    if until is not None and until > now:
        # Held back, it checks no password, so it counts nowhere: waiting is all it can do.
        return LoginAttempt(pair=pair, wait_s=math.ceil(until - now))
    keys = {"pair": pair, "address": key_part(address), "username": key_part(username)}
    attempt = LoginAttempt(
        pair=pair,
        hits={
            count: window_hit(
                key=f"login:{count}:{keys[count]}",
                window=Window(limit=getattr(settings, setting), seconds=settings.MEMSITE_LOGIN_WINDOW_S),
                now=now,
            )
            for count, (setting, _) in COUNTS.items()
        },
    )
    if attempt.refused:
        # A refused attempt checks no password: it must not lengthen the other counts.
        attempt.release()
    return attempt


def refusal_message(attempt: LoginAttempt) -> str:
    """What the login page says to a refused attempt: the wait in seconds, a lockout in minutes."""
    if attempt.refused_by == "wait":
        return (
            "Wrong password for this username from this address several times in a row: "
            f"try again in {_counted(attempt.retry_after_s, 'second')}."
        )
    minutes = math.ceil(attempt.retry_after_s / 60)
    return f"{COUNTS[attempt.refused_by][1]} Try again in {_counted(minutes, 'minute')}."


def _counted(number: int, unit: str) -> str:
    return f"{number} {unit}{'s' if number != 1 else ''}"


class ThrottledAuthenticationForm(AuthenticationForm):
    """Counts the form's failed logins; `refusal` is set when the limit refused this one."""

    refusal: LoginAttempt | None = None
    request: HttpRequest  # the login views always pass it

    def clean(self) -> dict[str, Any]:
        username, password = self.cleaned_data.get("username"), self.cleaned_data.get("password")
        if username is None or not password:
            return super().clean()  # no password is checked: nothing to count
        now = clock()
        attempt = login_attempt_start(username=username, address=client_address(self.request), now=now)
        if attempt.refused:
            self.refusal = attempt
            raise forms.ValidationError(refusal_message(attempt), code="throttled")
        try:
            cleaned = super().clean()
        except forms.ValidationError:
            # A wrong password, or a user who may not log in here: it stays counted.
            attempt.fail(now)
            raise
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
