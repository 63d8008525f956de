"""Materialized paths must sort byte by byte. PostgreSQL's default collation orders text by
language rules, which breaks `path` range queries and prefix scans; "C" restores byte order.
SQLite compares bytes already."""

from django.db import migrations


def path_collation_c(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute('ALTER TABLE memory_node ALTER COLUMN path TYPE varchar(255) COLLATE "C"')


def path_collation_default(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute('ALTER TABLE memory_node ALTER COLUMN path TYPE varchar(255) COLLATE "default"')


class Migration(migrations.Migration):
    dependencies = [("memory", "0001_initial")]

    operations = [migrations.RunPython(path_collation_c, path_collation_default)]
