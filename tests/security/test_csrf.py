"""CSRF: a session's every write needs the CSRF token, whatever sends it (a dashboard form, an
htmx request, a script using the API with the browser's cookie, the admin, the login form). Each
write URL comes from the table in tests/security/routes.py, so a new one is checked too.

Every page hands htmx the token (`hx-headers` on <body>), and every form that posts carries it,
so the dashboard's own requests pass. A swarm node's token is not a cookie a browser would send
by itself, so the API takes it without a CSRF token."""

import json
from html.parser import HTMLParser

import pytest
from django.contrib.admin.utils import quote
from django.test import Client
from django.urls import reverse

from memsite.spaces.logic import Role, role_allows, role_needed, role_refusal
from tests.security.routes import API, PAGE, PUBLIC, ROUTES, Call, client_for, send, site_patterns
from tests.security.test_authorization import CALLER_ROLES, fingerprint, rolled_back
from tests.security.world import World

pytestmark = pytest.mark.django_db

WRITES = ("POST", "PUT", "PATCH", "DELETE")
PATTERNS = {pattern.route: pattern for pattern in site_patterns()}


def cases(*kinds: str) -> list[tuple[str, str]]:
    return [
        (route, method)
        for route, row in ROUTES.items()
        if row.kind in kinds
        for method in row.calls
        if method in WRITES
    ]


def url_of(route: str, world: World) -> str:
    return reverse(PATTERNS[route].name, kwargs=ROUTES[route].kwargs(world))


def strict_client(world: World, caller: str) -> Client:
    """A client that is checked for CSRF as a browser is: the test client's default skips it."""
    return client_for(world, caller, enforce_csrf_checks=True)


def api_callers(method: str, call: Call) -> tuple[str, str]:
    """A session and a token whose role allows the call: the editor's, else the owner's (whose
    token manages the space)."""
    editors = role_allows(Role.EDITOR, role_needed(method, call.role)) and not call.manages_through_token(method)
    return ("user", "token") if editors else ("staff", "staff_token")


def csrf_token(client: Client) -> str:
    """The token the dashboard gives htmx, from a page's <body hx-headers>."""
    html = client.get(reverse("memory:browser")).content.decode()
    return json.loads(BodyHeaders.of(html))["X-CSRFToken"]


