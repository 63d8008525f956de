import pytest
from django.core.management import call_command
from django.db import connection

pytestmark = pytest.mark.django_db

postgresql_only = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="PostgreSQL storage details; SQLite compares bytes already"
)


def test_models_and_migrations_agree():
    call_command("makemigrations", "--check", "--dry-run", verbosity=0)


@postgresql_only
def test_path_column_sorts_bytewise():
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT collation_name FROM information_schema.columns "
            "WHERE table_name = 'memory_node' AND column_name = 'path'"
        )
        assert cursor.fetchone()[0] == "C"


@postgresql_only
def test_no_pattern_index_copies_slow_down_inserts():
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexname FROM pg_indexes WHERE tablename LIKE 'memory_node%%'")
        names = [name for (name,) in cursor.fetchall()]
    assert names and not [name for name in names if name.endswith("_like")]
