"""Server embeddings through the gateway's ledger: the same row a completion makes, charged to a
user only when the caller names one; the embedding model has one setting."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memsite.llm.embeddings import embed
from memsite.llm.errors import LLMError, Reason
from memsite.llm.models import LLMCall
from memsite.llm.providers import openai as openai_provider
from tests.factories import system

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.django_db
def test_a_call_of_memsite_itself_is_a_system_row_of_no_user(settings, openai_llm):
    # Chat calls run offline; embeddings still go to the server.
    settings.MEMSITE_LLM_PROVIDER = "offline"
    settings.MEMSITE_EMBEDDING_MODEL = "embedder-small"

    result = embed(by=system(), texts=["a greyhound", "the weather"], dimensions=8)

    assert [len(vector) for vector in result.vectors] == [8, 8]
    usage = result.usage  # a token a word here
    assert (usage.prompt_tokens, usage.completion_tokens, usage.reported) == (4, 0, True)
    assert not usage.approximate
    [call] = LLMCall.objects.all()
    assert call == result.call and call.user_id is None and call.acted_as == LLMCall.ActedAs.SYSTEM
    assert (call.purpose, call.provider, call.model, call.status) == (
        "embed",
        "openai",
        "embedder-small",
        "ok",
    )
    assert call.messages == [
        {"role": "input", "content": "a greyhound"},
        {"role": "input", "content": "the weather"},
    ]
    assert call.reply == "2 vectors of 8 dimensions"
    assert (call.prompt_tokens, call.completion_tokens, call.retries, call.repairs) == (4, 0, 0, 0)
    assert (call.response_mode, call.schema_name, call.error_reason) == ("embedding", "", "")


@pytest.mark.django_db
def test_no_server_is_a_configuration_error_row(settings):
    with pytest.raises(LLMError) as raised:
        embed(by=system(), texts=["a passage"])

    assert raised.value.reason == Reason.CONFIGURATION
    call = raised.value.call
    assert (call.purpose, call.provider, call.status, call.response_mode) == (
        "embed",
        "openai",
        "error",
        "embedding",
    )


@pytest.mark.django_db
def test_a_bug_below_is_an_internal_error_row(openai_llm, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("no client \x00 today")

    monkeypatch.setattr(openai_provider, "client_for", broken)

    with pytest.raises(LLMError) as raised:
        embed(by=system(), texts=["a passage"])

    error = raised.value
    assert error.reason == Reason.INTERNAL
    assert error.message.startswith("RuntimeError: no client") and "\x00" not in error.message
    assert LLMCall.objects.get() == error.call and error.call.error == error.message
    assert openai_llm.requests == []


def test_the_embedding_model_has_one_setting(tmp_path):
    environment = {"PATH": "/usr/bin:/bin", "DJANGO_SETTINGS_MODULE": "memsite.settings", "DJANGO_DEBUG": "true",
                   "MEMSITE_VAR_DIR": str(tmp_path), "MEMSITE_LLM_MODEL_EMBED": "ignored",
                   "MEMSITE_LLM_MODEL_ROUTE": "router", "MEMSITE_EMBEDDING_MODEL": "embedder"}  # fmt: skip
    script = (
        "import json, django; django.setup(); from django.conf import settings; "
        "print(json.dumps([settings.MEMSITE_LLM_PURPOSE_MODELS, settings.MEMSITE_EMBEDDING_MODEL]))"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT, env=environment, capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    assert json.loads(result.stdout) == [{"route": "router"}, "embedder"]
