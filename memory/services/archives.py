"""Project archives: import a .tar.gz or .zip into a project root, export one as .tar.gz.

An import reads the archive's list of members first and checks it whole: absolute paths, '..',
links, devices and anything over the file-count or size caps refuse the import, and nothing is
created. It then creates the tree and writes the files' data as it reads it, a few MiB at a
time, in the same transaction: a member that cannot be read still leaves nothing, and memory
does not grow with the archive. The upload is read where it lies (Django spools a large one to
disk), never whole. Names are taken in NFC, as the tree stores them (macOS tools write NFD). An
export is written as it is read, a few files at a time, so its memory does not grow with the
project either.
"""

import os
import stat
import struct
import tarfile
import unicodedata
import zipfile
import zlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from itertools import chain
from typing import BinaryIO, ClassVar, TypeVar

from django.conf import settings
from django.db import transaction

from memory import selectors
from memory.index.writes import index_nodes
from memory.models import Node, NodeContent
from memory.rows import insert_rows
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
from memory.validation import fit_name, normalize_relative_path
from memsite.errors import Conflict, InvalidInput, TooLarge
from memsite.names import excerpt

GZIP_MAGIC = b"\x1f\x8b"
ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")


@dataclass(frozen=True)
class ArchiveEntry:
    """A member as the archive's list declares it; its data is read later, through `member`."""

    path: str  # normalized, relative
    size: int | None  # the declared size; None for a directory
    member: tarfile.TarInfo | zipfile.ZipInfo = field(repr=False, compare=False)


@dataclass(frozen=True)
class ImportResult:
    folders: int
    files: int


class _Budget:
    """Counts entries (files and folders alike) and unpacked bytes against the caps, so that
    neither a flood of tiny members nor one huge member gets through."""

    def __init__(self) -> None:
        self.entries = 0
        self.bytes = 0

    def add_entry(self, size: int = 0) -> None:
        # A PAX header sets a member's size after its own header was checked.
        if size < 0:
            raise InvalidInput("A file in the archive has a negative size.")
        self.entries += 1
        if self.entries > settings.MEMSITE_ARCHIVE_MAX_FILES:
            raise TooLarge(f"The archive has more than {settings.MEMSITE_ARCHIVE_MAX_FILES} files and folders.")
        if size > settings.MEMSITE_MAX_CONTENT_BYTES:
            raise TooLarge(
                f"A file in the archive is {size} bytes; the limit is {settings.MEMSITE_MAX_CONTENT_BYTES}."
            )
        self.bytes += size
        if self.bytes > settings.MEMSITE_ARCHIVE_MAX_UNPACKED_BYTES:
            raise TooLarge(f"The archive unpacks to more than {settings.MEMSITE_ARCHIVE_MAX_UNPACKED_BYTES} bytes.")


def _member_path(raw: str) -> str | None:
    """The member's clean relative path, in NFC; None for the archive's own root (`./`)."""
    if raw.rstrip("/") in (".", ""):
        return None
    try:
        return normalize_relative_path(unicodedata.normalize("NFC", raw.rstrip("/")))
    except ValueError as exc:
        raise InvalidInput(f"The archive path {excerpt(raw)} is refused: it {exc}.") from None


# tarfile reads a GNU long name or link (`L`, `K`) and a PAX header (`x`, `g`) whole, whatever
# size the header claims, before any cap can look at the member they describe. A path is at
# most 1,024 characters; a PAX header also carries times and extended attributes.
EXTENDED_HEADER_MAX_BYTES = 64 * 1024
EXTENDED_HEADERS_MAX_BYTES = 2 * 1024 * 1024  # all of one archive's
EXTENDED_HEADERS_PER_MEMBER = 4  # a long name, a long link, a PAX header and a global one
# Every PAX header gets a copy of the global attributes: many of them would be copied per member.
GLOBAL_ATTRIBUTES_MAX = 32
EXTENDED_TYPES = frozenset(
    {tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK, tarfile.XHDTYPE, tarfile.XGLTYPE, tarfile.SOLARIS_XHDTYPE}
)


