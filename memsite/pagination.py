"""Cursor pages whose cursor is checked before it reaches a query."""

from django.core.exceptions import FieldDoesNotExist
from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers

INVALID_CURSOR = "Invalid cursor; use the `next` or `previous` link of a page."


class CheckedCursorPosition:
    """A mixin for CursorPagination classes. DRF decodes a cursor from base64 and filters by
    its position as it is: a forged one (`p=abc` against an integer column, NUL on PostgreSQL)
    failed in the database, a 500. Here a position the ordering column cannot hold is an
    invalid cursor, a 400, like a cursor that does not decode."""

    def get_ordering(self, request, queryset, view):
        self._ordered_model = queryset.model
        return super().get_ordering(request, queryset, view)

    def decode_cursor(self, request):
        cursor = super().decode_cursor(request)
        if cursor is not None and cursor.position is not None and not self._position_fits(cursor.position):
            raise serializers.ValidationError({"cursor": [INVALID_CURSOR]})
        return cursor

    def _position_fits(self, position: str) -> bool:
        if "\x00" in position:
            return False
        try:
            field = self._ordered_model._meta.get_field(self.ordering[0].lstrip("-"))
            field.to_python(position)
        except FieldDoesNotExist:
            return True
        except DjangoValidationError:
            return False
        return True
