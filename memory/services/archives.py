"""Project archives: import a .tar.gz or .zip into a project root, export one as .tar.gz.
Explained in docs/memory.md."""

import tarfile
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from itertools import chain
from typing import BinaryIO, TypeVar

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from memory import selectors
from memory.index.writes import index_nodes
from memory.models import Node, NodeContent, NodeEvent
from memory.permissions import write_under_require
from memory.rows import insert_rows
from memory.services.archive_formats import Archive, ArchiveEntry, open_archive
from memory.services.archive_plan import FileWrite, ImportMode, ProjectNode, plan_import
from memory.services.descriptions import descriptions_queue
from memory.services.events import Author, author_of, deletions, node_events_record
from memory.services.nodes import (
    CONTENT_COLUMNS,
    CONTENT_TYPES,
    content_values,
    node_bulk_create,
    validate_content,
)
from memory.types import get_type
from memory.validation import fit_name
from memsite.errors import Conflict, InvalidInput
from memsite.names import excerpt
from memsite.spaces.principals import Principal


@dataclass(frozen=True)
class ImportResult:
    folders: int  # created
    files: int  # created
    updated: int = 0  # files whose content or mode changed
    deleted: int = 0  # nodes, those inside deleted folders included
    unchanged: int = 0  # files the archive has as the project held them


# An import holds one group of files' data at a time, a file larger than this alone.
IMPORT_BYTES_PER_WRITE = 8 * 1024 * 1024


@transaction.atomic
def project_import(*, project: Node, archive: BinaryIO, mode: str = ImportMode.FAIL, by: Principal) -> ImportResult:
    """Import the archive into the project in `mode` (`memory.services.archive_plan`): fail adds
    only, merge also updates the project's files, replace makes the project the archive. The
    plan is checked whole before anything is written; the files' data is then written as it is
    read, in this transaction, so a member that turns out unreadable rolls it all back. A token
    limited to a folder imports only into a project under it."""
    if project.type != "project_root_folder":
        raise InvalidInput(f"'{project.name}' is not a project root; archives import only into projects.")
    write_under_require(project, by=by, into=True)  # the files go into it; the project stays
    if mode not in ImportMode.values:
        raise InvalidInput(f"Unknown import mode {excerpt(str(mode))}: use fail, merge or replace.")
    with open_archive(archive) as opened:
        nodes = _project_nodes(project)
        plan = plan_import(project_id=project.pk, nodes=nodes, entries=opened.entries, mode=ImportMode(mode))
        author = author_of(by=by)
        deleted = _delete(plan.deletes, author=author)
        parents = Node.objects.in_bulk([parent_id for parent_id, _ in plan.creates])
        for parent_id, specs in plan.creates:  # in the project, whose place was checked above
            node_bulk_create(parent=parents[parent_id], specs=specs, defer_content=True, by=by)
        written = _write_contents(opened, plan.files)
    updates = [(file.entry, file.node) for file in plan.files if file.node is not None]
    updated = _mark_updated(updates, set(written), author=author)
    index_nodes(written)
    descriptions_queue([node_id for node_id in written if node_id in updated])
    created = len(plan.files) - len(updates)
    return ImportResult(
        folders=plan.folders,
        files=created,
        updated=len(updated),
        deleted=deleted,
        unchanged=len(updates) - len(updated),
    )


def _project_nodes(project: Node) -> list[ProjectNode]:
    """The project's nodes, but its own, locked until the import ends: a write to one of them
    waits for it, and so does a create or a move into one of its folders."""
    rows = (
        selectors.node_subtree(node=project)
        .select_for_update(of=("self",))
        .values_list(
            "pk",
            "parent_id",
            "name",
            "is_folder",
            "type",
            "context__file_path",
            "content__size",
            "content__sha256",
            "mode",
        )
    )
    return [
        ProjectNode(pk, parent_id, name, is_folder, node_type, file_path, size=size or 0, sha256=sha256, mode=mode)
        for pk, parent_id, name, is_folder, node_type, file_path, size, sha256, mode in rows
        if pk != project.pk
    ]


def _delete(node_ids: list[str], *, author: Author) -> int:
    """Delete these nodes with their branches; how many nodes that was. Their content and
    passages go with them; their events stay."""
    if not node_ids:
        return 0
    node_events_record(NodeEvent.Action.DELETE, deletions(node_ids), author=author)
    _deleted, per_model = Node.objects.filter(pk__in=node_ids).delete()
    return per_model.get(Node._meta.label, 0)