class _BoundedTarInfo(tarfile.TarInfo):
    """A member header checked against the bounds before tarfile reads what it announces.
    `_proc_member` is the hook tarfile's source leaves for subclasses."""

    def _proc_member(self, archive: "_BoundedTarFile") -> tarfile.TarInfo:
        archive.check_header(self)
        return super()._proc_member(archive)

    def _refuse_sparse(self, *args: object) -> None:
        # The sparse maps are read into lists as long as the archive says, a few bytes per item.
        raise InvalidInput("The archive holds a sparse file; sparse files are refused.")

    _proc_sparse = _proc_gnusparse_00 = _proc_gnusparse_01 = _proc_gnusparse_10 = _refuse_sparse


class _BoundedTarFile(tarfile.TarFile):
    tarinfo = _BoundedTarInfo

    def __init__(self, *args, **kwargs) -> None:
        # Set before tarfile's own __init__, which reads the first member.
        self.extended_bytes = 0
        self.extended_in_a_row = 0
        super().__init__(*args, **kwargs)

    def check_header(self, info: tarfile.TarInfo) -> None:
        if info.size < 0:
            raise InvalidInput("The file is not a readable .tar.gz archive: a member has a negative size.")
        if len(self.pax_headers) > GLOBAL_ATTRIBUTES_MAX:
            raise InvalidInput(f"The archive's global PAX header has more than {GLOBAL_ATTRIBUTES_MAX} attributes.")
        if info.type not in EXTENDED_TYPES:
            self.extended_in_a_row = 0
            return
        self.extended_in_a_row += 1
        self.extended_bytes += info.size
        if info.size > EXTENDED_HEADER_MAX_BYTES:
            raise InvalidInput(
                f"The archive has a long-name or PAX header of {info.size} bytes; "
                f"the limit is {EXTENDED_HEADER_MAX_BYTES}."
            )
        if self.extended_bytes > EXTENDED_HEADERS_MAX_BYTES:
            raise InvalidInput(
                f"The archive's long-name and PAX headers are over {EXTENDED_HEADERS_MAX_BYTES} bytes in all."
            )
        if self.extended_in_a_row > EXTENDED_HEADERS_PER_MEMBER:
            raise InvalidInput(
                f"The archive has more than {EXTENDED_HEADERS_PER_MEMBER} long-name or PAX headers in a row."
            )


def _unreadable(kind: str, exc: Exception) -> InvalidInput:
    # zipfile's and tarfile's messages may quote member names, of any length.
    reason = str(exc)
    if len(reason) > 200:
        reason = reason[:200] + "..."
    return InvalidInput(f"The file is not a readable {kind} archive: {reason}.")


def _zip_name(info: zipfile.ZipInfo) -> str:
    """The member's name. Without the UTF-8 flag zipfile decodes a name as cp437, while macOS
    and most tools today write UTF-8 there without setting the flag: a name that is valid
    UTF-8 is taken as such."""
    if info.flag_bits & 0x800:
        return info.filename
    try:
        return info.filename.encode("cp437").decode("utf-8")
    except UnicodeError:
        return info.filename


# zipfile reads the central directory whole, then makes an object of every entry (its name,
# extra field and comment copied) before any cap can count them: a directory of empty names
# costs six times its size, one of long comments twice. Its size is bounded per entry the caps
# allow: a header of 46 bytes, a path of several hundred and the usual extra fields.
ZIP_DIRECTORY_BYTES_PER_ENTRY = 800
ZIP_CENTRAL_HEADER = 46  # bytes before an entry's name, extra field and comment
ZIP_NAME_SIZES = struct.Struct("<HHH")  # their lengths, 28 bytes into the header


def _check_zip_directory(upload: BinaryIO) -> None:
    """Refuse a zip whose central directory holds more entries than the cap, or more bytes than
    they may take, before zipfile reads it. The entries are counted by walking their headers in
    the upload as zipfile does, without making objects; a damaged directory is left for zipfile
    to refuse."""
    try:
        end = zipfile._EndRecData(upload)  # the end record, as zipfile finds it
    except (OSError, zipfile.BadZipFile, struct.error):
        return
    if end is None:
        return
    size = end[zipfile._ECD_SIZE]
    position = end[zipfile._ECD_LOCATION] - size  # the directory ends where the end record starts
    if end[zipfile._ECD_SIGNATURE] == zipfile.stringEndArchive64:
        position -= zipfile.sizeEndCentDir64 + zipfile.sizeEndCentDir64Locator
    stop, count = position + size, 0
    while 0 <= position < stop:
        count += 1
        if count > settings.MEMSITE_ARCHIVE_MAX_FILES:
            raise TooLarge(f"The archive has more than {settings.MEMSITE_ARCHIVE_MAX_FILES} files and folders.")
        upload.seek(position + 28)
        lengths = upload.read(ZIP_NAME_SIZES.size)
        if len(lengths) < ZIP_NAME_SIZES.size:
            break
        position += ZIP_CENTRAL_HEADER + sum(ZIP_NAME_SIZES.unpack(lengths))
    limit = settings.MEMSITE_ARCHIVE_MAX_FILES * ZIP_DIRECTORY_BYTES_PER_ENTRY
    if size > limit:
        raise TooLarge(f"The archive's list of members (its zip directory) is {size} bytes; the limit is {limit}.")


