"""The gateway: the one way anything in memsite talks to an LLM.
Explained in docs/llm.md."""

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Generic, TypeVar, overload

from django.db import models
from pydantic import BaseModel

from memsite.errors import InvalidInput
from memsite.llm.config import LLMConfig, llm_config
from memsite.llm.errors import LLMError, Reason
from memsite.llm.models import LLMCall
from memsite.llm.providers import CallTrace, LLMRequest, get_provider
from memsite.llm.purposes import COMPLETION_PURPOSES, Purpose
from memsite.llm.replies import storable
from memsite.llm.services import llm_call_record
from memsite.llm.services.calls import served_key
from memsite.quotas.selectors import spends_today
from memsite.spaces.principals import Principal
from memsite.spaces.selectors import space_get, token_get
from memsite.text.reading import Reading

logger = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)
R = TypeVar("R")
V = TypeVar("V")  # a reply: the schema's model, or text
ROLES = ("system", "user", "assistant", "developer", "tool")


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int
    completion_tokens: int
    reported: bool  # by the server; False when the gateway counted them
    approximate: bool  # counted with an encoding other than the model's own

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class Completion(Generic[V]):
    value: V
    text: str
    usage: Usage
    call: LLMCall

    @property
    def provider(self) -> str:
        return self.call.provider

    @property
    def model(self) -> str:
        return self.call.model


