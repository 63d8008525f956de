"""Sentence embeddings: the local model gives sentence-transformers' vectors, whatever the batch;
the server's come through the LLM gateway's ledger; the setting picks one or none."""

import json
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest

from memory.index.embeddings import DIMENSIONS, LocalEmbedder, ServerEmbedder, embedder
from memsite.llm import minilm
from memsite.llm.errors import LLMError, Reason
from memsite.llm.models import LLMCall
from memsite.spaces.models import Space
from memsite.spaces.principals import system_principal
from tests.factories import acting, system
from tests.fake_openai import Reply, embedding

ROOT = Path(__file__).resolve().parents[3]
REFERENCE = json.loads((Path(__file__).parent / "reference_vectors.json").read_text())
TEXTS = [item["text"] for item in REFERENCE["items"]]
LONG = max(TEXTS, key=len)


@pytest.fixture(scope="module")
def model() -> minilm.MiniLM:
    """The process's model, loaded once for the module."""
    return minilm.model()


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def test_the_fixture_covers_what_it_should():
    assert REFERENCE["dimensions"] == DIMENSIONS and len(TEXTS) >= 12
    assert "a" in TEXTS and any(not text.isascii() for text in TEXTS)
    assert max(item["tokens"] for item in REFERENCE["items"]) > 256  # the cut at 256 is checked


def test_local_vectors_are_sentence_transformers_own(model):
    expected = np.array([item["vector"] for item in REFERENCE["items"]], dtype=np.float32)
    vectors = LocalEmbedder().embed(TEXTS, by=system_principal(Space(slug="unsaved")))  # charges nothing
    assert vectors.dtype == np.float32 and vectors.shape == (len(TEXTS), DIMENSIONS)
    for text, cosine in zip(TEXTS, cosines(vectors, expected), strict=True):
        assert cosine >= 0.99, text


def test_a_long_text_is_cut_at_256_tokens(model):
    ids = model.tokenizer.encode(LONG).ids
    assert len(ids) == 256 and ids[-1] == model.tokenizer.token_to_id("[SEP]")
    head = model.tokenizer.decode(ids[1:-1])
    assert cosines(model.embed([LONG]), model.embed([head]))[0] > 0.9999


def test_batch_order_and_padding_do_not_change_a_vector(model):
    alone = np.vstack([model.embed([text]) for text in TEXTS])
    short = "The cat sat on the mat."
    mixed = model.embed([short, LONG, *TEXTS[::-1]])  # padded to 256 beside the long one
    assert cosines(mixed[:1], model.embed([short]))[0] > 0.9999
    assert (cosines(mixed[2:][::-1], alone) > 0.9999).all()


def test_vectors_are_unit_rows_and_nothing_gives_an_empty_matrix(model):
    vectors = model.embed(["", " ", "x" * 5000, *TEXTS])
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5)
    assert model.embed([]).shape == (0, DIMENSIONS)


def test_batches_are_sorted_by_length_and_bounded():
    lengths = [300, 3, 256, 9, 9, 40]
    batches = minilm._batches(lengths)
    assert sorted(row for batch in batches for row in batch) == list(range(len(lengths)))
    for batch in batches:
        assert len(batch) * max(lengths[row] for row in batch) <= minilm.BATCH_TOKENS or len(batch) == 1
    flat = [lengths[row] for batch in batches for row in batch]
    assert flat == sorted(lengths)


def test_similar_sentences_are_closer_than_unrelated_ones(model):
    texts = [
        "How do I reset my password?",
        "I forgot my password, how can I change it?",
        "Greyhounds are fast dogs.",
    ]
    question, paraphrase, unrelated = model.embed(texts)
    assert question @ paraphrase > 0.6
    assert question @ unrelated < 0.2


@pytest.mark.django_db
def test_server_embeddings_are_one_ledger_row_per_call(settings, openai_gateway, user):
    settings.MEMSITE_EMBEDDINGS = "server"
    settings.MEMSITE_EMBEDDING_MODEL = "embedder-small"
    texts = ["memory of a greyhound", "a greyhound again", "weather"]

    model = embedder()
    vectors = model.embed(texts, by=acting(user))

    assert isinstance(model, ServerEmbedder) and model.name == "server:embedder-small"
    assert vectors.dtype == np.float32 and vectors.shape == (3, DIMENSIONS)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-6)
    expected = np.array([embedding(text, DIMENSIONS) for text in texts])
    assert np.allclose(vectors, expected / np.linalg.norm(expected, axis=1, keepdims=True), atol=1e-6)
    [request] = openai_gateway.requests
    assert request.path == "/v1/embeddings"
    assert request.body["input"] == texts and request.body["dimensions"] == DIMENSIONS
    assert request.body["model"] == "embedder-small"
    [call] = LLMCall.objects.all()
    assert (call.purpose, call.provider, call.model, call.status) == (
        "embed",
        "openai",
        "embedder-small",
        "ok",
    )
    assert call.user_id == user.pk and call.prompt_tokens == 8 and call.completion_tokens == 0
    assert call.tokens_reported and call.response_mode == "embedding"
    assert [message["content"] for message in call.messages] == texts

    model.embed(["one more"], by=acting(user))
    assert LLMCall.objects.filter(purpose="embed", user=user).count() == 2


