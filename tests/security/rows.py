"""Every row of the database, by table and primary key: a call changed nothing of what was
there when every row read before is there after, the same. Rows it adds are not compared, so
that work in another space may go on beside the rows watched."""

from django.apps import apps
from django.contrib.sessions.models import Session
from django.db import connection

Rows = dict[str, dict[object, tuple]]


def rows_by_key() -> Rows:
    tables: Rows = {}
    with connection.cursor() as cursor:
        for model in apps.get_models():
            if model is Session or model._meta.proxy:
                continue
            table, key = (connection.ops.quote_name(name) for name in (model._meta.db_table, model._meta.pk.column))
            cursor.execute(f"SELECT {key}, * FROM {table}")
            tables[model._meta.label] = {row[0]: row[1:] for row in cursor.fetchall()}
    return tables


def changed_since(before: Rows) -> list[str]:
    """The rows of `before` that changed or went, as `label key: changed|gone`."""
    now = rows_by_key()
    return [
        f"{label} {key}: {'gone' if key not in now[label] else 'changed'}"
        for label, rows in before.items()
        for key, row in rows.items()
        if now[label].get(key) != row
    ]
