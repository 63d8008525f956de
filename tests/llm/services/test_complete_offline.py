"""The offline provider: schema-valid, deterministic replies for every purpose, with no key."""

import datetime
from enum import StrEnum
from typing import Literal

import pytest
from pydantic import BaseModel, Field, field_validator

from memsite.errors import InvalidInput
from memsite.llm.errors import LLMError, Reason
from memsite.llm.gateway import complete
from memsite.llm.models import LLMCall
from memsite.llm.prompt import Prompt
from memsite.llm.purposes import COMPLETION_PURPOSES, Purpose
from memsite.text.lines import one_line
from memsite.text.reading import Reading, numbered
from tests.factories import system

pytestmark = pytest.mark.django_db

ROUTE_QUERY = "where are the postgres migration notes?"
ROUTE_MESSAGES = [
    {"role": "system", "content": "You route a search through a memory tree. Reply in JSON."},
    {
        "role": "user",
        "content": (
            f"Query: {ROUTE_QUERY}\n"
            "Children:\n"
            "1. [memory_a1] Frontend styling and CSS tokens\n"
            "2. [memory_b2] Database migrations for PostgreSQL and postgres notes\n"
            "3. [memory_c3] Celery worker configuration"
        ),
    },
]
ROUTE = Prompt(
    ROUTE_MESSAGES,
    Reading(
        query=ROUTE_QUERY,
        context="",
        options=numbered(
            ROUTE_QUERY,
            [
                "Frontend styling and CSS tokens",
                "Database migrations for PostgreSQL and postgres notes",
                "Celery worker configuration",
            ],
            keys=["memory_a1", "memory_b2", "memory_c3"],
        ),
    ),
)
CONTEXT_QUERY = "which broker does celery use in production?"
CONTEXT_TEXT = (
    "memsite stores memory for agent swarms. Celery uses Redis as its broker in production. The embedded mode "
    "uses the kombu filesystem broker instead. Searches are I/O bound, so workers use a threads pool."
)
CONTEXT_MESSAGES = [
    {"role": "system", "content": "Answer from the context only."},
    {
        "role": "user",
        "content": (f"Question: {CONTEXT_QUERY}\nContext: {CONTEXT_TEXT}"),
    },
]
CONTEXT = Prompt(CONTEXT_MESSAGES, Reading(query=CONTEXT_QUERY, context=CONTEXT_TEXT))


class RouteChoice(BaseModel):
    choice: int = Field(ge=1, le=3)
    node_id: str
    reason: str
    confidence: float = Field(ge=0, le=1)


class ReadResult(BaseModel):
    relevant: bool
    excerpt: str
    keywords: list[str] = Field(max_length=5)


class Description(BaseModel):
    description: str = Field(max_length=240)


class Emotion(StrEnum):
    CALM = "calm"
    CURIOUS = "curious"
    WORRIED = "worried"


class Reflection(BaseModel):
    thoughts: list[str] = Field(min_length=1)
    emotion: Emotion
    importance: int = Field(ge=1, le=10)
    new_goal: str | None = None


class DeepReflection(Reflection):
    facts: list[str] = Field(min_length=2)
    summary: str


class Decision(BaseModel):
    action: Literal["search", "answer", "stop"]
    reason: str


class ChatReply(BaseModel):
    reply: str


class GraphNode(BaseModel):
    kind: Literal["task", "subtask", "evidence", "summary"]
    content: str = Field(min_length=1)


class MemorizePatch(BaseModel):
    add_nodes: list[GraphNode] = Field(min_length=1)
    add_edges: list[tuple[int, int]] = []


class RecallPatch(BaseModel):
    flush: list[int]
    fold_into: GraphNode


class Summary(BaseModel):
    summary: str = Field(min_length=10)
    kept_facts: list[str]


class Answer(BaseModel):
    answer: str
    evidence: list[str]
    answerable: bool
    confidence: float = Field(ge=0, le=1)


SCHEMAS = {
    Purpose.ROUTE: (RouteChoice, ROUTE),
    Purpose.READ: (ReadResult, CONTEXT),
    Purpose.DESCRIBE: (Description, CONTEXT),
    Purpose.REFLECT: (Reflection, CONTEXT),
    Purpose.DEEP_REFLECT: (DeepReflection, CONTEXT),
    Purpose.DECIDE: (Decision, CONTEXT),
    Purpose.CHAT: (ChatReply, CONTEXT),
    Purpose.MEMORIZE: (MemorizePatch, CONTEXT),
    Purpose.RECALL: (RecallPatch, CONTEXT),
    Purpose.SUMMARIZE: (Summary, CONTEXT),
    Purpose.ANSWER: (Answer, CONTEXT),
}


COMPLETIONS = [Purpose(purpose) for purpose in COMPLETION_PURPOSES]


def test_every_purpose_has_a_schema_case():
    assert set(SCHEMAS) == set(COMPLETIONS)
    assert set(COMPLETIONS) == set(Purpose) - {Purpose.EMBED}


@pytest.mark.parametrize("purpose", COMPLETIONS, ids=str)
def test_schema_valid_and_deterministic_for_every_purpose(purpose):
    schema, prompt = SCHEMAS[purpose]

    first = complete(by=system(), purpose=purpose, messages=prompt.messages, reading=prompt.reading, schema=schema)
    second = complete(by=system(), purpose=purpose, messages=prompt.messages, reading=prompt.reading, schema=schema)

    assert isinstance(first.value, schema)
    assert schema.model_validate_json(first.text) == first.value
    assert first.text == second.text
    call = first.call
    assert (call.provider, call.model, call.status, call.response_mode) == ("offline", "offline", "ok", "json_schema")
    assert call.tokens_reported is False and call.tokens_approximate is True
    assert call.prompt_tokens > 0 and call.completion_tokens > 0
    assert call.cost_usd == 0


