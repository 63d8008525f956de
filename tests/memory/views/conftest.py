import pytest
from django.test import Client

HTMX = {"HTTP_HX_REQUEST": "true"}


def _login(client: Client, user) -> Client:
    # The factories set the password after creating the row; save it so that the session's
    # password hash matches the stored one.
    user.save()
    client.force_login(user)
    return client


@pytest.fixture
def user_client(client: Client, user) -> Client:
    return _login(client, user)


@pytest.fixture
def staff_client(client: Client, staff) -> Client:
    return _login(client, staff)
