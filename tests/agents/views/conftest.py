import pytest
from django.test import Client

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def user_client(client: Client, user) -> Client:
    client.force_login(user)
    return client
