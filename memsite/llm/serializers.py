"""The `provider` field of API results the gateway produced: whether a model or the offline
heuristics wrote them. Explained in docs/llm.md."""

from typing import Any

from django.db import models
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from memsite.llm.selectors import llm_provider_serving

PROVIDER_HELP = (
    "The LLM provider whose calls produced this: `offline` when the offline heuristics, not a model, "
    "wrote any of it; null while no answered call is on record."
)


@extend_schema_field(serializers.CharField(allow_null=True, help_text=PROVIDER_HELP))
class ProviderField(serializers.Field):
    """Read from the ledger's calls that served the row of `model` whose id is at `source`."""

    def __init__(self, *, model: type[models.Model], source: str = "pk", **kwargs: Any):
        super().__init__(read_only=True, source=source, help_text=PROVIDER_HELP, **kwargs)
        self.served_model = model

    def to_representation(self, value: Any) -> str | None:
        return llm_provider_serving(model=self.served_model, served_id=value)
