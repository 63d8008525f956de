"""The database: SQLite under var/ unless DATABASE_URL names another."""

from typing import Any

import dj_database_url

from memsite.settings.base import VAR_DIR
from memsite.settings.env import env_str

# SQLite in WAL mode unless DATABASE_URL names another database. IMMEDIATE transactions make
# the web server and the Celery worker queue for the write lock instead of failing.
DATABASE_URL = env_str("DATABASE_URL")
# Not dj_database_url's TypedDict, whose NAME is a str: Django takes the Path below as well.
DATABASES: dict[str, Any]
if DATABASE_URL:
    DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=60, conn_health_checks=True)}
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": VAR_DIR / "memsite.sqlite3",
            "OPTIONS": {
                "init_command": ("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;"),
                "transaction_mode": "IMMEDIATE",
                "timeout": 20,
            },
        }
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
