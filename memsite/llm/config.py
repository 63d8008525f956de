"""The gateway's configuration, read from Django settings at each call so that tests and
`override_settings` see their values. The settings themselves come from the environment
(memsite/settings)."""

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache

from django.conf import settings

from memsite.llm.catalog import OFFLINE_MODEL, ModelInfo, model_table, resolve_model

OFFLINE = "offline"  # the provider of heuristics, no model: what it writes is marked so
PROVIDERS = ("openai", OFFLINE)


@dataclass(frozen=True)
class LLMConfig:
    provider: str
    api_key: str | None
    base_url: str | None
    default_model: str
    purpose_models: Mapping[str, str] = field(default_factory=dict)
    models: Mapping[str, ModelInfo] = field(default_factory=dict)
    deadline_s: float = 120.0  # hard limit on one gateway call, retries and repairs included
    request_timeout_s: float = 60.0  # one HTTP request
    max_retries: int = 4
    max_repairs: int = 2
    backoff_base_s: float = 0.5
    backoff_max_s: float = 20.0
    retry_after_max_s: float = 60.0

    @property
    def is_offline(self) -> bool:
        return self.provider == OFFLINE

    def model_for(self, purpose: str) -> str:
        """The model a purpose is configured for, whichever provider runs it (budgets use it)."""
        return self.purpose_models.get(purpose) or self.default_model

    def served_model_for(self, purpose: str) -> str:
        """The model name written to the ledger: the offline provider is no model."""
        return OFFLINE_MODEL if self.is_offline else self.model_for(purpose)

    def model_info(self, model: str) -> ModelInfo:
        return resolve_model(model, self.models)


@lru_cache(maxsize=8)
def _models_from(serialized: str) -> dict[str, ModelInfo]:
    return model_table(json.loads(serialized))


def _models(raw: Mapping | None) -> dict[str, ModelInfo]:
    # Parsed once per distinct table, so a call pays only for the dump.
    return _models_from(json.dumps(raw or {}, sort_keys=True, default=str))


def llm_config() -> LLMConfig:
    ms = 1000.0
    return LLMConfig(
        provider=settings.MEMSITE_LLM_PROVIDER,
        api_key=settings.OPENAI_API_KEY,
        base_url=settings.OPENAI_BASE_URL,
        default_model=settings.MEMSITE_LLM_MODEL,
        purpose_models=settings.MEMSITE_LLM_PURPOSE_MODELS,
        models=_models(settings.MEMSITE_LLM_MODELS),
        deadline_s=settings.MEMSITE_LLM_TIMEOUT_MS / ms,
        request_timeout_s=settings.MEMSITE_LLM_REQUEST_TIMEOUT_MS / ms,
        max_retries=settings.MEMSITE_LLM_MAX_RETRIES,
        max_repairs=settings.MEMSITE_LLM_MAX_REPAIRS,
        backoff_base_s=settings.MEMSITE_LLM_BACKOFF_BASE_MS / ms,
        backoff_max_s=settings.MEMSITE_LLM_BACKOFF_MAX_MS / ms,
        retry_after_max_s=settings.MEMSITE_LLM_RETRY_AFTER_MAX_MS / ms,
    )
