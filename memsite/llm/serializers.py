"""The `provider` field of API results the gateway produced: whether a model or the offline
heuristics wrote them. Explained in docs/llm.md."""

from typing import Any

from django.db import models
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from memsite.llm.selectors import llm_provider_serving, llm_providers_serving

PROVIDER_HELP = (
    "The LLM provider whose calls produced this: `offline` when the offline heuristics, not a model, "
    "wrote any of it; null while no answered call is on record."
)


@extend_schema_field(serializers.CharField(allow_null=True, help_text=PROVIDER_HELP))
class ProviderField(serializers.Field):
    """Read from the ledger's calls that served the row of `model` whose id is at `source`.
    In a `ProviderListSerializer`, from the providers it read for the whole page."""

    def __init__(self, *, model: type[models.Model], source: str = "pk", **kwargs: Any):
        super().__init__(read_only=True, source=source, help_text=PROVIDER_HELP, **kwargs)
        self.served_model = model
        self.page_providers: dict[int, str] | None = None

    def to_representation(self, value: Any) -> str | None:
        if self.page_providers is not None:
            return self.page_providers.get(value)
        return llm_provider_serving(model=self.served_model, served_id=value)


class ProviderListSerializer(serializers.ListSerializer):
    """A list whose rows have a `ProviderField`: one ledger query per page, not one per row.
    Serializers with the field name it as their Meta's `list_serializer_class`."""

    def to_representation(self, data: Any) -> list[Any]:
        rows = list(data.all() if isinstance(data, models.manager.BaseManager) else data)
        assert isinstance(self.child, serializers.Serializer)  # a list of serializers' rows, by its use
        for field in self.child.fields.values():
            if isinstance(field, ProviderField):
                served_ids = [served_id for row in rows if (served_id := field.get_attribute(row)) is not None]
                field.page_providers = llm_providers_serving(model=field.served_model, served_ids=served_ids)
        return super().to_representation(rows)
