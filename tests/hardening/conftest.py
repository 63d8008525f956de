"""The world the hardening suites attack, and the clients they attack it with."""

import pytest
from django.test import Client
from rest_framework.test import APIClient

from tests.factories import token_for
from tests.hardening.bad_input_world import World, build_world


@pytest.fixture
def world(db) -> World:
    return build_world()


@pytest.fixture
def clients(world) -> dict[str, Client]:
    """A swarm node's token client, a staff token client, and a logged-in dashboard session."""
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {token_for(world.user)}")
    staff_api = APIClient()
    staff_api.credentials(HTTP_AUTHORIZATION=f"Token {token_for(world.staff)}")
    for client in (api, staff_api):
        # A token's use is noted at most once a minute: its first, here, so that the dumps a
        # test compares around its own successful calls do not differ by it.
        assert client.get("/api/usage/").status_code == 200
    dashboard = Client()
    dashboard.force_login(world.user)
    return {"api": api, "staff_api": staff_api, "dashboard": dashboard}
