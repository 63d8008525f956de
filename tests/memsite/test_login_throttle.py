"""Failed logins are limited per address and username pair, and more loosely per address and per
username. A pair's wrong-password streak is asked to wait longer after each failure past the
first few (429 with Retry-After, no thread held), then is locked out until the window passes
(MEMSITE_LOGIN_MAX_FAILURES in MEMSITE_LOGIN_WINDOW_S, 10 in 15 minutes), even with the right
password; another address logs in to that account as ever. One address guessing many usernames
(MEMSITE_LOGIN_ADDRESS_MAX_FAILURES) and many addresses guessing one username
(MEMSITE_LOGIN_USERNAME_MAX_FAILURES) are locked out too."""

import threading
from types import SimpleNamespace

import pytest
from django.urls import reverse

from memsite.login import login_attempt_start, streak_wait_s
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

PASSWORD = "the-right-password"
NOW = 1_800_000_000.0  # the start of a 15-minute window
LOGIN = reverse("login")
ADMIN_LOGIN = reverse("admin:login")
STRANGER = "203.0.113.9"
OWNER = "10.0.0.1"


@pytest.fixture
def clock(monkeypatch):
    clock = SimpleNamespace(now=NOW)
    monkeypatch.setattr("memsite.login.clock", lambda: clock.now)
    return clock


@pytest.fixture
def alice(db):
    return UserFactory(username="alice", password=PASSWORD)


def log_in(client, username: str, password: str, address: str = OWNER, url: str = LOGIN):
    return client.post(url, {"username": username, "password": password}, REMOTE_ADDR=address)


def logged_in(response) -> bool:
    return response.status_code == 302 and "_auth_user_id" in response.wsgi_request.session


def fail_streak(client, clock, username: str, failures: int, address: str = STRANGER, url: str = LOGIN) -> None:
    """`failures` wrong passwords in a row from `address`, each once the wait asked for has passed."""
    for n in range(failures):
        response = log_in(client, username, f"guess-{n}", address=address, url=url)
        if response.status_code == 429:
            clock.now += int(response["Retry-After"])
            response = log_in(client, username, f"guess-{n}", address=address, url=url)
        assert response.status_code == 200, f"failure {n + 1}"  # the form, with its error


def test_a_strangers_streak_locks_out_its_own_address_not_the_account(client, clock):
    UserFactory(username="root", password=PASSWORD, is_staff=True, is_superuser=True)
    fail_streak(client, clock, "root", 10)

    refused = log_in(client, "root", PASSWORD, address=STRANGER)

    assert refused.status_code == 429 and not logged_in(refused)
    assert logged_in(log_in(client, "root", PASSWORD, address=OWNER))
    assert logged_in(log_in(client, "root", PASSWORD, address=OWNER, url=ADMIN_LOGIN))
    assert "Too many failed logins for this username from this address" in refused.content.decode()


def test_the_wait_grows_with_the_streak_and_holds_back_that_address_alone(client, alice, clock):
    waits = []
    for n in range(9):
        assert log_in(client, "alice", f"guess-{n}", address=STRANGER).status_code == 200
        held = log_in(client, "alice", PASSWORD, address=STRANGER)  # even the right password waits
        if n < 3:
            assert logged_in(held)  # the first failures of a streak cost nothing: typos
            continue
        assert held.status_code == 429 and not logged_in(held)
        waits.append(int(held["Retry-After"]))
        assert f"try again in {waits[-1]} seconds" in held.content.decode()
        assert logged_in(log_in(client, "alice", PASSWORD, address=OWNER))  # another address is not held back
        clock.now += waits[-1]

    assert waits == [2, 4, 8, 16, 32, 64]


def test_a_wait_is_never_longer_than_the_window_and_none_at_the_lockout():
    assert [streak_wait_s(failures=n, limit=50, window_s=900) for n in (3, 4, 12, 13, 49, 50)] == [
        0,
        2,
        512,
        900,
        900,
        0,
    ]


