"""Cursor pages of the API: no count, every page at the same cost; a page size and a cursor
checked before they reach a query."""

from django.core.exceptions import FieldDoesNotExist
from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.pagination import CursorPagination
from rest_framework.request import Request

INVALID_CURSOR = "Invalid cursor; use the `next` or `previous` link of a page."


class CheckedCursorPagination(CursorPagination):
    """`page_size` from 1 to `max_page_size` (`default_page_size` when absent), and a cursor
    that decodes. DRF decodes a cursor from base64 and filters by its position as it is: a
    forged one (`p=abc` against an integer column, NUL on PostgreSQL) failed in the database, a
    500. Here a position the ordering column cannot hold is an invalid cursor, a 400, like a
    cursor that does not decode."""

    page_size_query_param = "page_size"
    default_page_size = 100
    max_page_size = 1000

    def get_default_page_size(self) -> int:
        return self.default_page_size

    def get_page_size(self, request: Request) -> int:
        raw = request.query_params.get(self.page_size_query_param)
        if raw is None:
            return self.get_default_page_size()
        if not (raw.isascii() and raw.isdigit() and 1 <= int(raw) <= self.max_page_size):
            raise serializers.ValidationError(
                {"page_size": [f"Must be a whole number from 1 to {self.max_page_size}, got {raw!r}."]}
            )
        return int(raw)

    def get_ordering(self, request, queryset, view):
        self._ordered_model = queryset.model
        return super().get_ordering(request, queryset, view)

    def decode_cursor(self, request):
        try:
            cursor = super().decode_cursor(request)
        except NotFound:
            raise serializers.ValidationError({"cursor": [INVALID_CURSOR]}) from None
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


class OrderedPagination(CheckedCursorPagination):
    """Pages along an ordering each view gives (a brain's collection, a graph's nodes): smaller
    pages than the tree's, as their entries are larger."""

    default_page_size = 50
    max_page_size = 500

    def __init__(self, ordering: str | tuple[str, ...]):
        self.ordering = ordering
