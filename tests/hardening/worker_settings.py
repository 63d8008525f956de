"""Settings of the Celery workers tests/hardening/test_worker_kill.py starts and kills: memsite's
own, on the test's database, with broker keys under a prefix of the test's own (nothing else on
the Redis is touched), a killed worker's unacknowledged task handed out again after
MEMSITE_TEST_VISIBILITY_S, and beat's jobs every second."""

import os

from memsite.settings import *  # noqa: F403 (the project settings, then the overrides below)
from memsite.settings import CELERY_BEAT_SCHEDULE, CELERY_BROKER_TRANSPORT_OPTIONS, DATABASES

DATABASES["default"]["NAME"] = os.environ["MEMSITE_TEST_DATABASE_NAME"]
CELERY_BROKER_TRANSPORT_OPTIONS = {
    **CELERY_BROKER_TRANSPORT_OPTIONS,
    "global_keyprefix": os.environ["MEMSITE_TEST_BROKER_PREFIX"],
    "visibility_timeout": float(os.environ.get("MEMSITE_TEST_VISIBILITY_S", "3600")),
    "unacked_restore_interval": 1,
    "unacked_restore_throttle": 1,
}
CELERY_BEAT_SCHEDULE = {name: {**entry, "schedule": 1.0} for name, entry in CELERY_BEAT_SCHEDULE.items()}
