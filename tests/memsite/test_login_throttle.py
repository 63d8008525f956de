"""Failed logins are limited per username and per client address (MEMSITE_LOGIN_MAX_FAILURES in
MEMSITE_LOGIN_WINDOW_S, 10 in 15 minutes): past them the login answers 429, even to the right
password, until the window passes."""

import threading
from types import SimpleNamespace

import pytest
from django.urls import reverse

from memsite.login import login_attempt_start
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

PASSWORD = "the-right-password"
NOW = 1_800_000_000.0  # the start of a 15-minute window
LOGIN = reverse("login")
ADMIN_LOGIN = reverse("admin:login")


@pytest.fixture
def clock(monkeypatch):
    clock = SimpleNamespace(now=NOW)
    monkeypatch.setattr("memsite.login.clock", lambda: clock.now)
    return clock


@pytest.fixture
def alice(db):
    return UserFactory(username="alice", password=PASSWORD)


def log_in(client, username: str, password: str, address: str = "10.0.0.1", url: str = LOGIN):
    return client.post(url, {"username": username, "password": password}, REMOTE_ADDR=address)


def logged_in(response) -> bool:
    return response.status_code == 302 and "_auth_user_id" in response.wsgi_request.session


def test_ten_failures_then_even_the_right_password_is_refused(client, alice, clock):
    failures = [log_in(client, "alice", f"guess-{n}") for n in range(10)]
    assert [response.status_code for response in failures] == [200] * 10  # the form, with its error

    refused = log_in(client, "alice", PASSWORD)

    page = refused.content.decode()
    assert refused.status_code == 429 and not logged_in(refused)
    assert "Too many failed logins" in page and "Try again in 15 minutes" in page
    assert refused["Retry-After"] == "900"


def test_the_login_works_again_when_the_window_passes(client, alice, clock):
    for n in range(10):
        log_in(client, "alice", f"guess-{n}")
    clock.now = NOW + 900

    assert logged_in(log_in(client, "alice", PASSWORD))


def test_failures_are_counted_per_username_from_any_address(client, alice, clock):
    for n in range(10):
        log_in(client, "alice", f"guess-{n}", address=f"10.0.1.{n}")

    assert log_in(client, "alice", PASSWORD, address="10.0.2.1").status_code == 429
    UserFactory(username="bob", password=PASSWORD)
    assert logged_in(log_in(client, "bob", PASSWORD, address="10.0.2.1"))  # another username is not held back


def test_failures_are_counted_per_address_for_any_username(client, alice, clock):
    for n in range(10):
        log_in(client, f"someone-{n}", "guess", address="10.0.0.66")

    assert log_in(client, "alice", PASSWORD, address="10.0.0.66").status_code == 429
    assert logged_in(log_in(client, "alice", PASSWORD, address="10.0.0.67"))


def test_a_successful_login_neither_counts_nor_resets_the_failures(client, alice, clock):
    for _ in range(12):
        assert logged_in(log_in(client, "alice", PASSWORD))  # successes are not failures
    for n in range(9):
        log_in(client, "alice", f"guess-{n}", address="10.0.9.9")
    assert logged_in(log_in(client, "alice", PASSWORD))

    assert log_in(client, "alice", "guess-9", address="10.0.9.9").status_code == 200  # the tenth failure
    assert log_in(client, "alice", PASSWORD).status_code == 429


def test_the_admins_login_is_limited_too(client, clock):
    UserFactory(username="root", password=PASSWORD, is_staff=True, is_superuser=True)
    for n in range(10):
        assert log_in(client, "root", f"guess-{n}", url=ADMIN_LOGIN).status_code == 200

    refused = log_in(client, "root", PASSWORD, url=ADMIN_LOGIN)

    assert refused.status_code == 429 and not logged_in(refused)
    assert "Too many failed logins" in refused.content.decode()


def test_concurrent_guesses_check_exactly_the_limit_of_passwords():
    """Each attempt takes its place in the count before its password is checked, so of 24
    guesses made at once exactly ten are checked."""
    start = threading.Barrier(24)
    checked = []

    def guess() -> None:
        start.wait()
        checked.append(not login_attempt_start(username="alice", address="10.0.0.1", now=NOW).refused)

    threads = [threading.Thread(target=guess) for _ in range(24)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sum(checked) == 10


def test_an_unreachable_cache_lets_logins_through(client, alice, settings):
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",
            "OPTIONS": {"socket_connect_timeout": 0.2, "socket_timeout": 0.2},
        }
    }
    for n in range(11):
        log_in(client, "alice", f"guess-{n}")

    assert logged_in(log_in(client, "alice", PASSWORD))
