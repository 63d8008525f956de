"""Keeping the content index in step with the tree.

Passages are written in the write's own transaction (`index_nodes`, called by every service
that changes a node's name, description or content): full text then always agrees with what
is committed, and a write that rolls back leaves no passage behind. Vectors are not: an
embedding costs milliseconds a passage, too much to hold a write's locks for (an archive of
ten thousand files would wait minutes), so they are filled by `embed_pending`, a task queued
once the write commits, with beat's sweep as the way back when the broker was away. Until then
a passage is found by full text alone."""

import logging
from collections.abc import Collection, Iterator

import numpy as np
from django.conf import settings
from django.core.cache import cache
from django.db import connection, transaction
from django.db.models import BinaryField
from django.db.models.functions import Substr
from django.utils import timezone

from memory.index.passages import cut, label
from memory.models import Node, NodeContent, Passage
from memory.rows import insert_rows
from memory.types import ContentKind, get_type

logger = logging.getLogger(__name__)
NODES_PER_QUERY = 200
BYTES_PER_READ = 2 * 1024 * 1024  # of contents read and cut at once: some three times that in memory
ROWS_PER_INSERT = 2_000
BINARY_SNIFF = 8_192


def content_text(data: bytes) -> str | None:
    """Content as text; None for binary content (a NUL early on, as git decides). Read the same
    way wherever offsets into it are given or taken."""
    if b"\x00" in data[:BINARY_SNIFF]:
        return None
    return data.decode("utf-8", errors="replace")


def _texts(sizes: dict[str, int]) -> Iterator[tuple[str, str]]:
    """(node id, text) for these nodes' contents (each cut to MEMSITE_INDEX_MAX_BYTES by the
    database), read a few MiB at a time; binary contents are left out."""
    limit = settings.MEMSITE_INDEX_MAX_BYTES
    group: list[str] = []
    budget = 0
    for node_id, size in [*sizes.items(), (None, 0)]:
        if group and (node_id is None or budget + min(size, limit) > BYTES_PER_READ):
            piece = Substr("data", 1, limit, output_field=BinaryField())
            for content_id, data in NodeContent.objects.filter(node_id__in=group).values_list("node_id", piece):
                text = content_text(bytes(data))
                if text is not None:
                    yield content_id, text
            group, budget = [], 0
        if node_id is not None:
            group.append(node_id)
            budget += min(size, limit)


def _label_row(node_id: str, name: str, description: str) -> tuple:
    return (node_id, 0, Passage.Kind.LABEL.value, 0, 0, label(name, description), None, None)


def _content_rows(node_id: str, text: str) -> Iterator[tuple]:
    for seq, piece in enumerate(cut(text), start=1):
        yield (node_id, seq, Passage.Kind.CONTENT.value, piece.start, piece.end, piece.text, None, None)


def _chunks(ids: list[str]) -> Iterator[list[str]]:
    for at in range(0, len(ids), NODES_PER_QUERY):
        yield ids[at : at + NODES_PER_QUERY]


PASSAGE_COLUMNS = ("node", "seq", "kind", "start", "end", "text", "vector", "embedded_at")
PASSAGE_TYPES = ("text", "int4", "text", "int4", "int4", "text", "bytea", "timestamptz")


def index_nodes(node_ids: Collection[str], *, labels_only: bool = False) -> int:
    """Rewrite the passages of these nodes from their rows, in the caller's transaction (with
    `labels_only`, just their name and description). Contents are read and cut a few MiB at a
    time. A passage whose text is unchanged keeps its vector, so appending to a long document
    embeds only what is new. Returns how many passages were written."""
    written = 0
    for chunk in _chunks(list(dict.fromkeys(node_ids))):
        stale = Passage.objects.filter(node_id__in=chunk)
        if labels_only:
            stale = stale.filter(kind=Passage.Kind.LABEL)
        kept = dict(stale.filter(vector__isnull=False).values_list("text", "vector"))
        stale.delete()
        nodes = list(Node.objects.filter(pk__in=chunk).values_list("id", "name", "description", "type", "content__size"))
        labels = [_label_row(node_id, name, description) for node_id, name, description, _, _ in nodes]
        written += _insert(labels, kept)
        sizes = {row[0]: row[4] for row in nodes if row[4] and get_type(row[3]).content is not ContentKind.NONE}
        batch: list[tuple] = []
        for node_id, text in () if labels_only else _texts(sizes):
            for row in _content_rows(node_id, text):  # a long text of short lines is many rows
                batch.append(row)
                if len(batch) >= ROWS_PER_INSERT:
                    written += _insert(batch, kept)
                    batch = []
        written += _insert(batch, kept)
    if written:
        transaction.on_commit(_queue_embedding)
    return written


