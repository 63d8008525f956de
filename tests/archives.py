"""Archives built in memory for tests, including hostile ones."""

import gzip
import hashlib
import io
import stat
import struct
import tarfile
import zipfile
from collections.abc import Iterable
from pathlib import Path


def tar_gz(
    files: dict[str, bytes],
    *,
    links: dict[str, str] | None = None,
    dirs: list[str] = (),
    modes: dict[str, int] | None = None,
) -> bytes:
    """Files (mode 0644 unless `modes` gives another), then links and folders."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name in dirs:
            info = tarfile.TarInfo(name)
            info.type = tarfile.DIRTYPE
            archive.addfile(info)
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = (modes or {}).get(name, 0o644)
            archive.addfile(info, io.BytesIO(data))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type = tarfile.SYMTYPE
            info.linkname = target
            archive.addfile(info)
    return buffer.getvalue()


def zip_bytes(files: dict[str, bytes], *, symlinks: dict[str, str] | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
        for name, target in (symlinks or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = 0o120777 << 16
            archive.writestr(info, target)
    return buffer.getvalue()


def zip_with_modes(files: dict[str, bytes], modes: dict[str, int], *, made_on: int = 3) -> bytes:
    """A zip whose entries say they were made on `made_on` (3: Unix, 0: MS-DOS), each with its
    st_mode from `modes` in the high bits of its attributes, where Unix zip tools put it."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            info = zipfile.ZipInfo(name)
            info.create_system = made_on
            info.external_attr = (stat.S_IFREG | modes[name]) << 16
            archive.writestr(info, data)
    return buffer.getvalue()


def tar_modes(blob: bytes | Iterable[bytes]) -> dict[str, int]:
    """The permission bits of each file of a .tar.gz, given whole or as an export's chunks."""
    if not isinstance(blob, bytes):
        blob = b"".join(blob)
    with tarfile.open(fileobj=io.BytesIO(blob), mode="r:gz") as archive:
        return {member.name: member.mode for member in archive if member.isfile()}


def tar_members(blob: bytes | Iterable[bytes]) -> dict[str, bytes]:
    """The files of a .tar.gz, given whole or as the chunks an export streams."""
    if not isinstance(blob, bytes):
        blob = b"".join(blob)
    with tarfile.open(fileobj=io.BytesIO(blob), mode="r:gz") as archive:
        return {member.name: archive.extractfile(member).read() for member in archive if member.isfile()}


def tar_block(info: tarfile.TarInfo, data: bytes = b"") -> bytes:
    """One member as tar writes it: its header, then `data` padded to whole blocks. The header's
    size is `info.size`, which a hostile archive sets apart from the data."""
    return info.tobuf(tarfile.GNU_FORMAT) + data + tarfile.NUL * (-len(data) % tarfile.BLOCKSIZE)


def tar_file(name: str, data: bytes) -> bytes:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return tar_block(info, data)


def tar_extended(kind: bytes, payload: bytes) -> bytes:
    """A GNU long name or link (`L`, `K`) or a PAX header (`x`, `g`) holding `payload`."""
    info = tarfile.TarInfo("././@LongLink" if kind in (tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK) else "pax")
    info.type = kind
    info.size = len(payload)
    return tar_block(info, payload)


def pax_record(key: str, value: str) -> bytes:
    """`"<length> key=value\n"`, where the length counts its own digits."""
    body = f" {key}={value}\n".encode()
    length = len(body) + 1
    while len(str(length)) + len(body) != length:
        length += 1
    return str(length).encode() + body


def tar_gz_raw(*members: bytes) -> bytes:
    """Members written as given, then the end of the archive, gzipped."""
    return gzip.compress(b"".join(members) + tarfile.NUL * (2 * tarfile.BLOCKSIZE))


def zip_without_utf8_flag(files: dict[str, bytes]) -> bytes:
    """A zip whose UTF-8 names do not say so, as macOS and older tools write them."""
    blob = bytearray(zip_bytes(files))
    for signature, flags_at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        start = blob.find(signature)
        while start >= 0:
            blob[start + flags_at + 1] &= ~0x08 & 0xFF  # bit 11 of the little-endian flags
            start = blob.find(signature, start + 4)
    return bytes(blob)


def patterned(path: str, size: int) -> bytes:
    """`size` bytes that compress a thousandfold yet differ from one path to another: a file
    stored under the wrong path, or cut, does not compare equal."""
    seed = hashlib.sha256(path.encode()).digest()
    return (seed * (size // len(seed) + 1))[:size]


def tar_gz_to(target: Path, files: Iterable[tuple[str, bytes]], *, compresslevel: int = 1) -> Path:
    """A .tar.gz written to disk as the files come, so that a large one is never in memory."""
    with tarfile.open(target, "w:gz", compresslevel=compresslevel) as archive:
        for name, data in files:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return target


ZIP_CENTRAL_FIELDS = {"crc": (16, "<I"), "file_size": (24, "<I")}


def zip_with_central_field(blob: bytes, name: str, field: str, value: int) -> bytes:
    """The zip with one field of `name`'s central directory entry, the one zipfile trusts, set
    to `value`: a wrong checksum, or a size other than the data's."""
    offset, layout = ZIP_CENTRAL_FIELDS[field]
    patched = bytearray(blob)
    start = patched.find(b"PK\x01\x02")
    while start >= 0:
        name_length = struct.unpack_from("<H", patched, start + 28)[0]
        if patched[start + 46 : start + 46 + name_length] == name.encode():
            struct.pack_into(layout, patched, start + offset, value)
            return bytes(patched)
        start = patched.find(b"PK\x01\x02", start + 4)
    raise KeyError(name)


def zip_with_comments(count: int, comment_bytes: int) -> bytes:
    """A zip of `count` empty files, each with a comment of `comment_bytes` in the directory."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for number in range(count):
            info = zipfile.ZipInfo(f"{number}.txt")
            info.comment = b"c" * comment_bytes
            archive.writestr(info, b"")
    return buffer.getvalue()


def zip_of_zeros(name: str, mib: int) -> bytes:
    """A zip of one file of `mib` MiB of zeros, written a MiB at a time: each deflates to 1 KB."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive, archive.open(name, "w") as member:
        for _ in range(mib):
            member.write(bytes(1024 * 1024))
    return buffer.getvalue()
