import pytest
from rest_framework.test import APIClient

from memory.models import Node
from tests.memory.api.support import tree_state, url

pytestmark = pytest.mark.django_db

ENDPOINTS = [
    ("get", "node-roots", False),
    ("post", "node-create", False),
    ("get", "node-resolve", False),
    ("get", "node-detail", True),
    ("patch", "node-detail", True),
    ("delete", "node-detail", True),
    ("get", "node-children", True),
    ("get", "node-ancestors", True),
    ("post", "node-move", True),
    ("get", "node-content", True),
    ("put", "node-content", True),
    ("get", "project-export", True),
    ("post", "project-import", True),
]


@pytest.fixture
def target(internal) -> Node:
    return Node.objects.get(name="user_preferences.md")


@pytest.mark.parametrize("method, name, with_id", ENDPOINTS, ids=[f"{m} {n}" for m, n, _ in ENDPOINTS])
def test_anonymous_requests_are_refused_with_401(internal, target, method, name, with_id):
    before = tree_state()
    response = getattr(APIClient(), method)(url(name, target if with_id else None), {"parent": internal["user"].id})
    assert response.status_code == 401
    assert response.json()["detail"] == "Authentication credentials were not provided."
    assert response["WWW-Authenticate"] == "Token"
    assert tree_state() == before


def test_a_wrong_token_is_refused(internal):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    response = client.get(url("node-roots"))
    assert response.status_code == 401
    assert response.json()["detail"] == "Invalid token."


def logged_in(user, **kwargs) -> APIClient:
    client = APIClient(**kwargs)
    # UserFactory sets the password after saving and does not save again: log in the stored row,
    # whose session hash is the one each request checks.
    client.force_login(type(user).objects.get(pk=user.pk))
    return client


def test_a_logged_in_session_is_accepted(internal, user):
    client = logged_in(user)
    assert client.get(url("node-roots")).status_code == 200


def test_a_session_must_send_the_csrf_token_to_write(internal, user):
    client = logged_in(user, enforce_csrf_checks=True)
    before = tree_state()
    response = client.post(
        url("node-create"), {"parent": internal["user"].id, "type": "folder", "name": "x"}, format="json"
    )
    assert response.status_code == 403
    assert "CSRF" in response.json()["detail"]
    assert tree_state() == before
