"""The LLM gateway (memsite/llm): the provider, its models and its retries."""

import json

from django.core.exceptions import ImproperlyConfigured

from memsite.llm.catalog import parse_model_table
from memsite.llm.purposes import COMPLETION_PURPOSES
from memsite.settings.env import env_int, env_str
from memsite.settings.search import MEMSITE_EMBEDDINGS

# The LLM gateway (memsite/llm). Without a key it runs the offline heuristics.
OPENAI_API_KEY = env_str("OPENAI_API_KEY")
OPENAI_BASE_URL = env_str("OPENAI_BASE_URL")
MEMSITE_LLM_PROVIDER = env_str("MEMSITE_LLM_PROVIDER", "openai" if OPENAI_API_KEY else "offline")
if MEMSITE_LLM_PROVIDER not in ("openai", "offline"):
    raise ImproperlyConfigured(f"MEMSITE_LLM_PROVIDER must be openai or offline, got {MEMSITE_LLM_PROVIDER!r}.")
if MEMSITE_LLM_PROVIDER == "openai" and not (OPENAI_API_KEY or OPENAI_BASE_URL):
    raise ImproperlyConfigured("MEMSITE_LLM_PROVIDER=openai needs OPENAI_API_KEY or OPENAI_BASE_URL.")
MEMSITE_LLM_MODEL = env_str("MEMSITE_LLM_MODEL", "gpt-4o-mini")
# The model of /v1/embeddings when MEMSITE_EMBEDDINGS=server: asked for 384 dimensions, the
# index's, and refused if it gives others.
MEMSITE_EMBEDDING_MODEL = env_str("MEMSITE_EMBEDDING_MODEL", "text-embedding-3-small")
if MEMSITE_EMBEDDINGS == "server" and not (OPENAI_API_KEY or OPENAI_BASE_URL):
    raise ImproperlyConfigured("MEMSITE_EMBEDDINGS=server needs OPENAI_API_KEY or OPENAI_BASE_URL.")
# A model per purpose, e.g. MEMSITE_LLM_MODEL_DEEP_REFLECT=gpt-4.1; unset purposes use the default.
# `embed` is not one of them: its one setting is MEMSITE_EMBEDDING_MODEL.
MEMSITE_LLM_PURPOSE_MODELS = {
    purpose: model for purpose in COMPLETION_PURPOSES if (model := env_str(f"MEMSITE_LLM_MODEL_{purpose.upper()}"))
}
# Additions to and overrides of the model table, as JSON: {"name": {"context_window": 32768,
# "max_output_tokens": 4096, "input_price_per_million": 0.2, "output_price_per_million": 0.6}}.
try:
    MEMSITE_LLM_MODELS = json.loads(env_str("MEMSITE_LLM_MODELS", "{}"))
    parse_model_table(MEMSITE_LLM_MODELS)
except ValueError as exc:
    raise ImproperlyConfigured(f"MEMSITE_LLM_MODELS: {exc}") from None
MEMSITE_LLM_TIMEOUT_MS = env_int("MEMSITE_LLM_TIMEOUT_MS", 120_000)  # one call, all retries included
MEMSITE_LLM_REQUEST_TIMEOUT_MS = env_int("MEMSITE_LLM_REQUEST_TIMEOUT_MS", 60_000)
MEMSITE_LLM_MAX_RETRIES = env_int("MEMSITE_LLM_MAX_RETRIES", 4)
MEMSITE_LLM_MAX_REPAIRS = env_int("MEMSITE_LLM_MAX_REPAIRS", 2)
MEMSITE_LLM_BACKOFF_BASE_MS = env_int("MEMSITE_LLM_BACKOFF_BASE_MS", 500)
MEMSITE_LLM_BACKOFF_MAX_MS = env_int("MEMSITE_LLM_BACKOFF_MAX_MS", 20_000)
MEMSITE_LLM_RETRY_AFTER_MAX_MS = env_int("MEMSITE_LLM_RETRY_AFTER_MAX_MS", 60_000)
