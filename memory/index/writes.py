"""Keeping the content index in step with the tree.
Explained in docs/memory.md."""

from collections import deque
from collections.abc import Collection, Iterator
from datetime import date

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from django.db.models import BinaryField, F, Sum
from django.db.models.functions import Length, Substr
from django.utils import timezone

from memory.index.passages import cut, label
from memory.logic.dates import Timeline, document_date
from memory.models import Node, NodeContent, Passage
from memory.rows import insert_rows
from memory.types import ContentKind, get_type
from memsite.llm.errors import LLMError, Reason
from memsite.queue import in_turn, publish_on_commit, run_alone, sweep
from memsite.spaces.models import Space
from memsite.spaces.principals import system_principal

NODES_PER_QUERY = 200
IDS_PER_QUERY = 500
# Of text read and cut at once, a node's contents and its passages before: some three times
# that in memory.
BYTES_PER_READ = 2 * 1024 * 1024
ROWS_PER_WRITE = 2_000
BINARY_SNIFF = 8_192


def content_text(data: bytes) -> str | None:
    """Content as text; None for binary content (a NUL early on, as git decides). Read the same
    way wherever offsets into it are given or taken."""
    if b"\x00" in data[:BINARY_SNIFF]:
        return None
    return data.decode("utf-8", errors="replace")


def _groups(sizes: dict[str, int]) -> Iterator[list[str]]:
    """These nodes' ids, a few MiB of their text at a time (a larger node alone)."""
    group: list[str] = []
    budget = 0
    for node_id, size in sizes.items():
        if group and budget + size > BYTES_PER_READ:
            yield group
            group, budget = [], 0
        group.append(node_id)
        budget += size
    if group:
        yield group


def _texts(node_ids: list[str]) -> dict[str, str]:
    """These nodes' contents as text, each cut to MEMSITE_INDEX_MAX_BYTES by the database;
    binary contents are left out."""
    piece = Substr("data", 1, settings.MEMSITE_INDEX_MAX_BYTES, output_field=BinaryField())
    texts = {}
    for node_id, data in NodeContent.objects.filter(node_id__in=node_ids).values_list("node_id", piece):
        text = content_text(bytes(data))
        if text is not None:
            texts[node_id] = text
    return texts


def _old_passages(node_ids: list[str]) -> dict[str, list[tuple]]:
    """(id, seq, start, end, text, date) of these nodes' content passages, by node; no vectors."""
    old: dict[str, list[tuple]] = {}
    rows = Passage.objects.filter(node_id__in=node_ids, kind=Passage.Kind.CONTENT).order_by("node_id", "seq")
    for node_id, *row in rows.values_list("node_id", "id", "seq", "start", "end", "text", "date"):
        old.setdefault(node_id, []).append(tuple(row))
    return old


def chunks(ids: list, size: int = IDS_PER_QUERY) -> Iterator[list]:
    """`ids` a query's worth at a time."""
    for at in range(0, len(ids), size):
        yield ids[at : at + size]


PASSAGE_COLUMNS = ("node", "seq", "kind", "start", "end", "text", "vector", "embedded_at", "date")
PASSAGE_TYPES = ("text", "int4", "text", "int4", "int4", "text", "bytea", "timestamptz", "date")
# Above any passage's place (a node's text is at most a few million characters). The passages of
# a node that move or come new are written here first and brought down once its others are
# gone, so that no two of them ever hold one place, as the unique (node, seq) forbids.
SEQ_SHIFT = 1 << 30
CONTENT = Passage.Kind.CONTENT.value


def index_nodes(node_ids: Collection[str], *, labels_only: bool = False) -> int:
    """Bring the passages of these nodes in step with their rows, in the caller's transaction
    (with `labels_only`, just their name and description). A passage whose text is unchanged
    stays, its id and vector with it (moved if its place changed): appending to a long document
    writes only what is new, and nothing is embedded again. Contents are read and cut a few MiB
    at a time. Each passage is dated (docs/retrieval.md, "Time"): a node whose date changed
    (its own, or its description's) has its content passages dated again, `labels_only` or not.
    Returns how many passages were written anew."""
    written = 0
    for chunk in chunks(list(dict.fromkeys(node_ids)), NODES_PER_QUERY):
        nodes = list(
            Node.objects.filter(pk__in=chunk).values_list(
                "id", "name", "description", "type", "content__size", "date", "description_auto"
            )
        )
        dated = _node_dates(nodes)
        labels_written, redated = _index_labels(nodes, dated)
        written += labels_written
        if not labels_only or redated:
            written += _index_contents([row for row in nodes if not labels_only or row[0] in redated], dated)
    if written and settings.MEMSITE_EMBEDDINGS != "off":
        from memory.tasks import index_embed

        publish_on_commit(index_embed)
    return written


