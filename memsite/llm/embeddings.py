"""Embeddings from the configured OpenAI-compatible server, through the gateway's ledger.

    result = embed(texts=["a passage", "another"], user_id=user.pk, dimensions=384)
    result.vectors  # one list of floats per text, as the server sent it
    result.call     # the ledger row (purpose "embed")

Like `complete`, every call is one `LLMCall` row charged to `user_id`, whose daily budget is
checked first (a spent budget raises LLMError(BUDGET_SPENT) and sends nothing); a failure raises
LLMError with its row on `exc.call`. The server is the one `OPENAI_BASE_URL`/`OPENAI_API_KEY`
name, whichever provider chat calls use; the model is `MEMSITE_EMBEDDING_MODEL`. Failures are
retried as the openai provider retries them (429, 5xx, timeouts, connection errors)."""

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from memsite.errors import InvalidInput
from memsite.llm.config import LLMConfig, llm_config
from memsite.llm.errors import LLMError, Reason
from memsite.llm.gateway import Usage, _budget_require
from memsite.llm.models import LLMCall
from memsite.llm.providers.base import CallTrace, LLMRequest
from memsite.llm.providers.openai import PLACEHOLDER_KEY, client_for, with_retries
from memsite.llm.purposes import Purpose
from memsite.llm.replies import storable
from memsite.llm.services import llm_call_record
from memsite.llm.tokens import counter_for_model

logger = logging.getLogger(__name__)

PROVIDER = "openai"
RESPONSE_MODE = "embedding"


@dataclass(frozen=True)
class Embedding:
    vectors: list[list[float]]
    usage: Usage
    call: LLMCall


def _vectors(response: Any, count: int, dimensions: int | None) -> list[list[float]]:
    """The response's vectors in the order of the inputs; LLMError when they are not usable."""
    data = getattr(response, "data", None)
    if not isinstance(data, list) or len(data) != count:
        raise LLMError(
            Reason.SERVER_ERROR,
            f"The server's reply is not {count} embeddings: {str(response)[:200]!r}",
        )
    ordered = sorted(data, key=lambda item: getattr(item, "index", 0))
    vectors = [getattr(item, "embedding", None) for item in ordered]
    if not all(isinstance(vector, list) and vector for vector in vectors):
        raise LLMError(
            Reason.SERVER_ERROR,
            "The server's reply holds an embedding that is not a list of numbers.",
        )
    sizes = sorted({len(vector) for vector in vectors})
    if dimensions is not None and sizes != [dimensions]:
        raise LLMError(
            Reason.INVALID_REPLY,
            f"The server's embeddings have {', '.join(map(str, sizes))} dimensions; {dimensions} are needed. "
            f"Set MEMSITE_EMBEDDING_MODEL to a model that gives {dimensions} (or accepts `dimensions`).",
        )
    return vectors


def _send(request: LLMRequest, texts: list[str], dimensions: int | None, trace: CallTrace) -> Any:
    """The server's embeddings response, retried within the call's deadline."""
    config = request.config
    if not (config.base_url or config.api_key):
        raise LLMError(
            Reason.CONFIGURATION, "Server embeddings need OPENAI_BASE_URL or OPENAI_API_KEY."
        )
    client = client_for(config.base_url, config.api_key or PLACEHOLDER_KEY)
    options = {"dimensions": dimensions} if dimensions is not None else {}

    def send(timeout: float) -> Any:
        return client.embeddings.create(
            model=request.model, input=texts, encoding_format="float", timeout=timeout, **options
        )

    return with_retries(request, trace, send)


def _prompt_tokens(response: Any, texts: list[str], model: str, trace: CallTrace) -> None:
    """The inputs' tokens, as the server reported them or counted here."""
    reported = getattr(getattr(response, "usage", None), "prompt_tokens", None)
    if isinstance(reported, int) and not isinstance(reported, bool) and reported >= 0:
        trace.prompt_tokens = reported
        return
    counter = counter_for_model(model)
    trace.prompt_tokens = sum(counter.count(text) for text in texts)
    trace.tokens_reported = False
    trace.tokens_approximate = counter.approximate


def _run(
    request: LLMRequest, texts: list[str], dimensions: int | None, trace: CallTrace
) -> tuple[list[list[float]], LLMError | None]:
    """The vectors, or the error that ended the call; the trace says how far it got."""
    try:
        response = _send(request, texts, dimensions, trace)
        _prompt_tokens(response, texts, request.model, trace)
        vectors = _vectors(response, len(texts), dimensions)
    except LLMError as exc:
        exc.message = storable(exc.message)  # it may quote the server, and callers store it
        return [], exc
    except Exception as exc:  # a bug below must still end as one LLMError and a ledger row
        logger.exception("Embedding call failed unexpectedly.")
        return [], LLMError(Reason.INTERNAL, storable(f"{type(exc).__name__}: {exc}"))
    trace.reply = f"{len(vectors)} vectors of {len(vectors[0])} dimensions"
    return vectors, None


def _record(
    request: LLMRequest,
    trace: CallTrace,
    error: LLMError | None,
    *,
    latency_ms: int,
    user_id: int | None,
) -> LLMCall:
    return llm_call_record(
        purpose=Purpose.EMBED,
        provider=PROVIDER,
        model=request.model,
        ok=error is None,
        messages=trace.messages,
        reply=trace.reply,
        prompt_tokens=trace.prompt_tokens,
        completion_tokens=0,
        tokens_reported=trace.tokens_reported,
        tokens_approximate=trace.tokens_approximate,
        latency_ms=latency_ms,
        cost_usd=request.config.model_info(request.model).cost(
            prompt_tokens=trace.prompt_tokens, completion_tokens=0
        ),
        retries=trace.retries,
        repairs=0,
        response_mode=RESPONSE_MODE,
        schema_name="",
        error_reason=error.reason.value if error else "",
        error=error.message if error else "",
        user_id=user_id,
    )


def embed(
    *,
    texts: Sequence[str],
    user_id: int | None = None,
    dimensions: int | None = None,
    model: str | None = None,
    config: LLMConfig | None = None,
) -> Embedding:
    """Embed `texts` in one request (`dimensions`, when given, is asked for and required of the
    reply) and record the call. Raises LLMError (recorded first) or InvalidInput (nothing sent)."""
    if not texts or not all(isinstance(text, str) for text in texts):
        raise InvalidInput("An embedding call needs one or more texts.")
    texts = [storable(text) for text in texts]
    _budget_require(user_id)
    config = config or llm_config()
    model = model or settings.MEMSITE_EMBEDDING_MODEL
    started = time.monotonic()
    request = LLMRequest(
        purpose=Purpose.EMBED,
        messages=[],
        schema=None,
        model=model,
        config=config,
        deadline=started + config.deadline_s,
    )
    trace = CallTrace(model=model, messages=[{"role": "input", "content": text} for text in texts])
    vectors, error = _run(request, texts, dimensions, trace)
    latency_ms = round((time.monotonic() - started) * 1000)
    call = _record(request, trace, error, latency_ms=latency_ms, user_id=user_id)
    if error is not None:
        error.call = call
        raise error
    usage = Usage(
        prompt_tokens=trace.prompt_tokens,
        completion_tokens=0,
        reported=trace.tokens_reported,
        approximate=trace.tokens_approximate,
    )
    return Embedding(vectors=vectors, usage=usage, call=call)
