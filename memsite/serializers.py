"""Strict input fields for the API, shared by its apps.

Input is strict on purpose: swarm nodes are programs, and a program that sends `"version": "3"`
or an unknown field is better told at once than silently obeyed half-way."""

import heapq
from collections.abc import Mapping
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers
from rest_framework.fields import get_error_detail
from rest_framework.settings import api_settings

from memsite.errors import MAX_ERRORS, MORE_ERRORS


class StrictCharField(serializers.CharField):
    """A CharField that refuses numbers and booleans instead of turning them into text."""

    default_error_messages = {"invalid": "Must be a string."}

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictIntegerField(serializers.IntegerField):
    """An IntegerField that refuses strings, floats and booleans."""

    default_error_messages = {"invalid": "Must be an integer."}

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictFloatField(serializers.FloatField):
    default_error_messages = {"invalid": "Must be a number."}

    def to_internal_value(self, data: Any) -> float:
        if isinstance(data, bool) or not isinstance(data, (int, float)):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictBooleanField(serializers.BooleanField):
    default_error_messages = {"invalid": "Must be true or false."}

    def to_internal_value(self, data: Any) -> bool:
        if not isinstance(data, bool):
            self.fail("invalid")
        return data


class BoundedListField(serializers.ListField):
    """A ListField whose errors never outgrow its bound: a list longer than `max_length` is
    refused before any item is checked (DRF's ListField checks every item first and the length
    last), and items are checked only until MAX_ERRORS of them are invalid."""

    max_length: int  # required here, where DRF's ListField makes it optional

    def __init__(self, *, max_length: int, **kwargs: Any):
        super().__init__(max_length=max_length, **kwargs)

    def to_internal_value(self, data: Any) -> list[Any]:
        if isinstance(data, list) and len(data) > self.max_length:
            self.fail("max_length", max_length=self.max_length)
        return super().to_internal_value(data)

    def run_child_validation(self, data: list[Any]) -> list[Any]:
        result: list[Any] = []
        errors: dict[int | str, Any] = {}
        for index, item in enumerate(data):
            try:
                result.append(self.child.run_validation(item))
            except serializers.ValidationError as exc:
                errors[index] = exc.detail
            except DjangoValidationError as exc:
                errors[index] = get_error_detail(exc)
            unchecked = len(data) - index - 1
            if len(errors) == MAX_ERRORS and unchecked:
                errors[MORE_ERRORS] = [f"The other {unchecked:,} items were not checked."]
                break
        if errors:
            # Keyed by item index, as DRF's ListField keys them; the stubs take str keys only.
            raise serializers.ValidationError(errors)  # type: ignore[arg-type]
        return result


class StrictInputSerializer(serializers.Serializer):
    """An input serializer that refuses fields it does not know."""

    def validate_empty_values(self, data: Any) -> tuple[bool, Any]:
        # A body of JSON null: DRF would answer "No data provided", though a document was sent.
        if data is None and self.parent is None:
            raise serializers.ValidationError(
                {api_settings.NON_FIELD_ERRORS_KEY: ["Invalid data. Expected a dictionary, but got null."]}
            )
        return super().validate_empty_values(data)

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        if isinstance(data, Mapping):
            unknown = [name for name in data if name not in self.fields]
            if unknown:
                raise serializers.ValidationError(self._unknown_fields(unknown))
        return super().to_internal_value(data)

    def _unknown_fields(self, unknown: list[str]) -> dict[str, list[str]]:
        """The first MAX_ERRORS unknown fields (in sorted order), each named, and how many more."""
        message = f"Unknown field. Accepted fields: {', '.join(self.fields)}."
        named = heapq.nsmallest(MAX_ERRORS, unknown)
        errors = {name: [message] for name in named}
        if len(unknown) > len(named):
            errors[MORE_ERRORS] = [f"{len(unknown) - len(named):,} more unknown fields are not named."]
        return errors
