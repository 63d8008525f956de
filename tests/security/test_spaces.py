"""Space × role over every URL of the table (tests/security/routes.py): a member of another
space, whatever their role there, finds nothing of this one. A call naming one of its rows is a
404, as for a row that does not exist (where the caller's role falls short, the role's 403 comes
first, and says nothing of the row); a call naming none shows none of its words; and no call
changes any of its rows."""

import pytest
from django.test import Client
from django.urls import reverse

from memsite.spaces.logic import Role, role_allows, role_needed
from memsite.spaces.models import ApiToken, Membership, Space
from memsite.spaces.services import membership_set
from tests.factories import UserFactory, token_for
from tests.security.routes import API, PAGE, ROUTES, send, site_patterns
from tests.security.rows import changed_since, rows_by_key
from tests.security.test_authorization import rolled_back, route_id
from tests.security.world import Words, World, build_world
from tests.shared_rows import built_once, own_copy

pytestmark = pytest.mark.django_db

MARK = "qzmark"  # in every text and name of this space: no page or list of the other may show it
MARKED = Words(text=lambda label: f"{label} {MARK}", name=lambda label: f"{label}-{MARK}")
PATTERNS = [
    pattern for pattern in site_patterns() if ROUTES.get(pattern.route) and ROUTES[pattern.route].kind in (API, PAGE)
]


def build() -> tuple[World, dict[Role, tuple[object, str]]]:
    """The marked world, and for each role a member of the space `elsewhere` only, with a key
    (whose use the calls below note on its row: the only row of theirs that is not this space's)."""
    world = build_world(MARKED)
    elsewhere = Space.objects.create(slug="elsewhere", name="Elsewhere")
    outsiders = {}
    for role in Role:
        user = UserFactory()
        Membership.objects.filter(user=user).delete()
        membership_set(space=elsewhere, member=user, role=role)
        outsiders[role] = (user, token_for(user, space=elsewhere))
    return world, outsiders


@pytest.fixture(scope="module")
def shared(django_db_setup, django_db_blocker):
    yield from built_once(django_db_blocker, build)


@pytest.fixture
def world(shared, db) -> World:
    return own_copy(shared[0])


@pytest.fixture
def outsiders(shared, world) -> dict[Role, tuple[Client, Client]]:
    """For each role, clients of the member of `elsewhere`: one with their token, one with their session."""
    clients = {}
    for role, (user, key) in shared[1].items():
        api, page = Client(), Client()
        api.defaults["HTTP_AUTHORIZATION"] = f"Token {key}"
        page.force_login(user)
        clients[role] = (api, page)
    return clients


def problem(response, *, names_a_row: bool, allowed: bool, method: str) -> str:
    status = response.status_code
    if names_a_row:
        expected = {404} if allowed else {403, 404}
        return "" if status in expected else f"expected {sorted(expected)}, got {status}"
    if status >= 500:
        return f"got {status}"
    body = b"" if response.streaming else response.content
    return f"shows {MARK}" if method == "GET" and MARK.encode() in body else ""


@pytest.mark.parametrize("pattern", PATTERNS, ids=route_id)
def test_another_spaces_members_find_and_change_nothing_here(world, outsiders, pattern):
    row = ROUTES[pattern.route]
    kwargs = row.kwargs(world)
    url = reverse(pattern.name, kwargs=kwargs)
    failures = []
    outsider_tokens = set(ApiToken.objects.filter(space__slug="elsewhere").values_list("pk", flat=True))
    for role, (api, page) in outsiders.items():
        client = api if row.kind == API else page
        for method, call in row.calls.items():
            before = rows_by_key()
            before["spaces.ApiToken"] = {
                pk: token for pk, token in before["spaces.ApiToken"].items() if pk not in outsider_tokens
            }
            with rolled_back(client):
                response = send(client, method, url, call, world)
                changed = changed_since(before)
            allowed = role_allows(role, role_needed(method, call.role))
            wrong = problem(response, names_a_row=bool(kwargs), allowed=allowed, method=method)
            if wrong or changed:
                failures.append(f"{role} {method} {url}: {wrong or ''} {changed[:3] if changed else ''}")
    assert not failures, "\n".join(failures)
