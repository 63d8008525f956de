"""API requests are rate-limited per user (token): MEMSITE_API_RATE, counted atomically."""

import os
import threading
import uuid
from types import SimpleNamespace
from typing import NoReturn

import pytest
import redis
from django.conf import settings as project_settings
from django.contrib.auth.models import AnonymousUser
from django.test import RequestFactory
from rest_framework.test import APIClient

from memsite.throttles import UserRequestThrottle
from tests.factories import UserFactory, token_for

URL = "/api/agents/0/"  # any API call counts; an unknown agent's 404 costs nothing else
REDIS_URL = project_settings.REDIS_URL  # the Redis the run is given, and no other
NOW = 1_800_000_030.0  # 30 s into a minute
CLIENTS = 24


def token_client(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_for(user)}")
    return client


@pytest.fixture
def three_a_minute(settings):
    settings.MEMSITE_API_RATE = "3/min"
    return settings


@pytest.fixture
def clock(monkeypatch):
    """The throttle's clock, stopped at NOW; move it with `clock.now = ...`."""
    clock = SimpleNamespace(now=NOW)
    monkeypatch.setattr(UserRequestThrottle, "timer", staticmethod(lambda: clock.now))
    return clock


def _missing(reason: str) -> NoReturn:
    if os.environ.get("MEMSITE_REQUIRE_SERVICES") == "1":
        pytest.fail(reason)
    pytest.skip(reason)


@pytest.fixture
def redis_cache(settings):
    """The default cache in the real Redis, under a key prefix of the test's own, removed after.
    Skipped where the run is given no Redis (REDIS_URL) or it does not answer, but where CI
    asks for the real services: a Redis the run was not given may be someone else's."""
    if not REDIS_URL:
        _missing("No Redis is given: set REDIS_URL")
    server = redis.Redis.from_url(REDIS_URL, socket_timeout=2, socket_connect_timeout=2)
    try:
        server.ping()
    except redis.RedisError as exc:
        _missing(f"Redis at {REDIS_URL} does not answer: {exc}")
    prefix = f"memsite-test-{uuid.uuid4().hex}"
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": prefix,
        }
    }
    yield SimpleNamespace(server=server, prefix=prefix)
    if keys := server.keys(f"{prefix}:*"):
        server.delete(*keys)


def allowed_by_concurrent_clients(requests_each: int) -> int:
    """How many of CLIENTS threads' requests, all one user's and started together, the throttle
    lets through."""
    request = SimpleNamespace(user=SimpleNamespace(is_authenticated=True, pk=7), META={"REMOTE_ADDR": "10.0.0.7"})
    start = threading.Barrier(CLIENTS)
    allowed = []

    def client() -> None:
        start.wait()
        allowed.extend(UserRequestThrottle().allow_request(request, None) for _ in range(requests_each))

    threads = [threading.Thread(target=client) for _ in range(CLIENTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(allowed) == CLIENTS * requests_each
    return sum(allowed)


def test_a_token_past_its_rate_is_told_when_to_come_back(db, three_a_minute, clock):
    node, other = token_client(UserFactory()), token_client(UserFactory())

    assert [node.get(URL).status_code for _ in range(3)] == [404, 404, 404]
    refused = node.get(URL)

    assert refused.status_code == 429
    assert "throttled" in refused.json()["detail"] and refused["Retry-After"] == "30"  # the minute's end
    assert other.get(URL).status_code == 404  # each token has its own count


def test_the_next_window_lets_requests_through_again(db, three_a_minute, clock):
    node = token_client(UserFactory())
    assert [node.get(URL).status_code for _ in range(4)] == [404, 404, 404, 429]

    clock.now = NOW + 30  # the next minute

    assert [node.get(URL).status_code for _ in range(4)] == [404, 404, 404, 429]


def test_concurrent_clients_get_exactly_the_limit(settings, clock):
    settings.MEMSITE_API_RATE = "100/min"
    assert allowed_by_concurrent_clients(requests_each=20) == 100


def test_concurrent_clients_get_exactly_the_limit_from_redis(settings, clock, redis_cache):
    settings.MEMSITE_API_RATE = "100/min"

    assert allowed_by_concurrent_clients(requests_each=20) == 100
    # One entry, for this user and this minute, that expires by itself.
    [key] = redis_cache.server.keys(f"{redis_cache.prefix}:*")
    assert b"throttle:user:7:" in key and 0 < redis_cache.server.ttl(key) <= 120


def test_the_count_is_kept_in_redis_for_every_web_worker(db, three_a_minute, clock, redis_cache):
    node = token_client(UserFactory())

    statuses = [node.get(URL).status_code for _ in range(4)]

    assert statuses == [404, 404, 404, 429]
    [key] = redis_cache.server.keys(f"{redis_cache.prefix}:*")
    assert int(redis_cache.server.get(key)) == 4


def test_anonymous_requests_are_counted_by_address_or_together_without_one(three_a_minute, clock):
    def allowed(address: str | None) -> list[bool]:
        request = RequestFactory().get(URL, REMOTE_ADDR=address)
        if address is None:
            del request.META["REMOTE_ADDR"]
        request.user = AnonymousUser()
        return [UserRequestThrottle().allow_request(request, None) for _ in range(4)]

    assert allowed("10.0.0.1") == [True, True, True, False]
    assert allowed("10.0.0.2") == [True, True, True, False]
    assert allowed(None) == [True, True, True, False]


def test_an_unreachable_cache_lets_requests_through(db, three_a_minute, caplog):
    three_a_minute.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",
            "OPTIONS": {"socket_connect_timeout": 0.2, "socket_timeout": 0.2},
        }
    }
    node = token_client(UserFactory())

    assert [node.get(URL).status_code for _ in range(5)] == [404] * 5
    assert "the cache did not answer" in caplog.text