def _node_dates(nodes: list[tuple]) -> dict[str, date | None]:
    """Each node's date (`memory.logic.dates.document_date`): its own, else its description's,
    else its text's first lines', read (their first BINARY_SNIFF bytes) only for the nodes that
    need them. A description memsite wrote is not read: it repeats the text, and may carry a date
    said anywhere in it rather than its first lines'."""
    dated = {row[0]: document_date(given=row[5], description="" if row[6] else row[2], text="") for row in nodes}
    unread = [row[0] for row in nodes if dated[row[0]] is None and row[4]]
    first_bytes = Substr("data", 1, BINARY_SNIFF, output_field=BinaryField())
    for node_id, data in NodeContent.objects.filter(node_id__in=unread).values_list("node_id", first_bytes):
        text = content_text(bytes(data))
        dated[node_id] = document_date(given=None, description="", text=text) if text else None
    return dated


def _index_labels(nodes: list[tuple], dated: dict[str, date | None]) -> tuple[int, set[str]]:
    """Each node's name and description as its passage 0, written anew only where it changed,
    dated as its node. Returns how many were written, and the nodes whose date changed."""
    old = {
        node_id: (pk, text, day)
        for node_id, pk, text, day in Passage.objects.filter(
            node_id__in=[row[0] for row in nodes], kind=Passage.Kind.LABEL
        ).values_list("node_id", "id", "text", "date")
    }
    rows, redated = [], set()
    for node_id, name, description, *_ in nodes:
        text, day = label(name, description), dated[node_id]
        before = old.get(node_id)
        if before is None or before[1] != text:
            rows.append((node_id, 0, Passage.Kind.LABEL.value, 0, 0, text, None, None, day))
        if before is not None and before[2] != day:
            redated.add(node_id)
    Passage.objects.filter(pk__in=[old[row[0]][0] for row in rows if row[0] in old]).delete()
    insert_rows(Passage, PASSAGE_COLUMNS, rows, types=PASSAGE_TYPES)
    rewritten = {row[0] for row in rows}
    _move([(0, 0, 0, dated[node_id], old[node_id][0]) for node_id in redated - rewritten])
    return len(rows), redated


def _index_contents(nodes: list[tuple], dated: dict[str, date | None]) -> int:
    """The content passages of these nodes, those of a few MiB of text at a time: each node's
    text now, and the text of its passages before."""
    limit = settings.MEMSITE_INDEX_MAX_BYTES
    readable = {
        node_id: min(size, limit)
        for node_id, _, _, type_name, size, *_ in nodes
        if size and get_type(type_name).content is not ContentKind.NONE
    }
    indexed = (
        Passage.objects.filter(node_id__in=[row[0] for row in nodes], kind=Passage.Kind.CONTENT)
        .values("node_id")
        .annotate(chars=Sum(Length("text")))
        .values_list("node_id", "chars")
    )
    sizes = dict.fromkeys(readable, 0)
    for node_id, chars in indexed:
        sizes[node_id] = chars
    writer = _ContentWriter()
    for group in _groups({node_id: size + readable.get(node_id, 0) for node_id, size in sizes.items()}):
        texts = _texts([node_id for node_id in group if node_id in readable])
        old = _old_passages(group) if any(sizes[node_id] for node_id in group) else {}
        for node_id in group:
            writer.node(node_id, texts.get(node_id), old.get(node_id, []), start_date=dated[node_id])
    writer.flush()
    return writer.written


class _ContentWriter:
    """One pass's writes of content passages, batched across nodes: rows new, rows moved."""

    def __init__(self) -> None:
        self.new: list[tuple] = []
        self.moved: list[tuple] = []
        self.written = 0

    def node(self, node_id: str, text: str | None, old: list[tuple], *, start_date: date | None) -> None:
        """Passages for `text` (None: none), keeping those of `old` whose text is in it, each
        dated by the last dated line above it, or `start_date` (the node's) above the first: a
        kept passage whose date changed (a dated line above it came or went) is dated again."""
        kept: dict[str, deque[tuple]] = {}
        for pk, seq, start, end, passage_text, day in old:
            kept.setdefault(passage_text, deque()).append((pk, seq, start, end, day))
        shift = SEQ_SHIFT if old else 0
        shifted = False
        timeline = Timeline(text or "", start_date=start_date)
        for seq, piece in enumerate(cut(text) if text is not None else (), start=1):
            same = kept.get(piece.text)
            match = same.popleft() if same else None
            day = timeline.at(piece.start)
            if match is None:
                self.new.append((node_id, seq + shift, CONTENT, piece.start, piece.end, piece.text, None, None, day))
            elif match[1:] != (seq, piece.start, piece.end, day):
                self.moved.append((seq + shift, piece.start, piece.end, day, match[0]))
            else:
                continue
            shifted = bool(shift)
            # A long text of short lines is many rows: written a batch at a time.
            if len(self.new) + len(self.moved) >= ROWS_PER_WRITE:
                self.flush()
        gone = [row[0] for rows in kept.values() for row in rows]
        for ids in chunks(gone):
            Passage.objects.filter(pk__in=ids).delete()
        if shifted:
            self.flush()
            Passage.objects.filter(node_id=node_id, seq__gte=SEQ_SHIFT).update(seq=F("seq") - SEQ_SHIFT)

    def flush(self) -> None:
        insert_rows(Passage, PASSAGE_COLUMNS, self.new, types=PASSAGE_TYPES)
        _move(self.moved)
        self.written += len(self.new)
        self.new, self.moved = [], []