def _write_contents(archive: Archive, files: list[FileWrite]) -> list[str]:
    """Each file's content row, written a group at a time as the data is read; the ids of the
    files written. An updated file whose data is what it held is left as it is."""
    written: list[str] = []
    for group in _groups_by_size(files, lambda file: file.entry.size or 0, IMPORT_BYTES_PER_WRITE):
        written += _write_group(archive, group)
    return written


def _write_group(archive: Archive, group: list[FileWrite]) -> list[str]:
    # Returning lets go of the group's data before the next is read.
    held = {file.node.id: file.node.sha256 for file in group if file.node is not None}
    rows = [content_values(file.node_id, _file_data(archive, file.entry)) for file in group]
    rows = [row for row in rows if held.get(row[0]) != row[3]]  # [3]: the sha256
    NodeContent.objects.filter(node_id__in=[row[0] for row in rows if row[0] in held]).delete()
    insert_rows(NodeContent, CONTENT_COLUMNS, rows, types=CONTENT_TYPES)
    return [row[0] for row in rows]


def _file_data(archive: Archive, entry: ArchiveEntry) -> bytearray:
    data = archive.read(entry)
    validate_content(get_type("project_file_bytes"), data)
    return data


def _mark_updated(updates: list[tuple[ArchiveEntry, ProjectNode]], written: set[str], *, author: Author) -> set[str]:
    """Give a new version, and the archive's mode, to each updated file whose content or mode
    changed, and record it; their ids. A file the archive holds as it was keeps its version
    (and ETag)."""
    by_mode: dict[int | None, list[str]] = {}
    for entry, node in updates:
        if node.id in written or entry.mode != node.mode:
            by_mode.setdefault(entry.mode, []).append(node.id)
    now = timezone.now()
    for mode, node_ids in by_mode.items():
        Node.objects.filter(pk__in=node_ids).update(mode=mode, version=F("version") + 1, updated_at=now)
    updated = {node_id for node_ids in by_mode.values() for node_id in node_ids}
    versions = list(Node.objects.filter(pk__in=updated).values_list("pk", "version"))
    # A file whose data was written is a content write; one whose mode alone changed, an update.
    for action, wrote in ((NodeEvent.Action.CONTENT, True), (NodeEvent.Action.UPDATE, False)):
        changes = [(pk, version - 1, version) for pk, version in versions if (pk in written) == wrote]
        node_events_record(action, changes, author=author)
    return updated


# An export reads the files' names and sizes a page at a time, then their contents a few at a
# time, each in a short query of its own: a cursor held open while a slow client downloads would
# hold the database too. A file larger than a group is read a slice at a time, cut by the
# database, so no file is held whole. Pages follow the tree path.
EXPORT_FILES_PER_READ = 200
EXPORT_BYTES_PER_READ = 2 * 1024 * 1024
EXPORT_READ_SLICE_BYTES = 1024 * 1024  # of a larger file's content read at a time
EXPORT_SLICE_BYTES = 256 * 1024  # of a file's content compressed at a time
EXPORT_CHUNK_BYTES = 64 * 1024  # the least compressed output sent at a time

# A file's tar header, and its content in the pieces it is read in.
ExportFile = tuple[tarfile.TarInfo, Iterable[bytes]]


def project_export(*, project: Node) -> Iterator[bytes]:
    """The project's files as a .tar.gz, each at its `file_path`, in tree order: chunks made as
    they are sent, so memory stays flat whatever the project's size or its files' sizes. A file
    changed or moved while the export runs is in it as it was or as it is; a large file changed
    while its own slices are being sent ends the download short, so the archive reads as cut
    rather than holding a mix of two versions. A name over 255 bytes, stored before that limit,
    is shortened (`fit_name`) so that the archive extracts."""
    if project.type != "project_root_folder":
        raise InvalidInput(f"'{project.name}' is not a project root; only projects export as archives.")
    return _gzipped(_tar_stream(_export_files(project)))


