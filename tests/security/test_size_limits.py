"""Every write has a bound on what it reads: each write URL of the table in
tests/security/routes.py is sent a body one byte over its limit and refuses it with 413, changing
nothing. Most are refused from the Content-Length alone (memsite/limits.py), the rest by the view
that knows its limit, before it reads more than that.

The limits: a node's content (MEMSITE_MAX_CONTENT_BYTES), and the JSON and the editor's form
that can carry it; an archive (MEMSITE_ARCHIVE_MAX_BYTES, with room for the multipart framing);
memory.json (MEMSITE_BRAIN_IMPORT_MAX_BYTES); a graph snapshot (MEMSITE_GRAPH_SNAPSHOT_MAX_BYTES);
the editor's live preview (MEMSITE_PREVIEW_MAX_BYTES); every other body, JSON or form
(DATA_UPLOAD_MAX_MEMORY_SIZE)."""

import json
from collections.abc import Callable

import pytest
from django.conf import settings as django_settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from memory.api.http import MULTIPART_SLACK_BYTES
from memory.views import editor_body_limit, preview_body_limit
from memsite.api import json_body_limit
from memsite.limits import declared_limits
from tests.security.routes import API, PAGE, ROUTES, client_for, site_patterns
from tests.security.test_authorization import fingerprint
from tests.security.world import World

pytestmark = pytest.mark.django_db

PATTERNS = {pattern.route: pattern for pattern in site_patterns()}
BODY_WRITES = ("POST", "PUT", "PATCH")


def body_limit() -> int:
    return django_settings.DATA_UPLOAD_MAX_MEMORY_SIZE


def archive_limit() -> int:
    return django_settings.MEMSITE_ARCHIVE_MAX_BYTES + MULTIPART_SLACK_BYTES


# The writes whose limit is not DATA_UPLOAD_MAX_MEMORY_SIZE, and what it is.
LIMITS: dict[tuple[str, str], Callable[[], int]] = {
    ("api/nodes/", "POST"): json_body_limit,
    ("api/nodes/<str:node_id>/", "PATCH"): json_body_limit,
    ("api/nodes/<str:node_id>/move/", "POST"): json_body_limit,
    ("api/searches/", "POST"): json_body_limit,
    ("api/questions/<int:question_id>/answer/", "POST"): json_body_limit,
    ("api/tools/call/", "POST"): json_body_limit,
    ("api/agents/<int:agent_id>/messages/", "POST"): json_body_limit,
    ("api/graphs/<int:graph_id>/memorize/", "POST"): json_body_limit,
    ("api/nodes/<str:node_id>/content/", "PUT"): lambda: django_settings.MEMSITE_MAX_CONTENT_BYTES,
    ("api/agents/<int:agent_id>/memory.json", "PUT"): lambda: django_settings.MEMSITE_BRAIN_IMPORT_MAX_BYTES,
    ("api/graphs/<int:graph_id>/snapshot/", "PUT"): lambda: django_settings.MEMSITE_GRAPH_SNAPSHOT_MAX_BYTES,
    ("api/nodes/<str:node_id>/import/", "POST"): archive_limit,
    ("memory/<str:node_id>/archive/upload/", "POST"): archive_limit,
    ("memory/<str:node_id>/content/", "POST"): editor_body_limit,
    ("user/preferences/preview/", "POST"): preview_body_limit,
}


def writes() -> list[tuple[str, str]]:
    return [
        (route, method)
        for route, row in ROUTES.items()
        if row.kind in (API, PAGE)
        for method in row.calls
        if method in BODY_WRITES
    ]


@pytest.fixture(autouse=True)
def small_limits(settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 4_096
    settings.MEMSITE_MAX_CONTENT_BYTES = 1_000
    settings.MEMSITE_BRAIN_IMPORT_MAX_BYTES = 2_000
    settings.MEMSITE_GRAPH_SNAPSHOT_MAX_BYTES = 3_000
    settings.MEMSITE_ARCHIVE_MAX_BYTES = 5_000
    settings.MEMSITE_PREVIEW_MAX_BYTES = 2_048
    return settings


def oversized(route: str, method: str, world: World, client, url: str, limit: int):
    """The write's own request, grown one byte past `limit`."""
    call = ROUTES[route].calls[method]
    if call.raw is not None:
        return client.generic(method, url, b"x" * (limit + 1), content_type="application/octet-stream")
    if call.json is not None:
        body = call.json(world)
        padding = limit + 1 - len(json.dumps({**body, "padding": ""}).encode())
        data = json.dumps({**body, "padding": "x" * padding}).encode()
        assert len(data) == limit + 1
        return client.generic(method, url, data, content_type="application/json")
    form = call.form(world)
    if "archive" in form:
        form["archive"] = SimpleUploadedFile("big.tar.gz", b"x" * (limit + 1))
    else:
        form["padding"] = "x" * (limit + 1)
    return client.post(url, form)


def test_the_views_with_limits_of_their_own_are_the_ones_listed():
    for key in LIMITS:
        assert key in writes(), key
    assert {PATTERNS[route].name for route, _ in LIMITS} == set(declared_limits())


@pytest.mark.parametrize(("route", "method"), writes(), ids=str)
def test_a_body_over_the_limit_is_refused_and_changes_nothing(world, route, method):
    kind = ROUTES[route].kind
    limit = LIMITS.get((route, method), body_limit)()
    client = client_for(world, "token" if kind == API else "user")
    url = reverse(PATTERNS[route].name, kwargs=ROUTES[route].kwargs(world)) + ROUTES[route].calls[method].query
    before = fingerprint()
    response = oversized(route, method, world, client, url, limit)
    assert response.status_code == 413, (response.status_code, response.content[:300])
    message = response.json()["detail"] if kind == API else response.content.decode()
    assert f"the limit is {limit} bytes" in message, message
    assert fingerprint() == before


@pytest.mark.parametrize(("route", "method"), [write for write in writes() if ROUTES[write[0]].kind == API], ids=str)
def test_a_body_announcing_more_than_it_sends_is_refused_from_its_header(world, route, method):
    """The Content-Length decides, before any of the body is read."""
    limit = LIMITS.get((route, method), body_limit)()
    client = client_for(world, "token")
    url = reverse(PATTERNS[route].name, kwargs=ROUTES[route].kwargs(world))
    before = fingerprint()
    response = client.generic(method, url, b"{}", content_type="application/json", CONTENT_LENGTH=str(limit + 1))
    assert response.status_code == 413, (response.status_code, response.content[:300])
    assert fingerprint() == before


def test_form_fields_past_django_s_own_limit_are_a_json_413(world):
    """An archive upload may be larger than DATA_UPLOAD_MAX_MEMORY_SIZE, but its other fields may
    not: Django's refusal comes back from the API as JSON, like every other."""
    client = client_for(world, "token")
    url = reverse("memory-api:project-import", args=[world.project.pk])
    archive = SimpleUploadedFile("p.tar.gz", b"x" * 10)
    before = fingerprint()
    response = client.post(url, {"archive": archive, "note": "x" * (body_limit() + 1)})
    assert response.status_code == 413
    assert response.json()["detail"].endswith(f"the limit is {body_limit()} bytes.")
    assert fingerprint() == before
