"""The `openai` provider: the `openai` package against any OpenAI-compatible server.
Explained in docs/llm.md."""

import json
import logging
import random
import re
import threading
import time
from collections.abc import Callable
from email.utils import parsedate_to_datetime
from functools import lru_cache
from typing import Any, TypeVar

import openai
from pydantic import BaseModel

from memsite.llm.errors import LLMError, Reason
from memsite.llm.providers.base import CallTrace, LLMRequest
from memsite.llm.replies import ReplyInvalid, parse_reply, storable

logger = logging.getLogger(__name__)
T = TypeVar("T")

JSON_SCHEMA, JSON_OBJECT, PROMPT, TEXT = "json_schema", "json_object", "prompt", "text"
EMBEDDING = "embedding"  # the ledger's response mode of an embeddings request
# Where each structured mode falls back to when the server refuses it with a 400.
FALLBACK = {JSON_SCHEMA: JSON_OBJECT, JSON_OBJECT: PROMPT}
# How strongly each structured mode holds the reply to the schema: a remembered mode is only
# ever replaced by one at least as strong.
STRENGTH = {PROMPT: 0, JSON_OBJECT: 1, JSON_SCHEMA: 2}
# A 400 refuses the structured-output request when its param is response_format(.something), or
# its message or code (case-insensitive) names the format. What servers say, for example:
#   OpenAI     "Invalid parameter: 'response_format' of type 'json_schema' is not supported with
#              this model." / "Invalid schema for response_format 'X': ..." (param response_format)
#   llama.cpp  'response_format type must be one of "text" or "json_object", but got: json_schema'
#   vLLM       errors naming the JSON schema (e.g. features xgrammar does not support), structured
#              outputs or guided decoding (guided_json)
#   Ollama     errors naming the JSON schema given as the format
# Anything else (context length, max_tokens, temperature...) is not about the response format, and
# trying a weaker mode would only repeat it.
RESPONSE_FORMAT_ERROR = re.compile(
    r"response[_ ]format|json[_ ]schema|json[_ ]object|structured[_ ]outputs?|guided[_ ](?:json|decoding)",
    re.IGNORECASE,
)
PLACEHOLDER_KEY = "not-needed"  # local OpenAI-compatible servers often take no key

SCHEMA_INSTRUCTION = "Reply with only one JSON object, and no other text, that matches this JSON schema:\n{schema}"
REPAIR_INSTRUCTION = (
    "Your previous reply could not be used. {error}\n"
    "Reply again with only one JSON object that matches the schema, and no other text."
)

_modes_lock = threading.Lock()
_working_modes: dict[tuple[str | None, str], str] = {}


def forget_working_modes() -> None:
    """Forget which structured-output mode each server accepted (tests start clean)."""
    with _modes_lock:
        _working_modes.clear()


@lru_cache(maxsize=16)
def client_for(base_url: str | None, api_key: str) -> openai.OpenAI:
    # One client per server: it is thread-safe and keeps its connections alive.
    return openai.OpenAI(api_key=api_key, base_url=base_url, max_retries=0)


@lru_cache(maxsize=256)
def response_format_for(schema: type[BaseModel]) -> dict[str, Any]:
    from openai.lib._pydantic import to_strict_json_schema

    name = re.sub(r"[^a-zA-Z0-9_-]", "_", schema.__name__)[:64] or "reply"
    try:
        return {
            "type": "json_schema",
            "json_schema": {"name": name, "schema": to_strict_json_schema(schema), "strict": True},
        }
    except Exception:  # a schema strict mode cannot express is still a useful guide
        return {
            "type": "json_schema",
            "json_schema": {"name": name, "schema": schema.model_json_schema(), "strict": False},
        }


@lru_cache(maxsize=256)
def schema_instruction_for(schema: type[BaseModel]) -> str:
    return SCHEMA_INSTRUCTION.format(schema=json.dumps(schema.model_json_schema(), separators=(",", ":")))