@pytest.mark.parametrize("purpose", COMPLETIONS, ids=str)
def test_text_reply_for_every_purpose(purpose):
    _, prompt = SCHEMAS[purpose]

    first = complete(by=system(), purpose=purpose, messages=prompt.messages, reading=prompt.reading)
    second = complete(by=system(), purpose=purpose, messages=prompt.messages, reading=prompt.reading)

    assert isinstance(first.value, str) and first.value.strip()
    assert first.value == second.value
    assert first.call.response_mode == "text"


def test_route_scores_options_lexically():
    result = complete(by=system(), purpose="route", messages=ROUTE.messages, reading=ROUTE.reading, schema=RouteChoice)

    assert result.value.choice == 2
    assert result.value.node_id == "memory_b2"
    assert "postgres" in result.value.reason
    assert 0 < result.value.confidence <= 1
    assert complete(by=system(), purpose="route", messages=ROUTE.messages, reading=ROUTE.reading).value == "memory_b2"


def test_a_request_without_its_reading_is_read_as_plain_text():
    """Nothing is parsed out of prose: the last user message asks, and nothing is offered."""
    reply = complete(by=system(), purpose="route", messages=ROUTE_MESSAGES)

    assert reply.value == one_line(ROUTE_MESSAGES[-1]["content"], 200)
    answer = complete(by=system(), purpose="answer", messages=CONTEXT_MESSAGES).value
    assert "Celery uses Redis as its broker in production." in answer


def test_answer_is_extracted_from_the_context():
    result = complete(by=system(), purpose="answer", messages=CONTEXT.messages, reading=CONTEXT.reading, schema=Answer)

    assert "Celery uses Redis as its broker in production." in result.value.answer
    assert result.value.answerable is True
    assert result.value.evidence[0].startswith("Celery uses Redis")


def test_different_input_gives_a_different_reply():
    other = [{"role": "user", "content": "Question: what do searches use?\nContext: Searches use a threads pool."}]

    assert (
        complete(by=system(), purpose="answer", messages=CONTEXT_MESSAGES).value
        != complete(by=system(), purpose="answer", messages=other).value
    )


class Nested(BaseModel):
    when: datetime.datetime
    tags: list[str]
    weights: dict[str, float]
    ratio: float = Field(gt=0, lt=1)
    count: int = Field(ge=3)
    code: str = Field(min_length=5, max_length=8)


class KitchenSink(BaseModel):
    title: str
    items: list[Nested] = Field(min_length=2, max_length=2)
    maybe: Nested | None
    mode: Literal["a", "b"] = "b"
    flag: bool = False


def test_arbitrary_schema_is_filled():
    result = complete(by=system(), purpose="summarize", messages=CONTEXT_MESSAGES, schema=KitchenSink)

    assert len(result.value.items) == 2
    assert all(3 <= item.count and 5 <= len(item.code) <= 8 for item in result.value.items)


class Strict(BaseModel):
    code: str

    @field_validator("code")
    @classmethod
    def _only_xyz(cls, value: str) -> str:
        if value != "xyz":
            raise ValueError("must be xyz")
        return value


def test_a_schema_it_cannot_fill_is_an_llm_error_with_a_ledger_row():
    with pytest.raises(LLMError) as raised:
        complete(by=system(), purpose="decide", messages=CONTEXT_MESSAGES, schema=Strict)

    assert raised.value.reason == Reason.OFFLINE_UNSUPPORTED
    assert "offline_reply" in raised.value.message
    assert LLMCall.objects.get().error_reason == "offline_unsupported"


class WithHook(Strict):
    @classmethod
    def offline_reply(cls, *, purpose, reading):
        return {"code": "xyz"}


def test_a_schema_can_say_its_own_offline_reply():
    assert complete(by=system(), purpose="decide", messages=CONTEXT_MESSAGES, schema=WithHook).value.code == "xyz"


def test_offline_is_used_even_for_an_explicit_model():
    result = complete(by=system(), purpose="chat", messages=CONTEXT_MESSAGES, model="gpt-4.1")

    assert (result.provider, result.model) == ("offline", "offline")


@pytest.mark.parametrize(
    "kwargs",
    [
        {"purpose": "dance", "messages": CONTEXT_MESSAGES},
        {"purpose": "embed", "messages": CONTEXT_MESSAGES},
        {"purpose": "chat", "messages": []},
        {"purpose": "chat", "messages": [{"role": "wizard", "content": "hi"}]},
        {"purpose": "chat", "messages": CONTEXT_MESSAGES, "schema": dict},
    ],
    ids=["purpose", "embed", "no-messages", "role", "schema"],
)
def test_malformed_requests_are_refused_before_anything_is_sent(kwargs):
    with pytest.raises(InvalidInput):
        complete(by=system(), **kwargs)

    assert not LLMCall.objects.exists()


def test_embed_is_no_completion_purpose():
    with pytest.raises(InvalidInput, match="memsite.llm.embeddings.embed"):
        complete(by=system(), purpose=Purpose.EMBED, messages=CONTEXT_MESSAGES)
