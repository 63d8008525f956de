"""What the gateway hands a provider, and what a provider leaves behind for the ledger."""

import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import BaseModel

from memsite.llm.config import LLMConfig
from memsite.llm.tokens import counter_for_model
from memsite.text.reading import Reading


@dataclass(frozen=True)
class LLMRequest:
    purpose: str
    messages: list[dict[str, Any]]
    schema: type[BaseModel] | None
    model: str
    config: LLMConfig
    deadline: float  # time.monotonic() after which the call has failed
    max_tokens: int | None = None
    temperature: float | None = None
    reading: Reading | None = None  # what the messages ask, as data (memsite.text.reading)

    def remaining(self) -> float:
        return self.deadline - time.monotonic()


@dataclass
class CallTrace:
    """Filled in by the provider as it goes, so a failed call is recorded as far as it got."""

    model: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    reply: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    tokens_reported: bool = True
    tokens_approximate: bool = False
    retries: int = 0
    repairs: int = 0
    response_mode: str = ""

    def add_usage(
        self,
        *,
        messages: list[dict[str, Any]],
        reply: str,
        prompt_tokens: int | None,
        completion_tokens: int | None,
        inputs: list[str] | None = None,
    ) -> None:
        """Usage of one request: as the server reported it, or counted when it did not (the
        `inputs` alone when given: an embeddings request is billed for its texts, without the
        chat framing of messages)."""
        counter = None
        if prompt_tokens is None:
            counter = counter_for_model(self.model)
            prompt_tokens = sum(map(counter.count, inputs)) if inputs is not None else counter.count_messages(messages)
        if completion_tokens is None:
            counter = counter or counter_for_model(self.model)
            completion_tokens = counter.count(reply)
        if counter is not None:
            self.tokens_reported = False
            self.tokens_approximate = self.tokens_approximate or counter.approximate
        self.prompt_tokens += prompt_tokens
        self.completion_tokens += completion_tokens


class Provider(Protocol):
    name: str

    def complete(self, request: LLMRequest, trace: CallTrace) -> BaseModel | str:
        """The validated reply (or its text when the request has no schema); raises LLMError."""
