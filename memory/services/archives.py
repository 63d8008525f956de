"""Project archives: import a .tar.gz or .zip into a project root, export one as .tar.gz.

An archive is read whole and checked before anything is written: absolute paths, '..', links,
devices and anything over the file-count or size caps refuse the import, and nothing is created.
Names are taken in NFC, as the tree stores them (macOS tools write NFD). An export is written as
it is read, a few files at a time, so its memory does not grow with the project.
"""

import io
import stat
import struct
import tarfile
import unicodedata
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import BinaryIO

from django.conf import settings
from django.db import transaction

from memory import selectors
from memory.models import Node, NodeContent
from memory.services.nodes import NodeSpec, User, node_bulk_create
from memory.validation import fit_name, normalize_relative_path
from memsite.errors import Conflict, InvalidInput, TooLarge
from memsite.names import excerpt

GZIP_MAGIC = b"\x1f\x8b"
ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")


@dataclass(frozen=True)
class ArchiveEntry:
    path: str  # normalized, relative
    data: bytes | None  # None for a directory


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

    def remaining_for_one_file(self) -> int:
        return min(
            settings.MEMSITE_MAX_CONTENT_BYTES,
            settings.MEMSITE_ARCHIVE_MAX_UNPACKED_BYTES - self.bytes,
        )


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


def _read_tar(blob: bytes) -> list[ArchiveEntry]:
    budget = _Budget()
    entries = []
    try:
        with _BoundedTarFile.open(fileobj=io.BytesIO(blob), mode="r:gz") as archive:
            for member in archive:
                if not (member.isfile() or member.isdir()):
                    raise InvalidInput(
                        f"The archive member {excerpt(member.name)} is a link or device; only files and folders are accepted."
                    )
                path = _member_path(member.name)
                budget.add_entry(member.size if member.isfile() else 0)
                if path is None:
                    continue
                if member.isdir():
                    entries.append(ArchiveEntry(path=path, data=None))
                    continue
                data = archive.extractfile(member).read(member.size + 1)
                if len(data) != member.size:
                    raise InvalidInput(f"The archive member {excerpt(member.name)} is truncated or corrupt.")
                entries.append(ArchiveEntry(path=path, data=data))
    except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
        raise _unreadable(".tar.gz", exc) from None
    return entries


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


ZIP_CENTRAL_HEADER = 46  # bytes before an entry's name, extra field and comment
ZIP_NAME_SIZES = struct.Struct("<HHH")  # their lengths, 28 bytes into the header


def _count_zip_entries(blob: bytes) -> None:
    """Refuse a zip whose central directory holds more entries than the cap. zipfile makes an
    object of each entry before any cap can count them (a directory of empty names costs six
    times its size), so they are counted first, walking the directory as zipfile does. A
    damaged directory is left for zipfile to refuse."""
    try:
        end = zipfile._EndRecData(io.BytesIO(blob))  # the end record, as zipfile finds it
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
        try:
            lengths = ZIP_NAME_SIZES.unpack_from(blob, position + 28)
        except struct.error:
            return
        position += ZIP_CENTRAL_HEADER + sum(lengths)


