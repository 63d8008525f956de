"""Nearest passages by sentence embedding: an exact scan of every vector, held in memory.
Explained in docs/memory.md."""

import threading
from dataclasses import dataclass
from datetime import datetime, timedelta
from time import monotonic

import numpy as np
from django.conf import settings
from django.db import connection
from django.utils import timezone

from memory.index.fulltext import Scope, scope_sql
from memory.models import Passage

LATE_COMMIT = timedelta(seconds=60)
SCOPE_SCAN_MAX = 50_000  # a scope this small is scored alone; a larger one is filtered after
IDS_PER_READ = 500


@dataclass
class Matrix:
    ids: np.ndarray  # int64, ascending
    spaces: np.ndarray  # int64, the space of each id's node (a node never changes space)
    vectors: np.ndarray  # float32, one row an id
    seen_until: datetime  # rows embedded before this are in
    loaded_at: float  # monotonic time of the last whole read


_lock = threading.Lock()
_matrix: Matrix | None = None


def forget() -> None:
    """Drop this process's matrix (tests, whose rolled-back ids come back)."""
    global _matrix
    with _lock:
        _matrix = None


def _rows(queryset) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    ids, spaces, blobs = [], [], []
    for pk, space_id, blob in queryset.values_list("id", "node__space_id", "vector").iterator(chunk_size=2_000):
        ids.append(pk)
        spaces.append(space_id)
        blobs.append(bytes(blob))
    # A copy: numpy's own allocation is aligned for BLAS, which scans it some 15% faster than the
    # joined bytes' buffer.
    vectors = np.frombuffer(b"".join(blobs), dtype=np.float32).copy()
    width = vectors.size // len(ids) if ids else 0
    return np.asarray(ids, dtype=np.int64), np.asarray(spaces, dtype=np.int64), vectors.reshape(len(ids), width)


def _rows_of(ids: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """These passages' ids, spaces and vectors, read a few hundred at a time."""
    read = []
    for at in range(0, len(ids), IDS_PER_READ):
        read.append(_rows(Passage.objects.filter(pk__in=ids[at : at + IDS_PER_READ])))
    return (
        np.concatenate([part[0] for part in read]),
        np.concatenate([part[1] for part in read]),
        np.vstack([part[2] for part in read]),
    )


def _read_all() -> Matrix:
    now = timezone.now()
    ids, spaces, vectors = _rows(Passage.objects.filter(vector__isnull=False).order_by("id"))
    return Matrix(ids, spaces, vectors, now, monotonic())


def _merge(matrix: Matrix) -> Matrix:
    """The rows embedded since the last look added. A passage's vector is written once (new text
    is a new row), so only ids the matrix lacks are read with their vectors."""
    now = timezone.now()
    # In no order: sorting by id would lead SQLite to scan the whole table by its key rather
    # than the few rows the embedded_at index finds.
    recent = Passage.objects.filter(embedded_at__gte=matrix.seen_until - LATE_COMMIT).order_by()
    seen = np.fromiter(recent.values_list("id", flat=True), dtype=np.int64)
    new = seen[~np.isin(seen, matrix.ids)].tolist()
    if new:
        ids, spaces, vectors = _rows_of(new)
        if len(matrix.ids) == 0:  # its vectors have no width yet to stack under
            order = np.argsort(ids, kind="stable")
            matrix.ids, matrix.spaces, matrix.vectors = ids[order], spaces[order], vectors[order]
        elif vectors.shape[1] == matrix.vectors.shape[1]:
            all_ids = np.concatenate([matrix.ids, ids])
            order = np.argsort(all_ids, kind="stable")
            all_spaces = np.concatenate([matrix.spaces, spaces])
            stacked = np.vstack([matrix.vectors, vectors])
            matrix.ids, matrix.spaces, matrix.vectors = all_ids[order], all_spaces[order], stacked[order]
    matrix.seen_until = now
    return matrix


def current() -> Matrix:
    global _matrix
    with _lock:
        if _matrix is None or monotonic() - _matrix.loaded_at > settings.MEMSITE_INDEX_RELOAD_S:
            _matrix = _read_all()
        else:
            _matrix = _merge(_matrix)
        return _matrix


def _in_scope(scope: Scope, ids: list[int] | None = None) -> np.ndarray:
    """Ids of passages in the scope (among `ids` if given), at most SCOPE_SCAN_MAX + 1, sorted."""
    where, params = scope_sql(scope)
    among = ""
    if ids is not None:
        among = f" AND p.id IN ({', '.join(['%s'] * len(ids))})"
        params = [*params, *ids]
    # Neither the vector nor an order is asked of the table: the matrix knows which passages
    # have vectors, and reading the vector column would read every row's blob.
    sql = f"SELECT p.id FROM memory_passage p JOIN memory_node n ON n.id = p.node_id WHERE 1 = 1{where}{among} LIMIT %s"
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, SCOPE_SCAN_MAX + 1])
        return np.sort(np.asarray([row[0] for row in cursor.fetchall()], dtype=np.int64))


def _space_rows(matrix: Matrix, space_id: int | None) -> slice | np.ndarray:
    """The matrix rows of the space's passages (of every space for None): the whole matrix,
    uncopied, when they are all its."""
    inside = matrix.spaces == space_id if space_id is not None else None
    return slice(None) if inside is None or inside.all() else np.flatnonzero(inside)


def _top(ids: np.ndarray, scores: np.ndarray, limit: int) -> list[tuple[int, float]]:
    if len(ids) > limit:
        keep = np.argpartition(-scores, limit - 1)[:limit]
        ids, scores = ids[keep], scores[keep]
    order = np.lexsort((ids, -scores))
    return [(int(ids[i]), float(scores[i])) for i in order]


def _rows_for(matrix: Matrix, ids: np.ndarray) -> np.ndarray:
    """The matrix rows of these passages (sorted ids), those without a vector left out."""
    rows = np.searchsorted(matrix.ids, ids).clip(max=len(matrix.ids) - 1)
    return rows[matrix.ids[rows] == ids]


def rank(query_vector: np.ndarray, *, scope: Scope, limit: int) -> list[tuple[int, float]]:
    """(passage id, cosine) best first, from the current matrix."""
    matrix = current()
    if not len(matrix.ids) or matrix.vectors.shape[1] != query_vector.shape[0]:
        return []
    if scope.path is None and not scope.types and not scope.dated:
        rows = _space_rows(matrix, scope.space_id)
        return _top(matrix.ids[rows], matrix.vectors[rows] @ query_vector, limit)
    scoped = _in_scope(scope)
    if len(scoped) <= SCOPE_SCAN_MAX:
        rows = _rows_for(matrix, scoped)
        return _top(matrix.ids[rows], matrix.vectors[rows] @ query_vector, limit)
    rows = _space_rows(matrix, scope.space_id)
    wide = _top(matrix.ids[rows], matrix.vectors[rows] @ query_vector, limit * 20)
    inside = set(_in_scope(scope, [pk for pk, _ in wide]).tolist())
    return [(pk, score) for pk, score in wide if pk in inside][:limit]
