"""Project archives: import a .tar.gz or .zip into a project root, export one as .tar.gz.

An import reads the archive's list of members first and checks it whole
(`memory.services.archive_formats`): absolute paths, '..', links, devices and anything over the
file-count or size caps refuse the import, and nothing is created. It then creates the tree and
writes the files' data as it reads it, a few MiB at a time, in the same transaction: a member
that cannot be read still leaves nothing, and memory does not grow with the archive. An export
is written as it is read, a few files at a time, so its memory does not grow with the project
either. A file's mode goes from the archive to its node and back into the export.
"""

import tarfile
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from itertools import chain
from typing import BinaryIO, TypeVar

from django.db import transaction

from memory import selectors
from memory.index.writes import index_nodes
from memory.models import Node, NodeContent
from memory.rows import insert_rows
from memory.services.archive_formats import Archive, ArchiveEntry, open_archive
from memory.services.nodes import (
    CONTENT_COLUMNS,
    CONTENT_TYPES,
    NodeSpec,
    User,
    content_values,
    node_bulk_create,
    validate_content,
)
from memory.types import get_type
from memory.validation import fit_name
from memsite.errors import Conflict, InvalidInput
from memsite.names import excerpt


@dataclass(frozen=True)
class ImportResult:
    folders: int
    files: int



class _Folder:
    """A folder of the import being assembled: an existing node or a new spec."""

    def __init__(self, node: Node | None = None, spec: NodeSpec | None = None) -> None:
        self.node = node
        self.spec = spec
        self.folders: dict[str, _Folder] = {}
        self.new_children: list[NodeSpec] = []

    def add(self, spec: NodeSpec) -> None:
        (self.new_children if self.node else self.spec.children).append(spec)


class _ImportPlan:
    """Where an archive's entries go in a project: the folders that exist reused, the new
    folders and the files specified, the files' data left to be read."""

    def __init__(self, project: Node, entries: list[ArchiveEntry]) -> None:
        self.root = _Folder(node=project)
        self.folders = 0
        self.files: list[tuple[ArchiveEntry, NodeSpec]] = []
        self.by_parent: dict[str, dict[str, Node]] = {}
        for node in selectors.node_subtree(node=project, include_self=False).defer("context"):
            self.by_parent.setdefault(node.parent_id, {})[node.name] = node
        for entry in entries:
            parts = entry.path.split("/")
            if entry.size is None:
                self._folder_at(parts)
            else:
                self._add_file(entry, self._folder_at(parts[:-1]), parts[-1])

    def _folder_at(self, parts: list[str]) -> _Folder:
        current = self.root
        for part in parts:
            child = current.folders.get(part)
            if child is None:
                node = self.by_parent.get(current.node.pk, {}).get(part) if current.node else None
                if node is not None and not node.is_folder:
                    raise Conflict(f"The project already has a file named '{part}' where the archive needs a folder.")
                if node is not None:
                    child = _Folder(node=node)
                else:
                    spec = NodeSpec(name=part, type="folder")
                    child = _Folder(spec=spec)
                    current.add(spec)
                    self.folders += 1
                current.folders[part] = child
            current = child
        return current

    def _add_file(self, entry: ArchiveEntry, folder: _Folder, name: str) -> None:
        if folder.node is not None and name in self.by_parent.get(folder.node.pk, {}):
            raise Conflict(f"The project already has {excerpt(entry.path)}.")
        context = {"file_path": entry.path}
        spec = NodeSpec(name=name, type="project_file_bytes", context=context, mode=entry.mode)
        folder.add(spec)
        self.files.append((entry, spec))

    def create_nodes(self, user: User) -> None:
        """Every new node, without its data: each branch under an existing folder at once."""
        pending = [self.root]
        while pending:
            folder = pending.pop()
            if folder.node is not None and folder.new_children:
                node_bulk_create(parent=folder.node, specs=folder.new_children, user=user, defer_content=True)
            pending.extend(child for child in folder.folders.values() if child.node is not None)


# An import holds one group of files' data at a time, a file larger than this alone.
IMPORT_BYTES_PER_WRITE = 8 * 1024 * 1024


@transaction.atomic
def project_import(*, project: Node, archive: BinaryIO, user: User) -> ImportResult:
    """Create the archive's folders and files in the project. Folders that exist already are
    reused; a file whose path exists already is a conflict, and nothing is created. The tree is
    checked and created first; the files' data is then written as it is read, a few MiB at a
    time, in this transaction, so a member that turns out unreadable rolls it all back."""
    if project.type != "project_root_folder":
        raise InvalidInput(f"'{project.name}' is not a project root; archives import only into projects.")
    with open_archive(archive) as opened:
        plan = _ImportPlan(project, opened.entries)
        plan.create_nodes(user)
        _write_contents(opened, plan.files)
    index_nodes([spec.node_id for _, spec in plan.files])
    return ImportResult(folders=plan.folders, files=len(plan.files))


def _write_contents(archive: Archive, files: list[tuple[ArchiveEntry, NodeSpec]]) -> None:
    """Each file's content row, written a group at a time as the data is read. The rows go
    straight to the insert, so that no name holds a group's data while the next is read."""
    for group in _groups_by_size(files, lambda file: file[0].size, IMPORT_BYTES_PER_WRITE):
        insert_rows(
            NodeContent,
            CONTENT_COLUMNS,
            [content_values(spec.node_id, _file_data(archive, entry)) for entry, spec in group],
            types=CONTENT_TYPES,
        )


def _file_data(archive: Archive, entry: ArchiveEntry) -> bytearray:
    data = archive.read(entry)
    validate_content(get_type("project_file_bytes"), data)
    return data


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