def _move(rows: list[tuple]) -> None:
    """Kept passages to their new places and dates: (seq, start, end, date, id) each."""
    if not rows:
        return
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # One statement: executemany would be a round trip of the pipeline a row.
            cursor.execute(
                'UPDATE memory_passage AS p SET seq = v.seq, start = v.start, "end" = v.end, date = v.date '
                "FROM unnest(%s::int4[], %s::int4[], %s::int4[], %s::date[], %s::int8[]) "
                'AS v(seq, start, "end", date, id) WHERE p.id = v.id',
                [list(column) for column in zip(*rows, strict=True)],
            )
        else:
            sql = 'UPDATE memory_passage SET seq = %s, start = %s, "end" = %s, date = %s WHERE id = %s'
            cursor.executemany(sql, rows)


EMBED_TASK_PASSAGES = 5_000  # one task's share; it queues the next for the rest
EMBED_LOCK = "memory:index:embedding"
ROUND_PASSAGES = 1_024  # read at once, a batch from each of the spaces that wait


def index_embed_pending(*, limit: int | None = EMBED_TASK_PASSAGES) -> int:
    """Embed what is pending, at most `limit` (None: all), one embedder at a time: a task, or
    `index_rebuild --embed` (the others return at once: the running one goes on until nothing
    is pending). Returns how many passages were embedded."""
    from memory.tasks import index_embed

    def share() -> tuple[int, bool]:
        done = embed_pending(limit=limit)
        return done, done == limit

    return run_alone(lock=EMBED_LOCK, timeout_s=settings.MEMSITE_UPKEEP_LOCK_S, task=index_embed, share=share)


def index_embed_sweep() -> None:
    """Beat's way back for passages whose task was lost."""
    from memory.tasks import index_embed

    if settings.MEMSITE_EMBEDDINGS != "off":
        sweep(Passage.objects.filter(vector__isnull=True), index_embed)


def embed_pending(*, batch: int = 64, limit: int | None = None) -> int:
    """Embed passages that have no vector yet, at most `limit` (all when None), in rounds that
    take up to `batch` of every waiting space's oldest in turn, each space's in a call of its
    own, as memsite's own work there (charged to the space's system budget): a space with a
    large backlog holds up no other space's passages. Each batch is computed outside any
    transaction and saved in a short one; a passage deleted meanwhile is skipped, and those of
    a space whose LLM budget is spent wait for a later pass. Returns how many were embedded."""
    from memory.index.embeddings import embedder

    model = embedder()
    if model is None:
        return 0
    done = 0
    spent: set[int] = set()
    while limit is None or done < limit:
        size = ROUND_PASSAGES if limit is None else min(ROUND_PASSAGES, limit - done)
        waiting = Passage.objects.filter(vector__isnull=True).exclude(node__space_id__in=spent)
        turns = in_turn(waiting, by="node__space_id", order=("id",), each=batch)
        pending = list(turns.values_list("id", "text", "node__space_id")[:size])
        if not pending:
            break
        waiting_spaces = _by_space(pending)
        spaces = Space.objects.in_bulk(waiting_spaces)
        for space_id, rows in waiting_spaces.items():
            try:
                vectors = model.embed([text for _, text in rows], by=system_principal(spaces[space_id]))
            except LLMError as exc:
                if exc.reason is not Reason.BUDGET_SPENT:
                    raise
                spent.add(space_id)  # nothing was sent: the sweep brings these back later
                continue
            _save_vectors([pk for pk, _ in rows], vectors)
            done += len(rows)
    return done


def _by_space(pending: list[tuple[int, str, int]]) -> dict[int, list[tuple[int, str]]]:
    """(id, text) of these passages by their space, oldest first in each."""
    spaces: dict[int, list[tuple[int, str]]] = {}
    for pk, text, space_id in pending:
        spaces.setdefault(space_id, []).append((pk, text))
    return spaces


def _save_vectors(ids: list[int], vectors: np.ndarray) -> None:
    now = timezone.now()
    with transaction.atomic():
        for pk, vector in zip(ids, vectors, strict=True):
            Passage.objects.filter(pk=pk, vector__isnull=True).update(
                vector=np.asarray(vector, dtype=np.float32).tobytes(), embedded_at=now
            )


def index_rebuild() -> int:
    """Every node's passages brought in step with its rows, a transaction per chunk of nodes
    (passages whose text is unchanged kept, vectors and all). Returns the passages written anew."""
    written = 0
    ids = list(Node.objects.order_by("path").values_list("id", flat=True))
    for chunk in chunks(ids, NODES_PER_QUERY):
        with transaction.atomic():
            written += index_nodes(chunk)
    return written