def with_schema_instruction(messages: list[dict[str, Any]], schema: type[BaseModel]) -> list[dict[str, Any]]:
    """The messages with the schema stated in the system message (first, as chat templates of
    local models expect)."""
    instruction = schema_instruction_for(schema)
    if messages and messages[0].get("role") == "system":
        first = {**messages[0], "content": f"{messages[0].get('content') or ''}\n\n{instruction}"}
        return [first, *messages[1:]]
    return [{"role": "system", "content": instruction}, *messages]


def retry_after_seconds(headers: Any) -> float | None:
    """Retry-After (seconds or an HTTP date) or retry-after-ms, as seconds; None if absent."""
    if headers is None:
        return None
    milliseconds = headers.get("retry-after-ms")
    if milliseconds:
        try:
            return max(float(milliseconds) / 1000, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        return max(parsedate_to_datetime(value).timestamp() - time.time(), 0.0)
    except (TypeError, ValueError):
        return None


def backoff_seconds(*, attempt: int, retry_after: float | None, request: LLMRequest) -> float:
    """Exponential backoff with jitter, but never sooner than the server asked (up to a cap)."""
    config = request.config
    exponential = min(config.backoff_base_s * (2**attempt), config.backoff_max_s)
    delay = exponential * random.uniform(0.5, 1.0)
    if retry_after is not None:
        delay = max(delay, min(retry_after, config.retry_after_max_s))
    return delay


def _describe(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error", body)
        message = error.get("message") if isinstance(error, dict) else error
        if message:
            return f"HTTP {exc.status_code}: {message}"
    return f"HTTP {exc.status_code}: {exc.message}"


def completion_text(completion: Any) -> str | None:
    """The text of a chat completion's first choice ("" when it has none), or None when the
    server's reply is not a chat completion (a proxy's page, a body of another API): the client
    hands such bodies back as they parsed, a string, a list or an object without choices."""
    choices = getattr(completion, "choices", None)
    if not isinstance(choices, list):
        return None
    if not choices:
        return ""
    message = getattr(choices[0], "message", None)
    if message is None:
        return None
    text = getattr(message, "content", None) or getattr(message, "refusal", None) or ""
    return text if isinstance(text, str) else None


def _token_count(value: Any) -> int | None:
    """A usage figure as the server reported it; None (count it here) when it is not a count."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _embedding_vectors(response: Any, count: int, dimensions: int | None) -> list[list[float]]:
    """An embeddings response's vectors in the order of the inputs; LLMError when they are not
    usable, or not of `dimensions` (when given) floats."""
    data = getattr(response, "data", None)
    if not isinstance(data, list) or len(data) != count:
        raise LLMError(
            Reason.SERVER_ERROR,
            f"The server's reply is not {count} embeddings: {str(response)[:200]!r}",
        )
    ordered = sorted(data, key=lambda item: getattr(item, "index", 0))
    vectors = [vector for item in ordered if isinstance(vector := getattr(item, "embedding", None), list) and vector]
    if len(vectors) != len(ordered):
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


def refuses_response_format(exc: openai.BadRequestError) -> bool:
    """Whether a 400 is the server refusing the structured-output request (`response_format`),
    judged from the error's param, code and message; only then is a weaker mode worth a try."""
    param = getattr(exc, "param", None)
    if isinstance(param, str) and param.startswith("response_format"):
        return True
    body = exc.body
    error = body.get("error", body) if isinstance(body, dict) else body
    # A JSON error's own message only: the client's exc.message repeats the whole body.
    message = error.get("message") if isinstance(error, dict) else (error or exc.message)
    said = " ".join(str(part) for part in (getattr(exc, "code", None), message) if part)
    return bool(RESPONSE_FORMAT_ERROR.search(said))


def remember_working_mode(key: tuple[str | None, str], mode: str) -> None:
    """Remember that `mode` worked for a server and model, unless a stronger mode already did (a
    fallback forced by one schema must not cost every later call its JSON schema)."""
    with _modes_lock:
        known = _working_modes.get(key)
        if known is None or STRENGTH[mode] >= STRENGTH[known]:
            _working_modes[key] = mode


class Retry(Exception):
    """Raised by a `send` of `with_retries`: the server answered, but not usably; try again."""

    def __init__(self, reason: Reason, detail: str):
        super().__init__(detail)
        self.reason, self.detail = reason, detail


def status_error(exc: openai.APIStatusError) -> tuple[Reason, str, bool]:
    """The reason for an HTTP error status, what to say of it, and whether to try again."""
    status, detail = exc.status_code, _describe(exc)
    if status == 429:
        return Reason.RATE_LIMITED, detail, True
    if status == 408:
        return Reason.TIMEOUT, detail, True
    if status >= 500 or status == 409:
        return Reason.SERVER_ERROR, detail, True
    if status in (401, 403):
        return Reason.AUTHENTICATION, detail, False
    return Reason.BAD_REQUEST, detail, False


def with_retries(
    request: LLMRequest, trace: CallTrace, send: Callable[[float], T], *, passthrough: tuple[type[Exception], ...] = ()
) -> T:
    """`send(timeout)`'s result, tried again with backoff while what failed may pass next time
    (a timeout, a lost connection, 408, 409, 429, 5xx, a body that is not JSON, a `Retry`),
    within the call's deadline and MEMSITE_LLM_MAX_RETRIES; LLMError for the rest. Errors of
    the `passthrough` types reach the caller as they are."""
    config = request.config
    while True:
        remaining = request.remaining()
        if remaining <= 0:
            raise LLMError(Reason.TIMEOUT, f"The call's {config.deadline_s:g}s deadline passed.")
        retry_after = None
        try:
            return send(min(config.request_timeout_s, remaining))
        except passthrough:
            raise
        except Retry as exc:
            reason, detail = exc.reason, exc.detail
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:  # a body that is not JSON
            reason, detail = Reason.SERVER_ERROR, f"The server's reply is not JSON: {exc}"
        except openai.APITimeoutError:
            reason, detail = Reason.TIMEOUT, "The request timed out."
        except openai.APIConnectionError as exc:
            reason, detail = Reason.CONNECTION, f"Could not reach the server: {exc.__cause__ or exc}"
        except openai.APIStatusError as exc:
            reason, detail, again = status_error(exc)
            if not again:
                raise LLMError(reason, detail) from None
            retry_after = retry_after_seconds(exc.response.headers)
        except openai.OpenAIError as exc:
            raise LLMError(Reason.SERVER_ERROR, f"Unusable reply from the server: {exc}") from None
        _wait_to_retry(request, trace, reason, detail, retry_after)


def _wait_to_retry(
    request: LLMRequest, trace: CallTrace, reason: Reason, detail: str, retry_after: float | None
) -> None:
    if trace.retries >= request.config.max_retries:
        raise LLMError(reason, f"{detail} (after {trace.retries} retries)")
    delay = backoff_seconds(attempt=trace.retries, retry_after=retry_after, request=request)
    if delay >= request.remaining():
        raise LLMError(reason, f"{detail} (after {trace.retries} retries; no time left before the deadline)")
    logger.info("LLM request failed (%s); retry %d in %.2fs.", detail, trace.retries + 1, delay)
    time.sleep(delay)
    trace.retries += 1


class OpenAIProvider:
    name = "openai"

    def complete(self, request: LLMRequest, trace: CallTrace) -> BaseModel | str:
        config = request.config
        client = client_for(config.base_url, config.api_key or PLACEHOLDER_KEY)
        mode_key = (config.base_url, request.model)
        schema = request.schema
        with _modes_lock:
            mode = TEXT if schema is None else _working_modes.get(mode_key, JSON_SCHEMA)
        conversation = list(request.messages)
        while True:
            plain = mode in (TEXT, JSON_SCHEMA)
            sent = conversation if plain or schema is None else with_schema_instruction(conversation, schema)
            trace.messages, trace.response_mode = sent, mode
            try:
                text, usage = self._send(client, request, sent, mode, trace)
            except openai.BadRequestError as exc:
                fallback = FALLBACK.get(mode)
                if fallback is None or not refuses_response_format(exc):
                    raise LLMError(Reason.BAD_REQUEST, _describe(exc)) from None
                logger.info("%s refused %s output (%s); trying %s.", config.base_url, mode, _describe(exc), fallback)
                mode = fallback
                continue
            if mode != TEXT:
                remember_working_mode(mode_key, mode)

            text = storable(text)
            trace.reply = text
            trace.add_usage(
                messages=sent,
                reply=text,
                prompt_tokens=_token_count(getattr(usage, "prompt_tokens", None)),
                completion_tokens=_token_count(getattr(usage, "completion_tokens", None)),
            )
            if schema is None:
                return text
            try:
                return parse_reply(text, schema)
            except ReplyInvalid as exc:
                if trace.repairs >= config.max_repairs:
                    raise LLMError(Reason.INVALID_REPLY, f"{exc} (after {trace.repairs} repairs)") from None
                trace.repairs += 1
                conversation = [
                    *conversation,
                    {"role": "assistant", "content": text},
                    {"role": "user", "content": REPAIR_INSTRUCTION.format(error=exc)},
                ]

    def _send(
        self,
        client: openai.OpenAI,
        request: LLMRequest,
        messages: list[dict[str, Any]],
        mode: str,
        trace: CallTrace,
    ) -> tuple[str, Any]:
        """The reply's text and its usage, once the server answers with a chat completion."""
        options: dict[str, Any] = {}
        if mode == JSON_SCHEMA:
            options["response_format"] = response_format_for(request.schema)
        elif mode == JSON_OBJECT:
            options["response_format"] = {"type": "json_object"}
        if request.max_tokens is not None:
            # o-series models take only max_completion_tokens; other servers know max_tokens.
            key = "max_completion_tokens" if re.match(r"o\d", request.model) else "max_tokens"
            options[key] = request.max_tokens
        if request.temperature is not None:
            options["temperature"] = request.temperature

        def send(timeout: float) -> tuple[str, Any]:
            completion = client.chat.completions.create(
                model=request.model,
                # Checked dicts (memsite.llm.gateway); the client's own TypedDicts are not built.
                messages=messages,  # type: ignore[arg-type]
                timeout=timeout,
                **options,
            )
            text = completion_text(completion)
            if text is None:
                raise Retry(
                    Reason.SERVER_ERROR, f"The server's reply is not a chat completion: {str(completion)[:200]!r}"
                )
            return text, getattr(completion, "usage", None)

        # A 400 goes back to the caller as it is: it may be a refused response format.
        return with_retries(request, trace, send, passthrough=(openai.BadRequestError,))

    def embed(
        self, request: LLMRequest, trace: CallTrace, texts: list[str], dimensions: int | None
    ) -> list[list[float]]:
        """One vector a text from /v1/embeddings (`dimensions`, when given, asked for and
        required of the reply), retried as chat requests are; raises LLMError."""
        config = request.config
        trace.response_mode = EMBEDDING
        if not (config.base_url or config.api_key):
            raise LLMError(Reason.CONFIGURATION, "Server embeddings need OPENAI_BASE_URL or OPENAI_API_KEY.")
        client = client_for(config.base_url, config.api_key or PLACEHOLDER_KEY)
        options: dict[str, Any] = {"dimensions": dimensions} if dimensions is not None else {}

        def send(timeout: float) -> Any:
            return client.embeddings.create(
                model=request.model,
                input=texts,
                encoding_format="float",
                timeout=timeout,
                **options,
            )

        response = with_retries(request, trace, send)
        usage = getattr(response, "usage", None)
        trace.add_usage(
            messages=trace.messages,
            reply="",
            prompt_tokens=_token_count(getattr(usage, "prompt_tokens", None)),
            completion_tokens=0,
            inputs=texts,
        )
        vectors = _embedding_vectors(response, len(texts), dimensions)
        trace.reply = f"{len(vectors)} vectors of {len(vectors[0])} dimensions"
        return vectors
