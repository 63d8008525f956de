"""Embeddings from the configured OpenAI-compatible server, through the gateway's ledger.
Explained in docs/llm.md."""

import time
from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings

from memsite.errors import InvalidInput
from memsite.llm.config import LLMConfig, llm_config
from memsite.llm.gateway import Usage, recorded_call
from memsite.llm.models import LLMCall
from memsite.llm.providers.base import CallTrace, LLMRequest
from memsite.llm.providers.openai import OpenAIProvider
from memsite.llm.purposes import Purpose
from memsite.llm.replies import storable
from memsite.spaces.principals import Principal


@dataclass(frozen=True)
class Embedding:
    vectors: list[list[float]]
    usage: Usage
    call: LLMCall


def embed(
    *,
    texts: Sequence[str],
    by: Principal,
    dimensions: int | None = None,
    model: str | None = None,
    config: LLMConfig | None = None,
) -> Embedding:
    """Embed `texts` in one request (`dimensions`, when given, is asked for and required of the
    reply) and record the call, charged to `by`. Raises LLMError (recorded first) or InvalidInput (nothing sent)."""
    if not texts or not all(isinstance(text, str) for text in texts):
        raise InvalidInput("An embedding call needs one or more texts.")
    texts = [storable(text) for text in texts]
    config = config or llm_config()
    model = model or settings.MEMSITE_EMBEDDING_MODEL
    request = LLMRequest(
        purpose=Purpose.EMBED,
        messages=[],
        schema=None,
        model=model,
        config=config,
        deadline=time.monotonic() + config.deadline_s,
    )
    trace = CallTrace(model=model, messages=[{"role": "input", "content": text} for text in texts])
    provider = OpenAIProvider()
    vectors, usage, call = recorded_call(
        request,
        trace,
        lambda: provider.embed(request, trace, texts, dimensions),
        provider=provider.name,
        by=by,
    )
    return Embedding(vectors=vectors, usage=usage, call=call)
