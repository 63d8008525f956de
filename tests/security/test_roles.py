"""Roles over every API route and every page of the site (tests/security/routes.py): a reader
reads, and any other call of theirs is a 403 naming the role needed that changes nothing, but
for the calls whose views declare a reader (a POST that only reads, a session's own tokens); an
editor's calls all get past the check but the owners' (members), refused the same way. Through
a token, what manages the space (its tokens too) is refused to both, saying what it needs."""

import pytest
from django.urls import reverse

from memsite.spaces.logic import Role, manage_refusal, role_allows, role_needed, role_refusal
from memsite.spaces.selectors import space_default
from memsite.spaces.services import membership_set
from tests.factories import token_for
from tests.security.routes import API, PAGE, ROUTES, Call, client_for, send, site_patterns
from tests.security.test_authorization import fingerprint, rolled_back, route_id

pytestmark = pytest.mark.django_db

API_PATTERNS = [
    pattern for pattern in site_patterns() if ROUTES.get(pattern.route) and ROUTES[pattern.route].kind == API
]
PAGE_PATTERNS = [
    pattern for pattern in site_patterns() if ROUTES.get(pattern.route) and ROUTES[pattern.route].kind == PAGE
]


def token_client(world, role: Role):
    client = client_for(world, "anonymous")
    client.defaults["HTTP_AUTHORIZATION"] = f"Token {token_for(world.user, role=role)}"
    return client


def needed(method: str, call: Call) -> Role:
    return role_needed(method, call.role)


def expected_refusal(client, method: str, call: Call, role: Role) -> str | None:
    """What a call by `role` (through a token without the manage scope, if the client has one)
    is refused with; None if it may make it."""
    if client.defaults.get("HTTP_AUTHORIZATION") and call.manages_through_token(method):
        return manage_refusal(role=role, through_token=True, manage=False, write_under="")
    return None if role_allows(role, needed(method, call)) else role_refusal(role, needed(method, call))


def check_role(world, pattern, client, role: Role) -> list[str]:
    """The calls `role` may make answer as the table says; the others are 403s naming the role
    they need, and change nothing."""
    row = ROUTES[pattern.route]
    url = reverse(pattern.name, kwargs=row.kwargs(world))
    failures = []
    for method, call in row.calls.items():
        with rolled_back(client):
            before = fingerprint()
            response = send(client, method, url, call, world)
            refusal = expected_refusal(client, method, call, role)
            if call.sessions_only and client.defaults.get("HTTP_AUTHORIZATION"):
                problem = "" if response.status_code == 403 else f"expected 403 for a token, got {response.status_code}"
            elif refusal is None:
                problem = (
                    "" if call.allows(response.status_code) else f"expected {call.status}, got {response.status_code}"
                )
            elif response.status_code != 403 or refusal not in response.content.decode():
                problem = f"expected 403: {refusal!r}, got {response.status_code}: {response.content[:200]!r}"
            else:
                problem = "a refused call changed the database" if fingerprint() != before else ""
        if problem:
            failures.append(f"{method} {url}: {problem}")
    return failures


@pytest.mark.parametrize("pattern", API_PATTERNS, ids=route_id)
def test_a_reader_token_reads_and_is_refused_the_rest(world, pattern):
    failures = check_role(world, pattern, token_client(world, Role.READER), Role.READER)
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("pattern", PAGE_PATTERNS, ids=route_id)
def test_a_reader_session_reads_the_pages_and_is_refused_the_rest(world, pattern):
    membership_set(space=space_default(), member=world.user, role=Role.READER)
    failures = check_role(world, pattern, client_for(world, "user"), Role.READER)
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("pattern", API_PATTERNS, ids=route_id)
def test_an_editor_token_gets_past_the_check_everywhere_but_the_managers_calls(world, pattern):
    row = ROUTES[pattern.route]
    url = reverse(pattern.name, kwargs=row.kwargs(world))
    client = token_client(world, Role.EDITOR)
    for method, call in row.calls.items():
        with rolled_back(client):
            response = send(client, method, url, call, world)
        if call.sessions_only:
            assert response.status_code == 403, f"{method} {url}: {response.status_code}"
        elif (refusal := expected_refusal(client, method, call, Role.EDITOR)) is not None:
            assert response.status_code == 403, f"{method} {url}: {response.status_code}"
            assert refusal in response.content.decode()
        else:
            assert response.status_code not in (401, 403), f"{method} {url}: {response.status_code}"
