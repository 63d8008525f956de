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
from django.db import transaction
from django.utils import timezone

from memory.index.passages import cut, label
from memory.models import Node, Passage
from memory.selectors import node_content_slice
from memory.types import ContentKind, get_type

logger = logging.getLogger(__name__)
NODES_PER_QUERY = 200
BINARY_SNIFF = 8_192


def _text_of(data: bytes) -> str | None:
    """Content as text; None for binary content (a NUL early on, as git decides)."""
    if b"\x00" in data[:BINARY_SNIFF]:
        return None
    return data.decode("utf-8", errors="replace")


def _content(node_id: str, size: int | None) -> str | None:
    if not size:
        return None
    limit = settings.MEMSITE_INDEX_MAX_BYTES
    piece = node_content_slice(node_id=node_id, start=0, length=min(size, limit))
    return _text_of(bytes(piece.data)) if piece is not None else None


def _rows(node_id: str, name: str, description: str, content: str | None) -> Iterator[Passage]:
    yield Passage(node_id=node_id, seq=0, kind=Passage.Kind.LABEL, start=0, end=0, text=label(name, description))
    for seq, piece in enumerate(cut(content or ""), start=1):
        yield Passage(node_id=node_id, seq=seq, kind=Passage.Kind.CONTENT, start=piece.start, end=piece.end, text=piece.text)


def _chunks(ids: list[str]) -> Iterator[list[str]]:
    for at in range(0, len(ids), NODES_PER_QUERY):
        yield ids[at : at + NODES_PER_QUERY]


def index_nodes(node_ids: Collection[str], *, labels_only: bool = False) -> int:
    """Rewrite the passages of these nodes from their rows, in the caller's transaction (with
    `labels_only`, just their name and description). A passage whose text is unchanged keeps
    its vector, so appending to a long document embeds only what is new. Returns how many
    passages were written."""
    written = 0
    for chunk in _chunks(list(dict.fromkeys(node_ids))):
        stale = Passage.objects.filter(node_id__in=chunk)
        if labels_only:
            stale = stale.filter(kind=Passage.Kind.LABEL)
        kept = dict(stale.filter(vector__isnull=False).values_list("text", "vector"))
        stale.delete()
        nodes = Node.objects.filter(pk__in=chunk).values_list("id", "name", "description", "type", "content__size")
        rows: list[Passage] = []
        for node_id, name, description, type_name, size in nodes:
            reads_content = not labels_only and get_type(type_name).content is not ContentKind.NONE
            rows.extend(_rows(node_id, name, description, _content(node_id, size) if reads_content else None))
        _keep_vectors(rows, kept)
        Passage.objects.bulk_create(rows, batch_size=500)
        written += len(rows)
    if written:
        transaction.on_commit(_queue_embedding)
    return written


def _keep_vectors(rows: list[Passage], kept: dict[str, bytes]) -> None:
    now = timezone.now()
    for row in rows:
        row.vector = kept.get(row.text)
        row.embedded_at = now if row.vector is not None else None


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
