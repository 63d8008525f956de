"""Strict input fields for the API, shared by its apps.

Input is strict on purpose: swarm nodes are programs, and a program that sends `"version": "3"`
or an unknown field is better told at once than silently obeyed half-way."""

from collections.abc import Mapping
from typing import Any

from rest_framework import serializers
from rest_framework.settings import api_settings


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
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                known = ", ".join(self.fields)
                raise serializers.ValidationError(
                    {name: [f"Unknown field. Accepted fields: {known}."] for name in unknown}
                )
        return super().to_internal_value(data)
