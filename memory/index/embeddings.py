"""Sentence embeddings of passages and queries, as settings.MEMSITE_EMBEDDINGS says: `local`
(all-MiniLM-L6-v2 in this process), `server` (through the LLM gateway) or `off` (none).
Explained in docs/memory.md."""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from django.conf import settings

from memsite.llm.minilm import LocalEmbedder
from memsite.spaces.principals import Principal

DIMENSIONS = 384  # the index stores float32 x 384 a passage


class Embedder(Protocol):
    @property
    def name(self) -> str: ...

    def embed(self, texts: Sequence[str], *, by: Principal) -> np.ndarray:
        """float32 (len(texts), DIMENSIONS), rows L2-normalised, in the order of `texts`; a
        server's call charged to `by`."""


def normalized(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to length 1 (a zero row stays zero)."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, np.float32(1e-12))


@dataclass(frozen=True)
class ServerEmbedder:
    model: str

    @property
    def name(self) -> str:
        return f"server:{self.model}"

    def embed(self, texts: Sequence[str], *, by: Principal) -> np.ndarray:
        """One gateway call for all of `texts`; LLMError when it fails (its ledger row on it)."""
        from memsite.llm.embeddings import embed

        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        result = embed(texts=list(texts), by=by, dimensions=DIMENSIONS, model=self.model)
        return normalized(np.asarray(result.vectors, dtype=np.float32))


_local = LocalEmbedder()


def embedder() -> Embedder | None:
    """The embedder MEMSITE_EMBEDDINGS names (settings refuse any other value); None when it
    is `off`."""
    mode = settings.MEMSITE_EMBEDDINGS
    if mode == "server":
        return ServerEmbedder(model=settings.MEMSITE_EMBEDDING_MODEL)
    return _local if mode == "local" else None