def _normalized(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    if not messages:
        raise InvalidInput("An LLM call needs at least one message.")
    normalized = []
    for position, message in enumerate(messages):
        if not isinstance(message, Mapping) or message.get("role") not in ROLES:
            raise InvalidInput(f"Message {position} needs a role among {', '.join(ROLES)}.")
        if not isinstance(message.get("content"), (str, list)):
            raise InvalidInput(f"Message {position} needs content.")
        # What a prompt quotes (a node's bytes, a fetched page) may hold characters no database
        # stores: the ledger keeps the messages, and the offline provider echoes them.
        normalized.append({**message, "content": storable(message["content"])})
    return normalized


def _budget_require(by: Principal, provider: str) -> None:
    """LLMError(BUDGET_SPENT) once a budget the call counts against is spent today: for a call
    a model serves, the user's, their own in the space, the whole space's, the asking token's
    (memsite's own in the space for its upkeep); for the offline provider's, its cap alone.
    Checked before each call, with the space and token as they are now (an owner may have
    changed a budget since slow work began): calls running at once may each pass it, so a day
    may end a few calls over."""
    space = space_get(space_id=by.space.pk) or by.space  # or deleted meanwhile, its work with it
    token = token_get(token_id=by.token_id) if by.token_id is not None else None
    for spend in spends_today(by=replace(by, space=space, token=token), provider=provider):
        if spend.spent:
            raise LLMError(Reason.BUDGET_SPENT, f"{spend.named} is spent: {spend.describe()}.")


@overload
def complete(
    *,
    purpose: str,
    messages: Sequence[Mapping[str, Any]],
    schema: type[T],
    by: Principal,
    reading: Reading | None = ...,
    served: models.Model | None = ...,
    model: str | None = ...,
    max_tokens: int | None = ...,
    temperature: float | None = ...,
    config: LLMConfig | None = ...,
) -> Completion[T]: ...
@overload
def complete(
    *,
    purpose: str,
    messages: Sequence[Mapping[str, Any]],
    schema: None = ...,
    by: Principal,
    reading: Reading | None = ...,
    served: models.Model | None = ...,
    model: str | None = ...,
    max_tokens: int | None = ...,
    temperature: float | None = ...,
    config: LLMConfig | None = ...,
) -> Completion[str]: ...
def complete(
    *,
    purpose: str,
    messages: Sequence[Mapping[str, Any]],
    schema: type[BaseModel] | None = None,
    by: Principal,
    reading: Reading | None = None,
    served: models.Model | None = None,
    model: str | None = None,
    max_tokens: int | None = None,
    temperature: float | None = None,
    config: LLMConfig | None = None,
) -> Completion[Any]:
    """Run one LLM call for `purpose` and record it as the work of `by`: a user (through a
    token, if one asked for it) or memsite itself, in its space, whose budgets it counts against.
    `reading` says what the messages ask as data, for the offline provider, which reads no prose.
    Raises LLMError (the call is recorded first) or, for a malformed request, InvalidInput
    (nothing is sent or recorded)."""
    purpose = str(purpose)
    if purpose == Purpose.EMBED:
        raise InvalidInput("Embeddings are not completions: call memsite.llm.embeddings.embed.")
    if purpose not in COMPLETION_PURPOSES:
        raise InvalidInput(f"Unknown LLM purpose {purpose!r}; expected one of {', '.join(COMPLETION_PURPOSES)}.")
    if schema is not None and not (isinstance(schema, type) and issubclass(schema, BaseModel)):
        raise InvalidInput("An LLM reply schema must be a pydantic model class.")
    normalized = _normalized(messages)
    served_key(served)  # refuse a bad link before spending a request on it
    config = config or llm_config()
    served_model = config.served_model_for(purpose) if model is None or config.is_offline else model
    request = LLMRequest(
        purpose=purpose,
        messages=normalized,
        schema=schema,
        model=served_model,
        config=config,
        deadline=time.monotonic() + config.deadline_s,
        max_tokens=max_tokens,
        temperature=temperature,
        reading=reading,
    )
    trace = CallTrace(model=served_model, messages=normalized)
    value, usage, call = recorded_call(
        request,
        trace,
        lambda: get_provider(config.provider).complete(request, trace),
        provider=config.provider,
        served=served,
        by=by,
    )
    return Completion(value=value, text=trace.reply, usage=usage, call=call)


def recorded_call(
    request: LLMRequest,
    trace: CallTrace,
    send: Callable[[], R],
    *,
    provider: str,
    by: Principal,
    served: models.Model | None = None,
) -> tuple[R, Usage, LLMCall]:
    """Run `send` (it fills `trace` as it goes) as one ledger row, charged to `by`: a spent
    budget raises LLMError(BUDGET_SPENT) with nothing sent or recorded. Returns the result, its
    usage and the row; a failure raises LLMError with the row on `exc.call`."""
    _budget_require(by, provider)
    started = time.monotonic()
    error: LLMError | None = None
    try:
        value = send()
    except LLMError as exc:
        error = exc
    except Exception as exc:  # a bug below must still end as one LLMError and a ledger row
        logger.exception("LLM call for %s failed unexpectedly.", request.purpose)
        error = LLMError(Reason.INTERNAL, f"{type(exc).__name__}: {exc}")
    if error is not None:
        error.message = storable(error.message)  # it may quote the server, and callers store it
    latency_ms = round((time.monotonic() - started) * 1000)
    call = _ledger_row(
        request,
        trace,
        error,
        provider=provider,
        latency_ms=latency_ms,
        served=served,
        by=by,
    )
    if error is not None:
        error.call = call
        raise error
    usage = Usage(
        prompt_tokens=trace.prompt_tokens,
        completion_tokens=trace.completion_tokens,
        reported=trace.tokens_reported,
        approximate=trace.tokens_approximate,
    )
    return value, usage, call


def _ledger_row(
    request: LLMRequest,
    trace: CallTrace,
    error: LLMError | None,
    *,
    provider: str,
    latency_ms: int,
    served: models.Model | None,
    by: Principal,
) -> LLMCall:
    cost = request.config.model_info(request.model).cost(
        prompt_tokens=trace.prompt_tokens, completion_tokens=trace.completion_tokens
    )
    return llm_call_record(
        purpose=request.purpose,
        provider=provider,
        model=request.model,
        ok=error is None,
        messages=trace.messages,
        reply=trace.reply,
        prompt_tokens=trace.prompt_tokens,
        completion_tokens=trace.completion_tokens,
        tokens_reported=trace.tokens_reported,
        tokens_approximate=trace.tokens_approximate,
        latency_ms=latency_ms,
        cost_usd=cost,
        retries=trace.retries,
        repairs=trace.repairs,
        response_mode=trace.response_mode,
        schema_name=request.schema.__name__ if request.schema is not None else "",
        error_reason=error.reason.value if error else "",
        error=error.message if error else "",
        served=served,
        by=by,
    )