def _insert(rows: list[tuple], kept: dict[str, bytes]) -> int:
    if not rows:
        return 0
    insert_rows(Passage, PASSAGE_COLUMNS, _with_kept_vectors(rows, kept), types=PASSAGE_TYPES)
    return len(rows)


def _with_kept_vectors(rows: list[tuple], kept: dict[str, bytes]) -> list[tuple]:
    if not kept:
        return rows
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    return [(*row[:6], kept[row[5]], now) if row[5] in kept else row for row in rows]


def _queue_embedding() -> None:
    """Best effort: a broker that is away leaves the passages to beat's sweep, and the write
    that made them stands."""
    if settings.MEMSITE_EMBEDDINGS == "off":
        return
    from memory.tasks import index_embed

    try:
        index_embed.delay()
    except Exception:
        logger.warning("Embedding not queued (the broker did not take it); beat's sweep will.")


EMBED_TASK_PASSAGES = 5_000  # one task's share; it queues the next for the rest
EMBED_LOCK = "memory:index:embedding"


def index_embed_pending() -> int:
    """A task's work: embed what is pending, one task at a time (the others return at once:
    the running one goes on until nothing is pending)."""
    if not cache.add(EMBED_LOCK, True, timeout=settings.MEMSITE_INDEX_EMBED_LOCK_S):
        return 0
    try:
        done = embed_pending(limit=EMBED_TASK_PASSAGES)
    finally:
        cache.delete(EMBED_LOCK)
    if done == EMBED_TASK_PASSAGES:
        _queue_embedding()
    return done


def index_embed_sweep() -> None:
    """Beat's way back for passages whose task was lost."""
    if Passage.objects.filter(vector__isnull=True).exists():
        _queue_embedding()


def embed_pending(*, batch: int = 64, limit: int | None = None) -> int:
    """Embed passages that have no vector yet, oldest first, `batch` at a time, at most `limit`
    (all when None). Each batch is computed outside any transaction and saved in a short one;
    a passage deleted meanwhile is skipped. Returns how many were embedded."""
    from memory.index.embeddings import embedder

    model = embedder()
    if model is None:
        return 0
    done = 0
    while limit is None or done < limit:
        size = batch if limit is None else min(batch, limit - done)
        pending = list(Passage.objects.filter(vector__isnull=True).order_by("id").values_list("id", "text")[:size])
        if not pending:
            break
        vectors = model.embed([text for _, text in pending])
        _save_vectors([pk for pk, _ in pending], vectors)
        done += len(pending)
    return done


def _save_vectors(ids: list[int], vectors: np.ndarray) -> None:
    now = timezone.now()
    with transaction.atomic():
        for pk, vector in zip(ids, vectors, strict=True):
            Passage.objects.filter(pk=pk, vector__isnull=True).update(
                vector=np.asarray(vector, dtype=np.float32).tobytes(), embedded_at=now
            )


def index_rebuild() -> int:
    """Every node's passages written anew, a transaction per chunk of nodes (vectors kept where
    a passage's text is unchanged). Returns the passages written."""
    written = 0
    ids = list(Node.objects.order_by("path").values_list("id", flat=True))
    for chunk in _chunks(ids):
        with transaction.atomic():
            written += index_nodes(chunk)
    return written
