"""What the agents' model fields declare, for checks made before a row is written."""

from django.core.exceptions import FieldDoesNotExist
from django.db.models import Field, Model


def column_field(model: type[Model], name: str) -> Field:
    """`model`'s field `name`, which must have a column of its own (not a reverse relation)."""
    field = model._meta.get_field(name)
    if not isinstance(field, Field):
        raise FieldDoesNotExist(f"{model.__name__}.{name} has no column.")
    return field


def max_chars(model: type[Model], name: str) -> int:
    """The max_length of one of `model`'s character fields, which must declare one."""
    limit = column_field(model, name).max_length
    if limit is None:
        raise FieldDoesNotExist(f"{model.__name__}.{name} declares no max_length.")
    return limit
