"""Reads that every request makes, compiled by Django once per connection instead of on every
call: building and compiling such a queryset took longer than running it (docs/benchmarks.md,
the cost of spaces)."""

import threading
from collections.abc import Callable, Mapping
from typing import Any, Generic, TypeVar

from django.db import connections, router
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Model, QuerySet
from django.db.models.query import get_related_populators  # type: ignore[attr-defined]  # not in the stubs

M = TypeVar("M", bound=Model)


class CompiledFirst(Generic[M]):
    """The first row of the queryset `build(**params)` gives, as the queryset would give it
    (its select_related rows and annotations too), or None; its SQL is compiled once per
    connection. `placeholders` holds a value for each parameter, compiled in and then looked
    for among the SQL's parameters: a plain value (a str, an int) that the lookup passes as it
    is and that no other parameter of the query takes. A call's values go to the database as
    they are."""

    def __init__(self, model: type[M], build: Callable[..., QuerySet[M]], **placeholders: object) -> None:
        self.model = model
        self.build = build
        self.placeholders = placeholders
        self.compiled = threading.local()  # a compiler keeps its connection, which is its thread's

    def __call__(self, **params: object) -> M | None:
        if params.keys() != self.placeholders.keys():
            raise TypeError(f"Expected the parameters {sorted(self.placeholders)}, got {sorted(params)}.")
        connection = connections[router.db_for_read(self.model)]
        compiled = getattr(self.compiled, connection.alias, None)
        if compiled is None or compiled.connection is not connection:
            compiled = _Compiled(self.build(**self.placeholders)[:1], connection, self.placeholders)
            setattr(self.compiled, connection.alias, compiled)
        return compiled.first(params)


class _Compiled:
    """One queryset's SQL, where each parameter goes, and how a row becomes its model (after
    django.db.models.query.ModelIterable)."""

    def __init__(self, queryset: QuerySet, connection: BaseDatabaseWrapper, placeholders: Mapping[str, object]):
        self.connection = connection
        self.compiler = queryset.query.get_compiler(connection=connection)
        self.sql, params = self.compiler.as_sql()
        # Each parameter of the SQL: a placeholder's name, or None for a value of the query's own.
        self.arguments = [(_placeholder_name(param, placeholders), param) for param in params]
        missing = set(placeholders) - {name for name, _ in self.arguments}
        if missing:
            raise ValueError(f"The compiled query does not pass {sorted(missing)} as they are.")
        select, klass_info = self.compiler.select, self.compiler.klass_info
        self.model, fields = klass_info["model"], klass_info["select_fields"]
        self.model_columns = slice(fields[0], fields[-1] + 1)
        self.init_list = [column[0].target.attname for column in select[self.model_columns]]
        self.related = get_related_populators(klass_info, select, connection.alias)
        self.annotations = self.compiler.annotation_col_map
        self.converters = self.compiler.get_converters([column[0] for column in select[: self.compiler.col_count]])

    def first(self, params: Mapping[str, object]) -> Any:
        values: list[Any] = [params[name] if name is not None else value for name, value in self.arguments]
        with self.connection.cursor() as cursor:
            cursor.execute(self.sql, values)
            rows = cursor.fetchall()
        if not rows:
            return None
        [row] = self.compiler.apply_converters(rows, self.converters) if self.converters else rows
        instance = self.model.from_db(self.connection.alias, self.init_list, row[self.model_columns])
        for populator in self.related:
            populator.populate(row, instance)
        for name, position in self.annotations.items():
            setattr(instance, name, row[position])
        return instance


def _placeholder_name(param: object, placeholders: Mapping[str, object]) -> str | None:
    # type() too: 1 == True, and a query's own True must not be taken for a placeholder 1.
    found = [name for name, value in placeholders.items() if type(value) is type(param) and value == param]
    if len(found) > 1:
        raise ValueError(f"The placeholders {found} have the same value.")
    return found[0] if found else None
