"""On PostgreSQL Django adds a `varchar_pattern_ops` copy of every indexed text column, for LIKE
under a non-C collation. The node ids are only compared for equality, and `path` sorts in the
"C" collation (0002), whose ordinary index serves prefix scans already; the copies only slow
every insert down."""

from django.db import migrations

TABLES = ("memory_node", "memory_nodecontent")


def drop_pattern_indexes(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = ANY(%s) AND indexname LIKE %s",
            [list(TABLES), "%\\_like"],
        )
        for (name,) in cursor.fetchall():
            schema_editor.execute(f'DROP INDEX IF EXISTS "{name}"')


class Migration(migrations.Migration):
    dependencies = [("memory", "0003_internal_folders")]

    operations = [migrations.RunPython(drop_pattern_indexes, migrations.RunPython.noop)]
