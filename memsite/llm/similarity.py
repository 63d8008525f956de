"""Cosines of texts with a question by the local sentence model, when memsite runs it: what the
offline heuristics' ranking (memsite.text.ranking) fuses with the lexical score.
Explained in docs/llm.md."""

import logging
from collections.abc import Sequence
from typing import Any

from django.conf import settings

logger = logging.getLogger(__name__)

EMBEDDED_TEXTS = 4_096  # vectors kept between calls: a node read for several questions is embedded once

_embedded: dict[tuple[str, str], Any] = {}


def local_model() -> Any:
    """The local sentence model when memsite runs it (MEMSITE_EMBEDDINGS=local), else None. A
    server's embeddings would make an offline call reach the network."""
    if settings.MEMSITE_EMBEDDINGS != "local":
        return None
    from memsite.llm import minilm  # numpy and the weights, loaded once used

    return minilm.model()


def cosines(query: str, texts: Sequence[str]) -> list[float] | None:
    """Each text's cosine with the query (the vectors are L2-normalised), or None with no model."""
    model = local_model()
    if model is None:
        return None
    vectors: dict[str, Any] = {text: _embedded.get((model.name, text)) for text in (query, *texts)}
    missing = [text for text, vector in vectors.items() if vector is None]
    if missing:
        try:
            vectors.update(zip(missing, model.embed(missing), strict=True))
        except Exception:  # a broken model costs the fusion, not the reply
            logger.warning("The offline reading could not embed; lexical scores alone.", exc_info=True)
            return None
        if len(_embedded) + len(missing) > EMBEDDED_TEXTS:
            _embedded.clear()
        _embedded.update({(model.name, text): vectors[text] for text in missing})
    return [float(vectors[text] @ vectors[query]) for text in texts]
