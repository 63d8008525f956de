"""API requests are rate-limited per user (token): MEMSITE_API_RATE."""

import uuid

import pytest
import redis
from django.conf import settings as project_settings
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.factories import UserFactory

URL = "/api/agents/0/"  # any API call counts; an unknown agent's 404 costs nothing else


def token_client(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


@pytest.fixture
def three_a_minute(settings):
    settings.MEMSITE_API_RATE = "3/min"
    return settings


def test_a_token_past_its_rate_is_told_when_to_come_back(db, three_a_minute):
    node, other = token_client(UserFactory()), token_client(UserFactory())

    assert [node.get(URL).status_code for _ in range(3)] == [404, 404, 404]
    refused = node.get(URL)

    assert refused.status_code == 429
    assert "throttled" in refused.json()["detail"] and int(refused["Retry-After"]) > 0
    assert other.get(URL).status_code == 404  # each token has its own count


def test_an_unreachable_cache_lets_requests_through(db, three_a_minute):
    three_a_minute.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",
            "OPTIONS": {"socket_connect_timeout": 0.2, "socket_timeout": 0.2},
        }
    }
    node = token_client(UserFactory())

    assert [node.get(URL).status_code for _ in range(5)] == [404] * 5


@pytest.mark.skipif(not project_settings.REDIS_URL, reason="the embedded run has no Redis")
def test_the_count_is_kept_in_redis_for_every_web_worker(db, three_a_minute):
    prefix = f"memsite-test-{uuid.uuid4().hex}"
    three_a_minute.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": project_settings.REDIS_URL,
            "KEY_PREFIX": prefix,
        }
    }
    node = token_client(UserFactory())

    statuses = [node.get(URL).status_code for _ in range(4)]

    assert statuses == [404, 404, 404, 429]
    server = redis.Redis.from_url(project_settings.REDIS_URL)
    keys = server.keys(f"{prefix}:*")
    assert len(keys) == 1 and b"throttle_user_" in keys[0]
    server.delete(*keys)
