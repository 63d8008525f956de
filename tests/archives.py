"""Archives built in memory for tests, including hostile ones."""

import gzip
import io
import tarfile
import zipfile
from collections.abc import Iterable


def tar_gz(files: dict[str, bytes], *, links: dict[str, str] | None = None, dirs: list[str] = ()) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name in dirs:
            info = tarfile.TarInfo(name)
            info.type = tarfile.DIRTYPE
            archive.addfile(info)
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
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
            info.external_attr = (0o120777 << 16)
            archive.writestr(info, target)
    return buffer.getvalue()


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