# Of a member's data read at a time. A slice is held three times over while it is read: as
# decompressed, as joined, and as copied into place.
READ_SLICE_BYTES = 256 * 1024


class _Archive(ABC):
    """An archive opened from an upload. `list_entries` reads and checks its whole list of
    members before any data is read; `read` then gives each file's data, best in the list's
    order (a .tar.gz is read forward: going back starts it over)."""

    kind: ClassVar[str]
    errors: ClassVar[tuple[type[Exception], ...]]  # what the format's module raises on bad input

    def __init__(self, upload: BinaryIO) -> None:
        self.entries: list[ArchiveEntry] = []
        with self.readable():
            self.file = self._open(upload)

    @contextmanager
    def readable(self) -> Iterator[None]:
        try:
            yield
        except self.errors as exc:
            raise _unreadable(self.kind, exc) from None

    def list_entries(self) -> None:
        budget = _Budget()
        with self.readable():
            for name, size, member in self._members():
                path = _member_path(name)
                budget.add_entry(size or 0)
                if path is not None:
                    self.entries.append(ArchiveEntry(path=path, size=size, member=member))
        _check_paths(self.entries)

    def read(self, entry: ArchiveEntry) -> bytearray:
        """The file's data, refused unless it is exactly as long as declared: a member that
        holds more is read no further than one byte past that."""
        with self.readable(), self._open_member(entry.member) as handle:
            data = _read_exactly(handle, entry.size)
        if data is None:
            raise InvalidInput(
                f"The archive member {excerpt(entry.path)} is truncated, corrupt or longer than it declares."
            )
        return data

    def close(self) -> None:
        self.file.close()

    @abstractmethod
    def _open(self, upload: BinaryIO) -> tarfile.TarFile | zipfile.ZipFile: ...

    @abstractmethod
    def _members(self) -> Iterator[tuple[str, int | None, tarfile.TarInfo | zipfile.ZipInfo]]:
        """Each member's raw name, declared size (None for a folder) and itself, in order."""

    @abstractmethod
    def _open_member(self, member: tarfile.TarInfo | zipfile.ZipInfo) -> BinaryIO: ...


def _link_refused(name: str) -> InvalidInput:
    return InvalidInput(f"The archive member {excerpt(name)} is a link or device; only files and folders are accepted.")


class _TarArchive(_Archive):
    kind = ".tar.gz"
    errors = (tarfile.TarError, EOFError, OSError, zlib.error)

    def _open(self, upload: BinaryIO) -> tarfile.TarFile:
        return _BoundedTarFile.open(fileobj=upload, mode="r:gz")

    def _members(self) -> Iterator[tuple[str, int | None, tarfile.TarInfo]]:
        for member in self.file:
            if not (member.isfile() or member.isdir()):
                raise _link_refused(member.name)
            yield member.name, member.size if member.isfile() else None, member

    def _open_member(self, member: tarfile.TarInfo) -> BinaryIO:
        return self.file.extractfile(member)


class _ZipArchive(_Archive):
    kind = ".zip"
    errors = (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, NotImplementedError, zlib.error)

    def _open(self, upload: BinaryIO) -> zipfile.ZipFile:
        _check_zip_directory(upload)
        return zipfile.ZipFile(upload)

    def _members(self) -> Iterator[tuple[str, int | None, zipfile.ZipInfo]]:
        for info in self.file.infolist():
            # Unix zips keep the file type in the high bits; others leave them zero.
            if stat.S_IFMT(info.external_attr >> 16) not in (0, stat.S_IFREG, stat.S_IFDIR):
                raise _link_refused(info.filename)
            if info.flag_bits & 0x1:
                raise InvalidInput(f"The archive member {excerpt(info.filename)} is encrypted; encrypted archives are refused.")
            yield _zip_name(info), None if info.is_dir() else info.file_size, info

    def _open_member(self, member: zipfile.ZipInfo) -> BinaryIO:
        return self.file.open(member)