class BodyHeaders(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.value: str | None = None

    def handle_starttag(self, tag, attrs) -> None:
        if tag == "body":
            self.value = dict(attrs).get("hx-headers")

    @classmethod
    def of(cls, html: str) -> str:
        parser = cls()
        parser.feed(html)
        assert parser.value is not None, "the page's <body> has no hx-headers"
        return parser.value


class PostForms(HTMLParser):
    """Each <form method="post">: its action, and whether it holds the CSRF token."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[dict] = []
        self._open: dict | None = None

    def handle_starttag(self, tag, attrs) -> None:
        attributes = dict(attrs)
        if tag == "form" and (attributes.get("method") or "get").lower() == "post":
            self._open = {"action": attributes.get("action"), "token": False}
            self.forms.append(self._open)
        elif tag == "input" and self._open is not None and attributes.get("name") == "csrfmiddlewaretoken":
            self._open["token"] = bool(attributes.get("value"))

    def handle_endtag(self, tag) -> None:
        if tag == "form":
            self._open = None


@pytest.mark.parametrize(("route", "method"), cases(PAGE), ids=lambda value: value or "(home)")
@pytest.mark.parametrize("caller", ["user", "staff"])
def test_a_dashboard_write_needs_the_csrf_token(world, route, method, caller):
    call = ROUTES[route].calls[method]
    url = url_of(route, world)
    client = strict_client(world, caller)
    token = csrf_token(client)
    for headers in ({}, {"HTTP_X_CSRFTOKEN": "x" * 64}, {"HTTP_HX_REQUEST": "true"}):
        with rolled_back(client):
            before = fingerprint()
            response = send(client, method, url, call, world, **headers)
            assert response.status_code == 403, (headers, response.status_code)
            assert fingerprint() == before, headers
    # The token htmx sends from <body hx-headers> lets the same request through, to the role check.
    response = send(client, method, url, call, world, HTTP_X_CSRFTOKEN=token)
    needed = role_needed(method, call.role)
    if role_allows(CALLER_ROLES[caller], needed):
        assert call.allows(response.status_code), (response.status_code, response.content[:300])
    else:
        assert role_refusal(CALLER_ROLES[caller], needed) in response.content.decode(), response.content[:300]


@pytest.mark.parametrize(("route", "method"), cases(API), ids=str)
def test_an_api_write_by_session_needs_the_csrf_token(world, route, method):
    call = ROUTES[route].calls[method]
    url = url_of(route, world)
    session, swarm_node = api_callers(method, call)
    client = strict_client(world, session)
    token = csrf_token(client)
    with rolled_back(client):
        before = fingerprint()
        response = send(client, method, url, call, world)
        assert response.status_code == 403 and "CSRF" in response.json()["detail"], response.content
        assert fingerprint() == before
    with rolled_back(client):
        response = send(client, method, url, call, world, HTTP_X_CSRFTOKEN=token)
        assert call.allows(response.status_code), (response.status_code, response.content[:300])
    # A swarm node's token is no ambient credential: it needs no CSRF token (a call for sessions
    # only refuses it for what it is, not for a missing CSRF token).
    node = strict_client(world, swarm_node)
    response = send(node, method, url, call, world)
    if call.sessions_only:
        assert response.status_code == 403 and "CSRF" not in response.json()["detail"], response.content
    else:
        assert call.allows(response.status_code), (response.status_code, response.content[:300])


@pytest.mark.parametrize(("route", "method"), cases(PUBLIC), ids=str)
def test_logging_in_and_out_needs_the_csrf_token(world, route, method):
    call = ROUTES[route].calls[method]
    client = strict_client(world, "user")
    before = fingerprint()
    response = send(client, method, url_of(route, world), call, world)
    assert response.status_code == 403
    assert fingerprint() == before


def test_the_admin_needs_the_csrf_token(world):
    client = strict_client(world, "staff")
    folder = world.folder
    change = reverse("admin:memory_node_change", args=[quote(folder.pk)])
    before = fingerprint()
    form = {"name": "renamed", "type": "folder", "description": "", "context": "{}", "expected_version": folder.version}
    assert client.post(change, form).status_code == 403
    assert (
        client.post(reverse("admin:memory_node_delete", args=[quote(world.document.pk)]), {"post": "yes"}).status_code
        == 403
    )
    assert fingerprint() == before


def page_cases() -> list[str]:
    return [route for route, row in ROUTES.items() if row.kind == PAGE and "GET" in row.calls]


@pytest.mark.parametrize("route", page_cases(), ids=lambda value: value or "(home)")
def test_every_page_hands_its_forms_and_htmx_the_token(world, route):
    client = strict_client(world, "staff")
    call = ROUTES[route].calls["GET"]
    response = send(client, "GET", url_of(route, world), call, world, follow=not call.htmx)
    assert response.status_code in (200, 286)
    if not response["Content-Type"].startswith("text/html"):
        return  # a download
    html = response.content.decode()
    if not call.htmx:  # a whole page: htmx sends the token with every request it makes from it
        token = json.loads(BodyHeaders.of(html))["X-CSRFToken"]
        preview = client.post(
            reverse("memory:markdown_preview"), {"content": "# hi"}, HTTP_X_CSRFTOKEN=token, HTTP_HX_REQUEST="true"
        )
        assert preview.status_code == 200
    forms = PostForms()
    forms.feed(html)
    assert all(form["token"] for form in forms.forms), [form["action"] for form in forms.forms if not form["token"]]
