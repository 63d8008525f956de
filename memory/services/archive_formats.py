"""The .tar.gz and .zip formats of project archives, read under the caps.
Explained in docs/memory.md."""

import os
import stat
import struct
import tarfile
import unicodedata
import zipfile
import zlib
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from typing import IO, Any, BinaryIO, ClassVar, Generic, TypeVar

from django.conf import settings

from memory.validation import file_mode, normalize_relative_path
from memsite.errors import InvalidInput, TooLarge
from memsite.names import excerpt

GZIP_MAGIC = b"\x1f\x8b"
ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")
Member = TypeVar("Member", tarfile.TarInfo, zipfile.ZipInfo)
ArchiveFile = TypeVar("ArchiveFile", tarfile.TarFile, zipfile.ZipFile)


@dataclass(frozen=True)
class ArchiveEntry(Generic[Member]):
    """A member as the archive's list declares it; its data is read later, through `member`."""

    path: str  # normalized, relative
    size: int | None  # the declared size; None for a directory
    member: Member = field(repr=False, compare=False)
    mode: int | None = None  # a file's permission bits as kept; None for a directory


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
            raise TooLarge(f"A file in the archive is {size} bytes; the limit is {settings.MEMSITE_MAX_CONTENT_BYTES}.")
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
    {
        tarfile.GNUTYPE_LONGNAME,
        tarfile.GNUTYPE_LONGLINK,
        tarfile.XHDTYPE,
        tarfile.XGLTYPE,
        tarfile.SOLARIS_XHDTYPE,
    }
)


class _BoundedTarInfo(tarfile.TarInfo):
    """A member header checked against the bounds before tarfile reads what it announces.
    `_proc_member` is the hook tarfile's source leaves for subclasses."""

    def _proc_member(self, archive: "_BoundedTarFile") -> tarfile.TarInfo:
        archive.check_header(self)
        return super()._proc_member(archive)  # type: ignore[misc]  # private in tarfile: not in its stubs

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
        if len(self.pax_headers or {}) > GLOBAL_ATTRIBUTES_MAX:
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
    # zipfile's own reading of the end record, private and so not in its stubs.
    try:
        end = zipfile._EndRecData(upload)  # type: ignore[attr-defined]
    except (OSError, zipfile.BadZipFile, struct.error):
        return
    if end is None:
        return
    size = end[zipfile._ECD_SIZE]  # type: ignore[attr-defined]
    # The directory ends where the end record starts.
    position = end[zipfile._ECD_LOCATION] - size  # type: ignore[attr-defined]
    if end[zipfile._ECD_SIGNATURE] == zipfile.stringEndArchive64:  # type: ignore[attr-defined]
        position -= zipfile.sizeEndCentDir64 + zipfile.sizeEndCentDir64Locator  # type: ignore[attr-defined]
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


class Archive(ABC, Generic[ArchiveFile, Member]):
    """An archive opened from an upload. `list_entries` reads and checks its whole list of
    members before any data is read; `read` then gives each file's data, best in the list's
    order (a .tar.gz is read forward: going back starts it over)."""

    kind: ClassVar[str]
    errors: ClassVar[tuple[type[Exception], ...]]  # what the format's module raises on bad input

    def __init__(self, upload: BinaryIO) -> None:
        self.entries: list[ArchiveEntry[Member]] = []
        with self.readable():
            self.file: ArchiveFile = self._open(upload)

    @contextmanager
    def readable(self) -> Iterator[None]:
        try:
            yield
        except self.errors as exc:
            raise _unreadable(self.kind, exc) from None

    def list_entries(self) -> None:
        budget = _Budget()
        with self.readable():
            for name, size, bits, member in self._members():
                path = _member_path(name)
                budget.add_entry(size or 0)
                if path is not None:
                    mode = None if size is None else file_mode(bits)
                    self.entries.append(ArchiveEntry(path=path, size=size, member=member, mode=mode))
        _check_paths(self.entries)

    def read(self, entry: ArchiveEntry[Member]) -> bytearray:
        """The file's data, refused unless it is exactly as long as declared: a member that
        holds more is read no further than one byte past that."""
        if entry.size is None:
            raise ValueError(f"{entry.path} is a folder: it has no data to read.")
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
    def _open(self, upload: BinaryIO) -> ArchiveFile: ...

    @abstractmethod
    def _members(self) -> Iterator[tuple[str, int | None, int, Member]]:
        """Each member's raw name, declared size (None for a folder), mode bits as the archive
        gives them (0 for none) and itself, in order."""

    @abstractmethod
    def _open_member(self, member: Member) -> IO[bytes]: ...


