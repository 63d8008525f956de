"""Embeddings from the configured OpenAI-compatible server, through the gateway's ledger.

    result = embed(texts=["a passage", "another"], dimensions=384)
    result.vectors  # one list of floats per text, as the server sent it
    result.call     # the ledger row (purpose "embed")

Like `complete`, every call is one `LLMCall` row, and a failure raises LLMError with its row on
`exc.call`. The call is charged to a user only when the caller names one (`user_id`): that
user's daily budget is checked first (a spent budget raises LLMError(BUDGET_SPENT) and sends
nothing); without one the row belongs to no user and no budget limits it. The server is the one
`OPENAI_BASE_URL`/`OPENAI_API_KEY` name, whichever provider chat calls use; the model is
`MEMSITE_EMBEDDING_MODEL`. Failures are retried as the openai provider retries them (429, 5xx,
timeouts, connection errors)."""

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


@dataclass(frozen=True)
class Embedding:
    vectors: list[list[float]]
    usage: Usage
    call: LLMCall


def embed(
    *,
    texts: Sequence[str],
    user_id: int | None = None,
    dimensions: int | None = None,
    model: str | None = None,
    config: LLMConfig | None = None,
) -> Embedding:
    """Embed `texts` in one request (`dimensions`, when given, is asked for and required of the
    reply) and record the call, charged to `user_id` when given. Raises LLMError (recorded
    first) or InvalidInput (nothing sent)."""
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
        user_id=user_id,
    )
    return Embedding(vectors=vectors, usage=usage, call=call)
