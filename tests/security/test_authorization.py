"""Who may call what: every URL of the site (tests/security/routes.py) and every method it
accepts, called by five callers:

- anonymous: nobody. The API answers 401; pages send to the login form; the admin to its own.
- token: a swarm node's token (a user who is not staff). It works on the API, and nowhere else.
- staff_token: a staff user's token, an owner's with the manage scope. It too works on the API
  only: a token never opens the dashboard's pages or the admin, whoever it belongs to.
- user: a logged-in user who is not staff. The API and the pages work; the admin does not.
- staff: a logged-in staff user. Everything works.

The users are an editor (token, user) and an owner (staff_token, staff) of the space: a call
that needs an owner (managing members, a space's settings) is a 403 for the editor's, on the
API and on the pages; and a call that manages the space through a token (making or revoking
tokens too) is a 403 for any token but one that may manage it.

A refused call changes nothing. Each call runs in a savepoint that is rolled back, so every
caller finds the same world."""

import copy
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from django.db import transaction
from django.urls import reverse

from memsite.spaces.logic import Role, role_allows, role_needed
from tests.security.routes import (
    ADMIN_OPEN,
    API,
    METHODS,
    PAGE,
    PUBLIC,
    ROUTES,
    Call,
    Pattern,
    admin_url,
    client_for,
    is_admin,
    send,
    site_patterns,
)
from tests.security.rows import Rows, rows_by_key
from tests.security.world import World

pytestmark = pytest.mark.django_db

PATTERNS = list(site_patterns())
SITE = [pattern for pattern in PATTERNS if not is_admin(pattern)]
ADMIN = [pattern for pattern in PATTERNS if is_admin(pattern)]
CALLERS = ("anonymous", "token", "staff_token", "user", "staff")
CALLER_ROLES = {"token": Role.EDITOR, "staff_token": Role.OWNER, "user": Role.EDITOR, "staff": Role.OWNER}
MANAGING_TOKENS = {"staff_token"}  # the tokens with the owner role and the manage scope
LOGIN = "/login/"
ADMIN_LOGIN = "/admin/login/"
# The only URLs anyone may call, and why.
PUBLIC_URLS = {"healthz", "favicon.ico", "login/", "logout/", "api/schema/", "api/docs/"}


def route_id(pattern: Pattern) -> str:
    return pattern.route or "(home)"


def fingerprint() -> Rows:
    """Every row of every table but the sessions: equal before and after means nothing changed.
    Read with plain SQL: the tests take thousands of these."""
    return rows_by_key()


@contextmanager
def rolled_back(*clients) -> Iterator[None]:
    """A savepoint rolled back at the end; the clients keep the cookies they came in with (a
    logout, say, would otherwise leave them with a session that was rolled back)."""
    cookies = [copy.deepcopy(client.cookies) for client in clients]
    with transaction.atomic():
        yield
        transaction.set_rollback(True)
    for client, saved in zip(clients, cookies, strict=True):
        client.cookies = saved


def redirects_to(response, path: str) -> bool:
    return response.status_code == 302 and response["Location"].startswith(path)


def url_of(pattern: Pattern, world: World) -> str:
    return reverse(pattern.name, kwargs=ROUTES[pattern.route].kwargs(world))


def verdict(kind: str, caller: str, method: str, call: Call, response) -> tuple[bool, str]:
    """(whether the caller may call it, what is wrong with the response, if anything)."""
    status = response.status_code
    if kind == PUBLIC:
        return True, "" if call.allows(status) else f"expected {call.status}, got {status}"
    if kind == API:
        if caller == "anonymous":
            return False, "" if status == 401 and response[
                "WWW-Authenticate"
            ] == "Token" else f"expected 401, got {status}"
        if call.sessions_only and caller.endswith("token"):
            return False, "" if status == 403 else f"expected 403 for a token, got {status}"
        if caller.endswith("token") and call.manages_through_token(method) and caller not in MANAGING_TOKENS:
            return False, "" if status == 403 else f"expected 403 for a token that does not manage, got {status}"
        if not role_allows(CALLER_ROLES[caller], role_needed(method, call.role)):
            return False, "" if status == 403 else f"expected 403 for an {CALLER_ROLES[caller]}, got {status}"
        return True, "" if call.allows(status) else f"expected {call.status}, got {status}: {response.content[:300]!r}"
    assert kind == PAGE
    if caller in ("anonymous", "token", "staff_token"):
        return False, "" if redirects_to(response, f"{LOGIN}?next=") else f"expected the login redirect, got {status}"
    if not role_allows(CALLER_ROLES[caller], role_needed(method, call.role)):
        return False, "" if status == 403 else f"expected 403 for an {CALLER_ROLES[caller]}, got {status}"
    if not call.allows(status):
        return True, f"expected {call.status}, got {status}: {response.content[:300]!r}"
    if status == 302 and response["Location"].startswith((LOGIN, ADMIN_LOGIN)):
        return True, f"sent to log in: {response['Location']}"
    return True, ""