def _read_zip(blob: bytes) -> list[ArchiveEntry]:
    _count_zip_entries(blob)
    budget = _Budget()
    entries = []
    try:
        with zipfile.ZipFile(io.BytesIO(blob)) as archive:
            for info in archive.infolist():
                # Unix zips keep the file type in the high bits; others leave them zero.
                file_type = stat.S_IFMT(info.external_attr >> 16)
                if file_type not in (0, stat.S_IFREG, stat.S_IFDIR):
                    raise InvalidInput(
                        f"The archive member {excerpt(info.filename)} is a link or device; only files and folders are accepted."
                    )
                if info.flag_bits & 0x1:
                    raise InvalidInput(f"The archive member {excerpt(info.filename)} is encrypted; encrypted archives are refused.")
                path = _member_path(_zip_name(info))
                budget.add_entry(0 if info.is_dir() else info.file_size)
                if path is None:
                    continue
                if info.is_dir():
                    entries.append(ArchiveEntry(path=path, data=None))
                    continue
                # Read at most what the header claims, plus one byte: a forged size cannot
                # make us unpack more than the caps allow.
                with archive.open(info) as handle:
                    data = handle.read(min(info.file_size, budget.remaining_for_one_file()) + 1)
                if len(data) != info.file_size:
                    raise InvalidInput(f"The archive member {excerpt(info.filename)} does not match its declared size.")
                entries.append(ArchiveEntry(path=path, data=data))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, NotImplementedError, zlib.error) as exc:
        raise _unreadable(".zip", exc) from None
    return entries


def read_archive(archive: BinaryIO) -> list[ArchiveEntry]:
    """The entries of a .tar.gz or .zip archive, checked against every rule and cap. At most one
    byte over the size cap is read, however large the file is."""
    limit = settings.MEMSITE_ARCHIVE_MAX_BYTES
    blob = archive.read(limit + 1)
    if len(blob) > limit:
        raise TooLarge(f"The archive is over {limit} bytes; the limit is {limit} bytes.")
    if blob.startswith(GZIP_MAGIC):
        entries = _read_tar(blob)
    elif blob.startswith(ZIP_MAGICS):
        entries = _read_zip(blob)
    else:
        raise InvalidInput("The file is neither a .tar.gz nor a .zip archive.")
    seen: dict[str, bool] = {}
    for entry in entries:
        is_dir = entry.data is None
        if entry.path in seen and not (is_dir and seen[entry.path]):
            raise InvalidInput(
                f"The archive holds {excerpt(entry.path)} twice (names that differ only in their "
                "Unicode normalization are the same name)."
            )
        seen[entry.path] = is_dir
    for path, is_dir in seen.items():
        parent = path.rpartition("/")[0]
        while parent:
            if seen.get(parent) is False:
                raise InvalidInput(f"The archive uses the file '{parent}' as a folder.")
            parent = parent.rpartition("/")[0]
    return entries


class _Folder:
    """A folder of the import being assembled: an existing node or a new spec."""

    def __init__(self, node: Node | None = None, spec: NodeSpec | None = None) -> None:
        self.node = node
        self.spec = spec
        self.folders: dict[str, _Folder] = {}
        self.new_children: list[NodeSpec] = []


@transaction.atomic
def project_import(*, project: Node, archive: BinaryIO, user: User) -> ImportResult:
    """Create the archive's folders and files in the project. Folders that exist already are
    reused; a file whose path exists already is a conflict, and nothing is created."""
    if project.type != "project_root_folder":
        raise InvalidInput(f"'{project.name}' is not a project root; archives import only into projects.")
    entries = read_archive(archive)
    root = _Folder(node=project)
    existing = {
        node.pk: node
        for node in selectors.node_subtree(node=project, include_self=False).defer("context")
    }
    by_parent: dict[str, dict[str, Node]] = {}
    for node in existing.values():
        by_parent.setdefault(node.parent_id, {})[node.name] = node

    counts = {"folders": 0, "files": 0}

    def folder_at(parts: list[str]) -> _Folder:
        current = root
        for part in parts:
            child = current.folders.get(part)
            if child is None:
                node = by_parent.get(current.node.pk, {}).get(part) if current.node else None
                if node is not None and not node.is_folder:
                    raise Conflict(f"The project already has a file named '{part}' where the archive needs a folder.")
                if node is not None:
                    child = _Folder(node=node)
                else:
                    spec = NodeSpec(name=part, type="folder")
                    child = _Folder(spec=spec)
                    (current.new_children if current.node else current.spec.children).append(spec)
                    counts["folders"] += 1
                current.folders[part] = child
            current = child
        return current

    for entry in entries:
        parts = entry.path.split("/")
        if entry.data is None:
            folder_at(parts)
            continue
        folder = folder_at(parts[:-1])
        name = parts[-1]
        if folder.node is not None and name in by_parent.get(folder.node.pk, {}):
            raise Conflict(f"The project already has {excerpt(entry.path)}.")
        spec = NodeSpec(
            name=name, type="project_file_bytes", context={"file_path": entry.path}, content=entry.data
        )
        (folder.new_children if folder.node else folder.spec.children).append(spec)
        counts["files"] += 1

    pending = [root]
    while pending:
        folder = pending.pop()
        if folder.node is not None and folder.new_children:
            node_bulk_create(parent=folder.node, specs=folder.new_children, user=user)
        pending.extend(child for child in folder.folders.values() if child.node is not None)
    return ImportResult(**counts)