@pytest.mark.django_db
def test_server_embeddings_cost_the_embedding_model_s_price(settings, openai_gateway):
    settings.MEMSITE_EMBEDDINGS = "server"
    settings.MEMSITE_EMBEDDING_MODEL = "text-embedding-3-small"
    embedder().embed(["memory of a greyhound", "weather"], by=system())
    [call] = LLMCall.objects.all()
    assert call.prompt_tokens > 0 and call.cost_usd == Decimal("0.02") * call.prompt_tokens / 1_000_000


@pytest.mark.django_db
def test_server_vectors_of_another_dimension_are_refused(settings, openai_gateway):
    settings.MEMSITE_EMBEDDINGS = "server"
    openai_gateway.embedding_dimensions = 1536  # a server that ignores `dimensions`

    with pytest.raises(LLMError) as raised:
        embedder().embed(["a passage"], by=system())

    assert raised.value.reason == Reason.INVALID_REPLY
    assert "1536 dimensions; 384 are needed" in raised.value.message
    assert "MEMSITE_EMBEDDING_MODEL" in raised.value.message
    call = raised.value.call
    assert (call.purpose, call.status, call.error_reason) == ("embed", "error", "invalid_reply")


@pytest.mark.django_db
def test_server_embeddings_retry_a_rate_limit(settings, openai_gateway):
    settings.MEMSITE_EMBEDDINGS = "server"
    settings.MEMSITE_LLM_BACKOFF_BASE_MS = 1
    openai_gateway.script(Reply.rate_limited(retry_after="0"))

    vectors = embedder().embed(["a passage"], by=system())

    assert vectors.shape == (1, DIMENSIONS)
    [call] = LLMCall.objects.all()
    assert call.status == "ok" and call.retries == 1
    assert len(openai_gateway.requests) == 2


@pytest.mark.django_db
def test_a_refused_request_is_one_error_row_and_not_retried(settings, openai_gateway, user):
    settings.MEMSITE_EMBEDDINGS = "server"
    openai_gateway.script(Reply.failure(400, "This model does not support specifying dimensions."))

    with pytest.raises(LLMError) as raised:
        embedder().embed(["a passage"], by=acting(user))

    assert raised.value.reason == Reason.BAD_REQUEST
    assert "does not support specifying dimensions" in raised.value.message
    [call] = LLMCall.objects.all()
    assert call == raised.value.call and call.user_id == user.pk
    assert (call.purpose, call.status, call.error_reason, call.retries) == (
        "embed",
        "error",
        "bad_request",
        0,
    )
    assert len(openai_gateway.requests) == 1


@pytest.mark.django_db
def test_tokens_are_counted_when_the_server_reports_none(settings, openai_gateway):
    settings.MEMSITE_EMBEDDINGS = "server"
    openai_gateway.script(Reply(usage=None))

    embedder().embed(["one two three", "four"], by=system())

    [call] = LLMCall.objects.all()
    assert call.tokens_reported is False and call.prompt_tokens == 4  # one token a word here
    assert "usage" not in openai_gateway.responses[0]


@pytest.mark.django_db
def test_a_spent_budget_sends_nothing(settings, openai_gateway, user):
    settings.MEMSITE_EMBEDDINGS = "server"
    settings.MEMSITE_LLM_DAILY_CALLS = 1
    embedder().embed(["first"], by=acting(user))

    with pytest.raises(LLMError) as raised:
        embedder().embed(["second"], by=acting(user))

    assert raised.value.reason == Reason.BUDGET_SPENT and raised.value.call is None
    assert len(openai_gateway.requests) == 1 and LLMCall.objects.count() == 1
    embedder().embed(["memsite's own work"], by=system())  # its own budget, not the user's
    assert LLMCall.objects.count() == 2


def test_off_is_no_embedder_and_local_the_default(settings):
    settings.MEMSITE_EMBEDDINGS = "off"
    assert embedder() is None
    settings.MEMSITE_EMBEDDINGS = "local"
    assert isinstance(embedder(), LocalEmbedder) and embedder().name == "local:all-MiniLM-L6-v2"


@pytest.mark.parametrize(
    ("env", "refusal"),
    [
        (
            {"MEMSITE_EMBEDDINGS": "gpu"},
            "MEMSITE_EMBEDDINGS must be local, server or off, got 'gpu'.",
        ),
        (
            {"MEMSITE_EMBEDDINGS": "server"},
            "MEMSITE_EMBEDDINGS=server needs OPENAI_API_KEY or OPENAI_BASE_URL.",
        ),
    ],
)
def test_a_bad_setting_stops_memsite_at_startup(tmp_path, env, refusal):
    environment = {"PATH": "/usr/bin:/bin", "DJANGO_SETTINGS_MODULE": "memsite.settings", "DJANGO_DEBUG": "true",
                   "MEMSITE_VAR_DIR": str(tmp_path), **env}  # fmt: skip
    result = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=ROOT, env=environment, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode != 0
    assert f"django.core.exceptions.ImproperlyConfigured: {refusal}" in result.stderr
