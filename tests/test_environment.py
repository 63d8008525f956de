"""Where CI asks for the real services (MEMSITE_REQUIRE_SERVICES=1), their absence fails the run."""

import os

import pytest
import redis
from django.conf import settings
from django.db import connection

pytestmark = pytest.mark.skipif(
    os.environ.get("MEMSITE_REQUIRE_SERVICES") != "1",
    reason="embedded run: SQLite and the filesystem broker are expected here",
)


@pytest.mark.django_db
def test_database_is_postgresql():
    assert connection.vendor == "postgresql", "CI must run on PostgreSQL: set DATABASE_URL"


def test_broker_is_redis_and_answers():
    assert settings.CELERY_BROKER_URL.startswith("redis://"), "CI must use Redis: set REDIS_URL"
    assert redis.Redis.from_url(settings.REDIS_URL, socket_timeout=5).ping()