def test_an_attempt_held_back_checks_no_password_and_does_not_count(client, alice, clock):
    fail_streak(client, clock, "alice", 9)
    for n in range(5):
        assert log_in(client, "alice", f"more-{n}", address=STRANGER).status_code == 429
    clock.now += 64

    assert logged_in(log_in(client, "alice", PASSWORD, address=STRANGER))


def test_ten_failures_lock_the_pair_out_until_the_window_passes(client, alice, clock):
    fail_streak(client, clock, "alice", 10)
    elapsed = int(clock.now - NOW)

    refused = log_in(client, "alice", PASSWORD, address=STRANGER)

    page = refused.content.decode()
    assert refused.status_code == 429 and not logged_in(refused)
    assert refused["Retry-After"] == str(900 - elapsed)
    assert f"Try again in {-(-(900 - elapsed) // 60)} minutes" in page
    clock.now = NOW + 900
    assert logged_in(log_in(client, "alice", PASSWORD, address=STRANGER))


def test_one_address_guessing_many_usernames_is_locked_out(client, alice, clock, settings):
    for n in range(settings.MEMSITE_LOGIN_ADDRESS_MAX_FAILURES):
        assert log_in(client, f"someone-{n}", "guess", address="10.0.0.66").status_code == 200

    refused = log_in(client, "alice", PASSWORD, address="10.0.0.66")

    assert refused.status_code == 429 and "from this address" in refused.content.decode()
    assert logged_in(log_in(client, "alice", PASSWORD, address="10.0.0.67"))


def test_many_addresses_guessing_one_username_lock_it_out(client, alice, clock, settings):
    for n in range(settings.MEMSITE_LOGIN_USERNAME_MAX_FAILURES):
        assert log_in(client, "alice", f"guess-{n}", address=f"10.1.{n // 200}.{n % 200}").status_code == 200

    refused = log_in(client, "alice", PASSWORD, address="10.2.0.1")

    assert refused.status_code == 429 and "from many addresses" in refused.content.decode()
    UserFactory(username="bob", password=PASSWORD)
    assert logged_in(log_in(client, "bob", PASSWORD, address="10.2.0.1"))  # another username is not held back


def test_the_username_bound_takes_more_addresses_than_one_stranger_has(settings):
    assert settings.MEMSITE_LOGIN_USERNAME_MAX_FAILURES >= 10 * settings.MEMSITE_LOGIN_MAX_FAILURES
    assert settings.MEMSITE_LOGIN_ADDRESS_MAX_FAILURES > settings.MEMSITE_LOGIN_MAX_FAILURES


def test_a_successful_login_neither_counts_nor_resets_the_failures(client, alice, clock):
    for _ in range(12):
        assert logged_in(log_in(client, "alice", PASSWORD))  # successes are not failures
    fail_streak(client, clock, "alice", 9, address="10.0.9.9")
    clock.now += 64
    assert logged_in(log_in(client, "alice", PASSWORD, address="10.0.9.9"))

    assert log_in(client, "alice", "guess-9", address="10.0.9.9").status_code == 200  # the tenth failure
    assert log_in(client, "alice", PASSWORD, address="10.0.9.9").status_code == 429


def test_the_admins_login_is_limited_too(client, clock):
    UserFactory(username="root", password=PASSWORD, is_staff=True, is_superuser=True)
    fail_streak(client, clock, "root", 10, url=ADMIN_LOGIN)

    refused = log_in(client, "root", PASSWORD, address=STRANGER, url=ADMIN_LOGIN)

    assert refused.status_code == 429 and not logged_in(refused)
    assert "Too many failed logins" in refused.content.decode()


def test_concurrent_guesses_check_exactly_the_limit_of_passwords():
    """Each attempt takes its place in the count before its password is checked, so of 24
    guesses made at once exactly ten are checked."""
    start = threading.Barrier(24)
    checked = []

    def guess() -> None:
        start.wait()
        checked.append(not login_attempt_start(username="alice", address=STRANGER, now=NOW).refused)

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
