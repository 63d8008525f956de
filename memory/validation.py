"""Rules for the text that names things in the tree: node names and project file paths."""

import hashlib
import posixpath
import re
import unicodedata

from memsite.errors import InvalidInput
from memsite.names import has_invisible_characters

# A name is a file's or folder's name when a project is exported, and file systems take at most
# 255 bytes (NAME_MAX), counted after UTF-8 encoding: 255 characters of Greek or CJK are too many.
MAX_NAME_BYTES = 255
MAX_DESCRIPTION_LENGTH = 10_000
MAX_FILE_PATH_LENGTH = 1024
# memsite's own ids (`memory.models.new_node_id`) and seed 000's `memory_<uuid4>`, dashes or not.
CLIENT_NODE_ID = re.compile(r"memory_([0-9a-f]{8})-?([0-9a-f]{4})-?([0-9a-f]{4})-?([0-9a-f]{4})-?([0-9a-f]{12})")
# Of a project file's mode, the permission bits kept: all but setuid, setgid and sticky, and
# write for group and others. A project is unpacked into a container, where such a file would
# run with its owner's rights or be any user's to change.
FILE_MODE_BITS = 0o755
DEFAULT_FILE_MODE = 0o644


def validate_name(name: str) -> str:
    """The name, trimmed and NFC-normalized, or InvalidInput saying what is wrong with it."""
    name = unicodedata.normalize("NFC", name.strip())
    if not name:
        raise InvalidInput("A name must not be empty.")
    size = utf8_size(name)
    if size > MAX_NAME_BYTES:
        raise InvalidInput(f"A name must be at most {MAX_NAME_BYTES} bytes in UTF-8, got {size}.")
    if "/" in name:
        raise InvalidInput(f"A name must not contain '/': {name!r}.")
    if name in (".", ".."):
        raise InvalidInput("A name must not be '.' or '..'.")
    if has_invisible_characters(name):
        raise InvalidInput(f"A name must not contain control or invisible characters: {name!r}.")
    return name


def file_mode(bits: int | None) -> int:
    """The mode kept of a file whose archive gives it `bits` (its type bits, if any, ignored):
    the bits that are safe to keep, or 0o644 when it gives no permission bits at all (a zip made
    on Windows)."""
    if not bits or not bits & 0o777:
        return DEFAULT_FILE_MODE
    return bits & FILE_MODE_BITS


def utf8_size(text: str) -> int:
    # Lone surrogates are refused by the rules on characters; here they only need a size.
    return len(text.encode("utf-8", "surrogatepass"))


def fit_name(name: str, limit: int = MAX_NAME_BYTES) -> str:
    """`name` if it is at most `limit` bytes in UTF-8; otherwise its start, cut at a character
    boundary, a hash of the whole name (so two long names stay apart) and its extension. For
    names stored before the byte limit, which a file system would refuse."""
    encoded = name.encode("utf-8", "surrogatepass")
    if len(encoded) <= limit:
        return name
    stem, dot, extension = name.rpartition(".")
    if not (dot and stem and utf8_size(extension) <= 16):
        stem, extension = name, ""
    tail = f"~{hashlib.sha256(encoded).hexdigest()[:12]}" + (f".{extension}" if extension else "")
    head = stem.encode("utf-8", "surrogatepass")[: limit - utf8_size(tail)]
    return head.decode("utf-8", "ignore") + tail


def validate_description(description: str) -> str:
    if len(description) > MAX_DESCRIPTION_LENGTH:
        raise InvalidInput(
            f"A description must be at most {MAX_DESCRIPTION_LENGTH} characters, got {len(description)}."
        )
    if "\x00" in description:
        raise InvalidInput("A description must not contain NUL characters.")
    return description


def normalize_relative_path(value: str) -> str:
    """A clean relative POSIX path whose every part is a valid name, or ValueError naming what
    is wrong with it."""
    if not value or not value.strip():
        raise ValueError("must not be empty")
    if len(value) > MAX_FILE_PATH_LENGTH:
        raise ValueError(f"must be at most {MAX_FILE_PATH_LENGTH} characters")
    if "\\" in value:
        raise ValueError("must use '/' separators")
    if value.startswith("/"):
        raise ValueError("must be relative, not absolute")
    normalized = posixpath.normpath(value)
    if normalized in (".", "..") or normalized.startswith("../"):
        raise ValueError("must stay inside the project (no '..')")
    for part in normalized.split("/"):
        try:
            clean = validate_name(part)
        except InvalidInput as exc:
            # Said of the path ("it must not ..."), not of a name.
            raise ValueError(exc.message.removeprefix("A name ").rstrip(".")) from None
        if clean != part:
            raise ValueError(f"has a part with surrounding spaces or unnormalized text: {part!r}")
    return normalized


def client_node_id(value: str) -> str:
    """A node id chosen by a client, in the one form memsite stores: `memory_` and 32 lower-case
    hex digits. Seed 000's `memory_<uuid4>` loses its dashes."""
    match = CLIENT_NODE_ID.fullmatch(value.lower())
    if match is None:
        raise InvalidInput(f"A node id must be `memory_` and 32 hex digits, or `memory_` and a UUID: {value[:80]!r}.")
    return "memory_" + "".join(match.groups())
