"""Project archives: import a .tar.gz or .zip into a project root, export one as .tar.gz.

An archive is read whole and checked before anything is written: absolute paths, '..', links,
devices and anything over the file-count or size caps refuse the import, and nothing is created.
"""

import io
import stat
import tarfile
import zipfile
import zlib
from dataclasses import dataclass
from typing import BinaryIO

from django.conf import settings
from django.db import transaction

from memory import selectors
from memory.models import Node, NodeContent
from memory.services.nodes import NodeSpec, User, node_bulk_create
from memory.validation import normalize_relative_path
from memsite.errors import Conflict, InvalidInput, TooLarge

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
    """The member's clean relative path; None for the archive's own root (`./`)."""
    if raw.rstrip("/") in (".", ""):
        return None
    try:
        return normalize_relative_path(raw.rstrip("/"))
    except ValueError as exc:
        raise InvalidInput(f"The archive path {raw!r} is refused: it {exc}.") from None


def _read_tar(blob: bytes) -> list[ArchiveEntry]:
    budget = _Budget()
    entries = []
    try:
        with tarfile.open(fileobj=io.BytesIO(blob), mode="r:gz") as archive:
            for member in archive:
                if not (member.isfile() or member.isdir()):
                    raise InvalidInput(
                        f"The archive member {member.name!r} is a link or device; only files and folders are accepted."
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
                    raise InvalidInput(f"The archive member {member.name!r} is truncated or corrupt.")
                entries.append(ArchiveEntry(path=path, data=data))
    except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
        raise InvalidInput(f"The file is not a readable .tar.gz archive: {exc}.") from None
    return entries


def _read_zip(blob: bytes) -> list[ArchiveEntry]:
    budget = _Budget()
    entries = []
    try:
        with zipfile.ZipFile(io.BytesIO(blob)) as archive:
            for info in archive.infolist():
                # Unix zips keep the file type in the high bits; others leave them zero.
                file_type = stat.S_IFMT(info.external_attr >> 16)
                if file_type not in (0, stat.S_IFREG, stat.S_IFDIR):
                    raise InvalidInput(
                        f"The archive member {info.filename!r} is a link or device; only files and folders are accepted."
                    )
                if info.flag_bits & 0x1:
                    raise InvalidInput(f"The archive member {info.filename!r} is encrypted; encrypted archives are refused.")
                path = _member_path(info.filename)
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
                    raise InvalidInput(f"The archive member {info.filename!r} does not match its declared size.")
                entries.append(ArchiveEntry(path=path, data=data))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, NotImplementedError, zlib.error) as exc:
        raise InvalidInput(f"The file is not a readable .zip archive: {exc}.") from None
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
            raise InvalidInput(f"The archive holds '{entry.path}' twice.")
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
            raise Conflict(f"The project already has '{entry.path}'.")
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


def project_export(*, project: Node) -> bytes:
    """The project's files as a .tar.gz, each at its `file_path`, in path order."""
    if project.type != "project_root_folder":
        raise InvalidInput(f"'{project.name}' is not a project root; only projects export as archives.")
    rows = NodeContent.objects.filter(node__in=selectors.project_files(project=project)).values_list(
        "node__context__file_path", "data", "node__updated_at"
    )
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for file_path, data, updated_at in sorted(rows, key=lambda row: row[0]):
            info = tarfile.TarInfo(name=file_path)
            info.size = len(data)
            info.mode = 0o644
            info.mtime = int(updated_at.timestamp())
            archive.addfile(info, io.BytesIO(bytes(data)))
    return buffer.getvalue()
