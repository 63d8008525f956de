"""The abuse benchmark's payloads: JSON bodies of bad items, .tar.gz uploads that unpack to far
more than they weigh (a long-name header, files of zeros), markdown that made the renderer
super-linear and ordinary markdown of the same size, and a multipart body for an upload."""

from __future__ import annotations

import gzip
import io
import secrets
import tarfile

MiB = 1024 * 1024

# The payloads' sizes: those of the review that found them, within every limit the server sets.
BODY_BYTES = 900_000
BAD_ITEMS = 90_000  # under the 100,000 values of a JSON document the API parses at most
LONG_NAME_BYTES = 400 * MiB
DOCUMENT_BYTES = 200_000
NESTING = 300
# Percent escapes: Python's form parser splits the text at every `%`, so the costliest form
# body per byte; the review sent 31 MB of them to the login.
ESCAPES_BYTES = 31_000_000


def escaped_form(fields: str, name: str, size: int) -> bytes:
    """A urlencoded form: `fields`, then `name` holding `%5B` repeated to `size` bytes in all."""
    head = f"{fields}&{name}=".encode()
    return head + b"%5B" * max(0, (size - len(head)) // 3)


def bad_bodies(prefix: str, item: str, suffix: str) -> list[bytes]:
    """JSON bodies of bad items (`prefix`, `item` over and over, comma-separated, `suffix`): one
    of BODY_BYTES, as in the review, and one of BAD_ITEMS items, which a parser's cap on the
    values of a document lets through to validation."""
    whole = max(1, (BODY_BYTES - len(prefix) - len(suffix)) // (len(item) + 1))
    return [(prefix + ",".join([item] * count) + suffix).encode() for count in (whole, BAD_ITEMS)]


def _tar_header(name: str, kind: bytes, size: int) -> bytes:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.size = size
    return info.tobuf(tarfile.GNU_FORMAT)


def _pax_prefix(length: int) -> bytes:
    """The start of a PAX `path` record whose value is `length` bytes: the record's length
    counts its own digits."""
    rest = len(" path=") + length + 1  # the newline ends the record
    digits = len(str(rest))
    while len(str(rest + digits)) != digits:
        digits += 1
    return f"{rest + digits} path=".encode()


def long_name_tar_gz(kind: str, length: int = LONG_NAME_BYTES) -> bytes:
    """A .tar.gz of one empty file whose name, `length` bytes of 'a', comes in a GNU long-name
    header (`gnu`) or a PAX header (`pax`): gzip shrinks it a thousandfold, and tarfile reads
    such a header whole before any cap can apply."""
    if kind == "gnu":
        name, header_type, prefix, suffix = "././@LongLink", tarfile.GNUTYPE_LONGNAME, b"", b"\0"
    else:
        name, header_type, prefix, suffix = "././@PaxHeader", tarfile.XHDTYPE, _pax_prefix(length), b"\n"
    size = len(prefix) + length + len(suffix)
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", compresslevel=9) as out:
        out.write(_tar_header(name, header_type, size) + prefix)
        chunk = b"a" * MiB
        for start in range(0, length, MiB):
            out.write(chunk[: length - start])
        out.write(suffix + b"\0" * (-size % tarfile.BLOCKSIZE))
        out.write(_tar_header("short.txt", tarfile.REGTYPE, 0) + b"\0" * (2 * tarfile.BLOCKSIZE))
    return buffer.getvalue()


class Zeros:
    """A file of `size` zero bytes that is never held in memory whole."""

    def __init__(self, size: int) -> None:
        self.left = size

    def read(self, size: int = -1) -> bytes:
        size = self.left if size < 0 else min(size, self.left)
        self.left -= size
        return bytes(size)


def zeros_tar_gz(files: int, size: int) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for number in range(files):
            info = tarfile.TarInfo(f"blob-{number:02d}.bin")
            info.size = size
            archive.addfile(info, Zeros(size))
    return buffer.getvalue()


def hostile_markdown(size: int = DOCUMENT_BYTES) -> dict[str, str]:
    """The documents that made the renderer super-linear, or made it raise."""
    return {
        f"'[' × {size:,}": "[" * size,
        f"'[^' × {size // 2:,}": "[^" * (size // 2),
        f"'<div>' × {size // 5:,}": "<div>" * (size // 5),
        f"a list nested {NESTING} deep": "".join("    " * depth + "- item\n" for depth in range(NESTING)),
    }


def ordinary_markdown(size: int = DOCUMENT_BYTES) -> str:
    """The baseline: a document of the same size as people write them."""
    block = (
        "## Deployment notes\n\nThe *web* tier runs behind a proxy; see [the runbook](https://example.org/run) "
        "and `make run`.\n\n- first, migrate\n- then start the workers\n\n> Check the queue before a release.\n\n"
    )
    return (block * (size // len(block) + 1))[:size]


def multipart(field_name: str, filename: str, blob: bytes) -> tuple[bytes, str]:
    boundary = secrets.token_hex(16)
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="{field_name}"; filename="{filename}"\r\n'
        "Content-Type: application/gzip\r\n\r\n"
    )
    return head.encode() + blob + f"\r\n--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"
