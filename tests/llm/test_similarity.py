"""Cosines by the local sentence model, kept between calls, for the offline ranking."""

import logging

import numpy as np
import pytest

from memsite.llm import similarity


class CountingModel:
    """Unit vectors on one axis a text, by its length: texts of one length are the same."""

    name = "counting"

    def __init__(self):
        self.embedded: list[str] = []

    def embed(self, texts):
        self.embedded += texts
        vectors = np.zeros((len(texts), 64), dtype=np.float32)
        for row, text in enumerate(texts):
            vectors[row, len(text) % 64] = 1.0
        return vectors


@pytest.fixture
def model(monkeypatch):
    found = CountingModel()
    monkeypatch.setattr(similarity, "local_model", lambda: found)
    monkeypatch.setattr(similarity, "_embedded", {})
    return found


def test_each_text_is_embedded_once_across_calls(model):
    assert similarity.cosines("kayak", ["boats", "a red kayak"]) == [1.0, 0.0]
    assert similarity.cosines("kayak", ["a red kayak", "canoe"]) == [0.0, 1.0]

    assert model.embedded == ["kayak", "boats", "a red kayak", "canoe"]


def test_a_full_store_is_emptied_before_new_vectors_are_kept(model, monkeypatch):
    monkeypatch.setattr(similarity, "EMBEDDED_TEXTS", 3)
    similarity.cosines("kayak", ["boats", "canoe"])

    similarity.cosines("kayak", ["rafts"])
    similarity.cosines("kayak", ["boats"])

    assert model.embedded == ["kayak", "boats", "canoe", "rafts", "kayak", "boats"]  # kept: rafts alone


def test_a_model_that_fails_costs_the_cosines_not_the_call(model, monkeypatch, caplog):
    def broken(texts):
        raise RuntimeError("no weights")

    monkeypatch.setattr(model, "embed", broken)

    with caplog.at_level(logging.WARNING, logger="memsite.llm.similarity"):
        assert similarity.cosines("kayak", ["boats"]) is None
    assert "lexical scores alone" in caplog.text and similarity._embedded == {}


@pytest.mark.parametrize("embeddings", ["server", "off"])
def test_only_a_model_memsite_runs_itself_is_used(settings, embeddings):
    settings.MEMSITE_EMBEDDINGS = embeddings

    assert similarity.local_model() is None and similarity.cosines("kayak", ["boats"]) is None