def _export_files(project: Node) -> Iterator[ExportFile]:
    after = ""
    while True:
        page = list(
            selectors.project_files(project=project)
            .filter(path__gt=after)
            .values_list("pk", "path", "context__file_path", "updated_at", "mode", "content__size")[
                :EXPORT_FILES_PER_READ
            ]
        )
        if not page:
            return
        after = page[-1][1]
        for group in _groups_by_size(page, lambda row: row[-1] or 0, EXPORT_BYTES_PER_READ):
            # The size bound holds even for a file grown since the page was read: it is left to
            # the slices, like one alone over the bound.
            contents = dict(
                NodeContent.objects.filter(
                    node_id__in=[row[0] for row in group], size__lte=EXPORT_BYTES_PER_READ
                ).values_list("node_id", "data")
            )
            for node_id, _, file_path, updated_at, mode, _ in group:
                info = _tar_info(file_path, updated_at=updated_at, mode=mode)
                data = contents.pop(node_id, None)
                if data is not None:
                    info.size = len(data)
                    yield info, (data,)
                # Not in the group's read: larger than a group, or deleted since (None).
                elif file := _sliced_file(node_id, file_path, info):
                    yield file


def _sliced_file(node_id: str, file_path: str, info: tarfile.TarInfo) -> ExportFile | None:
    """A file read a slice at a time, as its content is when its first slice is read."""
    first = selectors.node_content_slice(node_id=node_id, start=0, length=EXPORT_READ_SLICE_BYTES)
    if first is None:
        return None
    info.size = first.size
    rest = _slices_from(node_id, file_path, start=len(first.data), size=first.size, sha256=first.sha256)
    # A tuple, not this frame, holds the first slice: it is let go once sent.
    return info, chain((first.data,), rest)


def _slices_from(node_id: str, file_path: str, *, start: int, size: int, sha256: str) -> Iterator[bytes]:
    """The content's slices from `start`, each read only while it is still the content whose
    `sha256` the header's size came from; Conflict if it changed, as the header is sent."""
    while start < size:
        piece = selectors.node_content_slice(
            node_id=node_id, start=start, length=EXPORT_READ_SLICE_BYTES, sha256=sha256
        )
        if piece is None or not piece.data:
            raise Conflict(f"{excerpt(file_path)} changed while it was being exported; export again.")
        start += len(piece.data)
        yield piece.data


Item = TypeVar("Item")


def _groups_by_size(items: Iterable[Item], size: Callable[[Item], int], limit: int) -> Iterator[list[Item]]:
    """Consecutive items whose sizes add up to at most `limit`; an item larger than that alone."""
    group: list[Item] = []
    total = 0
    for item in items:
        if group and total + size(item) > limit:
            yield group
            group, total = [], 0
        group.append(item)
        total += size(item)
    if group:
        yield group


def _tar_info(file_path: str, *, updated_at: datetime, mode: int) -> tarfile.TarInfo:
    """A file's header, but its size."""
    info = tarfile.TarInfo(name="/".join(fit_name(part) for part in file_path.split("/")))
    info.mode = mode
    info.mtime = int(updated_at.timestamp())
    return info


def _tar_stream(files: Iterator[ExportFile]) -> Iterator[bytes | memoryview]:
    """A tar file in pieces, as tarfile writes it: each header (PAX where a name needs it), the
    content padded to whole blocks, two zero blocks at the end, and the last record filled."""
    written = 0
    for info, pieces in files:
        header = info.tobuf(tarfile.PAX_FORMAT, "utf-8", "surrogateescape")
        yield header
        for piece in pieces:
            content = memoryview(piece)
            for start in range(0, len(content), EXPORT_SLICE_BYTES):
                yield content[start : start + EXPORT_SLICE_BYTES]
        padding = -info.size % tarfile.BLOCKSIZE
        yield tarfile.NUL * padding
        written += len(header) + info.size + padding
    end = 2 * tarfile.BLOCKSIZE
    yield tarfile.NUL * (end + -(written + end) % tarfile.RECORDSIZE)


def _gzipped(pieces: Iterator[bytes | memoryview]) -> Iterator[bytes]:
    compressor = zlib.compressobj(wbits=16 + zlib.MAX_WBITS)  # 16+: a gzip stream, not zlib's
    pending = bytearray()
    for piece in pieces:
        pending += compressor.compress(piece)
        if len(pending) >= EXPORT_CHUNK_BYTES:
            yield bytes(pending)
            pending.clear()
    pending += compressor.flush()
    yield bytes(pending)