# An export reads the files' names and sizes a page at a time, then their contents a few at a
# time (a file larger than that alone), each in a short query of its own: a cursor held open
# while a slow client downloads would hold the database too. Pages follow the tree path.
EXPORT_FILES_PER_READ = 200
EXPORT_BYTES_PER_READ = 2 * 1024 * 1024
EXPORT_SLICE_BYTES = 256 * 1024  # of a file's content compressed at a time
EXPORT_CHUNK_BYTES = 64 * 1024  # the least compressed output sent at a time


def project_export(*, project: Node) -> Iterator[bytes]:
    """The project's files as a .tar.gz, each at its `file_path`, in tree order: chunks made as
    they are sent, so memory stays flat whatever the project's size. A file changed or moved
    while the export runs is in it as it was or as it is. A name over 255 bytes, stored before
    that limit, is shortened (`fit_name`) so that the archive extracts."""
    if project.type != "project_root_folder":
        raise InvalidInput(f"'{project.name}' is not a project root; only projects export as archives.")
    return _gzipped(_tar_stream(_export_files(project)))


def _export_files(project: Node) -> Iterator[tuple[tarfile.TarInfo, bytes]]:
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
        for group in _groups_by_size(page):
            contents = dict(
                NodeContent.objects.filter(node_id__in=[row[0] for row in group]).values_list("node_id", "data")
            )
            for node_id, _, file_path, updated_at, _ in group:
                data = contents.pop(node_id, None)
                if data is not None:  # None: deleted since the page was read
                    yield _tar_info(file_path, size=len(data), updated_at=updated_at), data


def _groups_by_size(rows: list[tuple]) -> Iterator[list[tuple]]:
    """Consecutive rows whose contents (the last column) add up to at most EXPORT_BYTES_PER_READ."""
    group: list[tuple] = []
    total = 0
    for row in rows:
        size = row[-1] or 0
        if group and total + size > EXPORT_BYTES_PER_READ:
            yield group
            group, total = [], 0
        group.append(row)
        total += size
    if group:
        yield group


def _tar_info(file_path: str, *, size: int, updated_at: datetime) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name="/".join(fit_name(part) for part in file_path.split("/")))
    info.size = size
    info.mode = 0o644
    info.mtime = int(updated_at.timestamp())
    return info


def _tar_stream(files: Iterator[tuple[tarfile.TarInfo, bytes]]) -> Iterator[bytes | memoryview]:
    """A tar file in pieces, as tarfile writes it: each header (PAX where a name needs it), the
    content padded to whole blocks, two zero blocks at the end, and the last record filled."""
    written = 0
    for info, data in files:
        header = info.tobuf(tarfile.PAX_FORMAT, "utf-8", "surrogateescape")
        yield header
        content = memoryview(data)
        for start in range(0, len(content), EXPORT_SLICE_BYTES):
            yield content[start : start + EXPORT_SLICE_BYTES]
        padding = -len(content) % tarfile.BLOCKSIZE
        yield tarfile.NUL * padding
        written += len(header) + len(content) + padding
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