def _read_exactly(handle: BinaryIO, size: int) -> bytearray | None:
    """`size` bytes of `handle`, which must then be at its end; None when it holds fewer or
    more. They are read a slice at a time into one buffer, where a whole read would hold two or
    three copies at once, and one byte past `size` is the most asked for."""
    data = bytearray(size)
    view = memoryview(data)
    filled = 0
    while filled < size:
        count = handle.readinto(view[filled : filled + READ_SLICE_BYTES])
        if not count:
            return None
        filled += count
    return None if handle.read(1) else data


def _check_paths(entries: list[ArchiveEntry]) -> None:
    """No path twice (but a folder's), and no file used as a folder."""
    seen: dict[str, bool] = {}
    for entry in entries:
        is_dir = entry.size is None
        if entry.path in seen and not (is_dir and seen[entry.path]):
            raise InvalidInput(
                f"The archive holds {excerpt(entry.path)} twice (names that differ only in their "
                "Unicode normalization are the same name)."
            )
        seen[entry.path] = is_dir
    for path in seen:
        parent = path.rpartition("/")[0]
        while parent:
            if seen.get(parent) is False:
                raise InvalidInput(f"The archive uses the file '{parent}' as a folder.")
            parent = parent.rpartition("/")[0]


@contextmanager
def open_archive(upload: BinaryIO) -> Iterator[_Archive]:
    """The .tar.gz or .zip in a seekable upload, its members listed and checked against every
    rule and cap. The upload is measured, not read, against the size cap."""
    limit = settings.MEMSITE_ARCHIVE_MAX_BYTES
    upload.seek(0, os.SEEK_END)
    if upload.tell() > limit:
        raise TooLarge(f"The archive is over {limit} bytes; the limit is {limit} bytes.")
    upload.seek(0)
    magic = upload.read(4)
    upload.seek(0)
    if magic.startswith(GZIP_MAGIC):
        archive_class: type[_Archive] = _TarArchive
    elif magic.startswith(ZIP_MAGICS):
        archive_class = _ZipArchive
    else:
        raise InvalidInput("The file is neither a .tar.gz nor a .zip archive.")
    with closing(archive_class(upload)) as archive:
        archive.list_entries()
        yield archive


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
        spec = NodeSpec(name=name, type="project_file_bytes", context={"file_path": entry.path})
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


def _write_contents(archive: _Archive, files: list[tuple[ArchiveEntry, NodeSpec]]) -> None:
    """Each file's content row, written a group at a time as the data is read. The rows go
    straight to the insert, so that no name holds a group's data while the next is read."""
    for group in _groups_by_size(files, lambda file: file[0].size, IMPORT_BYTES_PER_WRITE):
        insert_rows(
            NodeContent,
            CONTENT_COLUMNS,
            [content_values(spec.node_id, _file_data(archive, entry)) for entry, spec in group],
            types=CONTENT_TYPES,
        )


def _file_data(archive: _Archive, entry: ArchiveEntry) -> bytearray:
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
            .values_list("pk", "path", "context__file_path", "updated_at", "content__size")[:EXPORT_FILES_PER_READ]
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
            for node_id, _, file_path, updated_at, _ in group:
                data = contents.pop(node_id, None)
                if data is not None:
                    yield _tar_info(file_path, size=len(data), updated_at=updated_at), (data,)
                # Not in the group's read: larger than a group, or deleted since (None).
                elif file := _sliced_file(node_id, file_path, updated_at):
                    yield file


def _sliced_file(node_id: str, file_path: str, updated_at: datetime) -> ExportFile | None:
    """A file read a slice at a time, as its content is when its first slice is read."""
    first = selectors.node_content_slice(node_id=node_id, start=0, length=EXPORT_READ_SLICE_BYTES)
    if first is None:
        return None
    rest = _slices_from(node_id, file_path, start=len(first.data), size=first.size, sha256=first.sha256)
    # A tuple, not this frame, holds the first slice: it is let go once sent.
    return _tar_info(file_path, size=first.size, updated_at=updated_at), chain((first.data,), rest)


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


def _tar_info(file_path: str, *, size: int, updated_at: datetime) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name="/".join(fit_name(part) for part in file_path.split("/")))
    info.size = size
    info.mode = 0o644
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