def _link_refused(name: str) -> InvalidInput:
    return InvalidInput(f"The archive member {excerpt(name)} is a link or device; only files and folders are accepted.")


class _TarArchive(Archive[tarfile.TarFile, tarfile.TarInfo]):
    kind = ".tar.gz"
    errors = (tarfile.TarError, EOFError, OSError, zlib.error)

    def _open(self, upload: BinaryIO) -> tarfile.TarFile:
        return _BoundedTarFile.open(fileobj=upload, mode="r:gz")

    def _members(self) -> Iterator[tuple[str, int | None, int, tarfile.TarInfo]]:
        for member in self.file:
            if not (member.isfile() or member.isdir()):
                raise _link_refused(member.name)
            yield member.name, member.size if member.isfile() else None, member.mode, member

    def _open_member(self, member: tarfile.TarInfo) -> IO[bytes]:
        handle = self.file.extractfile(member)
        if handle is None:  # not a file: _members refuses those
            raise _link_refused(member.name)
        return handle


ZIP_MADE_ON_UNIX = 3  # an entry's "version made by" system whose attributes hold st_mode


class _ZipArchive(Archive[zipfile.ZipFile, zipfile.ZipInfo]):
    kind = ".zip"
    errors = (
        zipfile.BadZipFile,
        zipfile.LargeZipFile,
        EOFError,
        OSError,
        NotImplementedError,
        zlib.error,
    )

    def _open(self, upload: BinaryIO) -> zipfile.ZipFile:
        _check_zip_directory(upload)
        return zipfile.ZipFile(upload)

    def _members(self) -> Iterator[tuple[str, int | None, int, zipfile.ZipInfo]]:
        for info in self.file.infolist():
            # Unix zips keep the file type and mode in the high bits; others leave them zero.
            unix_mode = info.external_attr >> 16 if info.create_system == ZIP_MADE_ON_UNIX else 0
            if stat.S_IFMT(info.external_attr >> 16) not in (0, stat.S_IFREG, stat.S_IFDIR):
                raise _link_refused(info.filename)
            if info.flag_bits & 0x1:
                raise InvalidInput(
                    f"The archive member {excerpt(info.filename)} is encrypted; encrypted archives are refused."
                )
            yield _zip_name(info), None if info.is_dir() else info.file_size, unix_mode, info

    def _open_member(self, member: zipfile.ZipInfo) -> IO[bytes]:
        return self.file.open(member)


def _read_exactly(handle: IO[bytes], size: int) -> bytearray | None:
    """`size` bytes of `handle`, which must then be at its end; None when it holds fewer or
    more. They are read a slice at a time into one buffer, where a whole read would hold two or
    three copies at once, and one byte past `size` is the most asked for."""
    data = bytearray(size)
    view = memoryview(data)
    filled = 0
    while filled < size:
        # Both formats' member files are buffered readers, which the stubs type as IO[bytes].
        count = handle.readinto(view[filled : filled + READ_SLICE_BYTES])  # type: ignore[attr-defined]
        if not count:
            return None
        filled += count
    return None if handle.read(1) else data


def _check_paths(entries: list[ArchiveEntry[Any]]) -> None:
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
def open_archive(upload: BinaryIO) -> Iterator[Archive]:
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
        archive_class: type[Archive] = _TarArchive
    elif magic.startswith(ZIP_MAGICS):
        archive_class = _ZipArchive
    else:
        raise InvalidInput("The file is neither a .tar.gz nor a .zip archive.")
    with closing(archive_class(upload)) as archive:
        archive.list_entries()
        yield archive