def test_every_url_is_in_the_table():
    routes = {pattern.route for pattern in SITE}
    assert not routes - set(ROUTES), "URLs without a row in tests/security/routes.py"
    assert not set(ROUTES) - routes, "rows in tests/security/routes.py for URLs that are gone"


def test_the_table_says_what_kind_each_url_is():
    for route, row in ROUTES.items():
        if row.kind == PUBLIC:
            assert route in PUBLIC_URLS and row.reason, route
        else:
            assert row.kind == (API if route.startswith("api/") else PAGE), route
    assert {route for route, row in ROUTES.items() if row.kind == PUBLIC} == PUBLIC_URLS


@pytest.fixture(autouse=True)
def slots_for_every_call(settings):
    """A streamed download the matrix does not read keeps its slot until the test ends: enough
    slots that the matrix's own calls never find the server busy."""
    settings.MEMSITE_WAIT_SLOTS = 100


@pytest.mark.parametrize("pattern", SITE, ids=route_id)
def test_each_caller_gets_what_it_may(world, pattern):
    row = ROUTES[pattern.route]
    url = url_of(pattern, world)
    clients = {caller: client_for(world, caller) for caller in CALLERS}
    failures = []
    for method, call in row.calls.items():
        for caller, client in clients.items():
            with rolled_back(client):
                before = fingerprint()
                response = send(client, method, url, call, world)
                allowed, problem = verdict(row.kind, caller, method, call, response)
                if response.streaming:
                    # Read to its end, as a client does: the test client then closes it, and it
                    # gives back what it holds (closing it here would close the test's database
                    # connection, which the client keeps open while it closes a response).
                    response.getvalue()
                if not allowed and fingerprint() != before:
                    problem = f"{problem}; a refused call changed the database".lstrip("; ")
            if problem:
                failures.append(f"{method} {url} as {caller}: {problem}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("pattern", SITE, ids=route_id)
def test_other_methods_are_405(world, pattern):
    """The table lists every method a URL accepts: any other is refused by an allowed caller."""
    row = ROUTES[pattern.route]
    client = client_for(world, "token" if row.kind == API else "staff")
    url = url_of(pattern, world)
    failures = []
    for method in METHODS:
        if method in row.calls:
            continue
        with rolled_back():
            status = send(client, method, url, None, world).status_code
        if status != 405:
            failures.append(f"{method} {url}: {status}")
    assert not failures, "\n".join(failures)


def lands_on_admin_login(client, response) -> bool:
    """A redirect, followed by GET, that ends at the admin's login form."""
    for _ in range(3):
        if response.status_code != 302:
            return False
        if response["Location"].startswith(ADMIN_LOGIN):
            return True
        response = client.get(response["Location"])
    return False


@pytest.mark.parametrize("pattern", ADMIN, ids=route_id)
def test_the_admin_is_for_staff_sessions_only(world, pattern):
    url = admin_url(world, pattern)
    clients = {caller: client_for(world, caller) for caller in CALLERS}
    failures = []
    for method in METHODS:
        writes = method not in ("GET", "HEAD")
        for caller, client in clients.items():
            with rolled_back(client):
                before = fingerprint() if writes else None
                response = send(client, method, url, None, world)
                status = response.status_code
                if pattern.name in ADMIN_OPEN:
                    problem = "" if status < 500 else f"got {status}"
                elif caller != "staff":
                    problem = (
                        "" if lands_on_admin_login(client, response) else f"expected the admin login, got {status}"
                    )
                    if not problem and writes and fingerprint() != before:
                        problem = "a refused call changed the database"
                elif status >= 500 or lands_on_admin_login(client, response):
                    problem = f"staff refused: {status}"
                else:
                    problem = ""
            if problem:
                failures.append(f"{method} {url} as {caller}: {problem}")
    assert not failures, "\n".join(failures)


def test_every_admin_url_is_covered():
    """Each admin URL names a page of the admin site or a registered model, so the test above
    can fill it in."""
    for pattern in ADMIN:
        catch_all = pattern.route == "admin/(?P<url>.*)$"
        assert pattern.name is not None or catch_all or pattern.route.endswith("<path:object_id>/"), pattern.route


def test_the_fingerprint_sees_any_change(world):
    """A guard on the tests above: a write anywhere shows in the fingerprint."""
    before = fingerprint()
    with rolled_back():
        world.tick.__class__.objects.filter(pk=world.tick.pk).update(outcome="changed")
        assert fingerprint() != before
    assert fingerprint() == before
