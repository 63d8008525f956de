"""The model table: context window, max output tokens and prices per million tokens, with
defaults for common OpenAI models, overridden or extended by `settings.MEMSITE_LLM_MODELS`."""

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

logger = logging.getLogger(__name__)

OFFLINE_MODEL = "offline"


@dataclass(frozen=True)
class ModelInfo:
    name: str
    context_window: int
    max_output_tokens: int
    input_price_per_million: Decimal
    output_price_per_million: Decimal
    known: bool = True

    def cost(self, *, prompt_tokens: int, completion_tokens: int) -> Decimal:
        """Estimated cost in USD."""
        million = Decimal(1_000_000)
        return (
            Decimal(prompt_tokens) * self.input_price_per_million
            + Decimal(completion_tokens) * self.output_price_per_million
        ) / million


class ModelSpec(BaseModel):
    """One entry of `MEMSITE_LLM_MODELS`; fields left out keep the default entry's values."""

    model_config = ConfigDict(extra="forbid")
    context_window: int | None = Field(default=None, gt=0)
    max_output_tokens: int | None = Field(default=None, gt=0)
    input_price_per_million: Decimal | None = Field(default=None, ge=0)
    output_price_per_million: Decimal | None = Field(default=None, ge=0)


def _entry(name: str, context: int, output: int, price_in: str, price_out: str) -> ModelInfo:
    return ModelInfo(name, context, output, Decimal(price_in), Decimal(price_out))


# USD per million tokens, OpenAI's list prices.
DEFAULT_MODELS: dict[str, ModelInfo] = {
    info.name: info
    for info in (
        _entry("gpt-4o", 128_000, 16_384, "2.50", "10.00"),
        _entry("gpt-4o-mini", 128_000, 16_384, "0.15", "0.60"),
        _entry("gpt-4.1", 1_047_576, 32_768, "2.00", "8.00"),
        _entry("gpt-4.1-mini", 1_047_576, 32_768, "0.40", "1.60"),
        _entry("gpt-4.1-nano", 1_047_576, 32_768, "0.10", "0.40"),
        _entry("gpt-4-turbo", 128_000, 4_096, "10.00", "30.00"),
        _entry("gpt-4", 8_192, 8_192, "30.00", "60.00"),
        _entry("gpt-3.5-turbo", 16_385, 4_096, "0.50", "1.50"),
        _entry("o1", 200_000, 100_000, "15.00", "60.00"),
        _entry("o3", 200_000, 100_000, "2.00", "8.00"),
        _entry("o3-mini", 200_000, 100_000, "1.10", "4.40"),
        _entry("o4-mini", 200_000, 100_000, "1.10", "4.40"),
        # Embedding models: input only, 8,191 tokens a text.
        _entry("text-embedding-3-small", 8_191, 1, "0.02", "0"),
        _entry("text-embedding-3-large", 8_191, 1, "0.13", "0"),
        # The offline heuristics: free, and generous so budgets do not shrink without a model.
        _entry(OFFLINE_MODEL, 128_000, 4_096, "0", "0"),
    )
}

# An unknown model gets a small window, so budgets stay safe, and gpt-4o's prices, so the cost
# estimate errs high rather than claiming the call was free.
UNKNOWN_MODEL = ModelInfo("unknown", 8_192, 2_048, Decimal("2.50"), Decimal("10.00"), known=False)


def parse_model_table(raw: Mapping[str, Any]) -> dict[str, ModelSpec]:
    """Validate a `MEMSITE_LLM_MODELS` table; ValueError says which entry is wrong."""
    if not isinstance(raw, Mapping):
        raise ValueError("MEMSITE_LLM_MODELS must map model names to objects.")
    table = {}
    for name, spec in raw.items():
        try:
            table[str(name)] = ModelSpec.model_validate(spec)
        except ValidationError as exc:
            raise ValueError(f"MEMSITE_LLM_MODELS[{name!r}] is invalid: {exc}") from None
    return table


def model_table(overrides: Mapping[str, Any] | None = None) -> dict[str, ModelInfo]:
    table = dict(DEFAULT_MODELS)
    for name, spec in parse_model_table(overrides or {}).items():
        base = table.get(name)
        values = spec.model_dump(exclude_none=True)
        if base is None:
            missing = {"context_window", "max_output_tokens"} - values.keys()
            defaults: dict[str, Any] = {
                "context_window": UNKNOWN_MODEL.context_window,
                "max_output_tokens": UNKNOWN_MODEL.max_output_tokens,
                "input_price_per_million": Decimal(0),
                "output_price_per_million": Decimal(0),
            }
            if missing:
                logger.warning("MEMSITE_LLM_MODELS[%r] lacks %s; using safe defaults.", name, sorted(missing))
            table[name] = ModelInfo(name=name, **(defaults | values))
        else:
            table[name] = ModelInfo(**({**base.__dict__, **values}))
    return table


_warned: set[str] = set()


def resolve_model(name: str, table: Mapping[str, ModelInfo]) -> ModelInfo:
    """The entry for `name`: exact, else the longest entry it extends with a dated suffix
    (`gpt-4o-2024-08-06` is `gpt-4o`), else a safe default and a warning once per name."""
    if name in table:
        return table[name]
    prefixes = [known for known in table if name.startswith(known + "-")]
    if prefixes:
        return table[max(prefixes, key=len)]
    if name not in _warned:
        _warned.add(name)
        logger.warning(
            "Model %r is not in the model table; assuming a %d-token window and gpt-4o prices. "
            "Add it to MEMSITE_LLM_MODELS.",
            name,
            UNKNOWN_MODEL.context_window,
        )
    return ModelInfo(
        name=name,
        context_window=UNKNOWN_MODEL.context_window,
        max_output_tokens=UNKNOWN_MODEL.max_output_tokens,
        input_price_per_million=UNKNOWN_MODEL.input_price_per_million,
        output_price_per_million=UNKNOWN_MODEL.output_price_per_million,
        known=False,
    )
