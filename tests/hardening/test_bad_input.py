"""A catalogue of bad input, endpoint by endpoint: wrong JSON types, missing and unknown fields,
strings over every documented cap, JSON nested 100,000 levels deep, control and invisible
characters in names, duplicate names, moves into a node's own branch, unknown ids, hostile
archives, invalid snapshots and memory.json files, and the dashboard's forms.

Every case must be answered with its 4xx and a message that says what is wrong, and must leave
the whole database exactly as it was: `database_dump` before and after are compared, every row
of every model, every column."""

import base64
import gzip
import html
import io
import json
import re
import stat
import tarfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlsplit

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import resolve

from tests.hardening.bad_input_world import World, build_world, database_dump
from tests.shared_rows import built_once, own_copy

DEEP = b"[" * 100_000 + b"]" * 100_000
MISSING = "memory_" + "0" * 32
HUGE_ID = "9" * 25  # past any integer column
ZERO_WIDTH = "\u200b"
RIGHT_TO_LEFT_OVERRIDE = "\u202e"


def forged_cursor(decoded: str) -> str:
    """A page cursor as DRF encodes one, with any position in it."""
    return quote(base64.b64encode(decoded.encode()).decode())


NUL_POSITION = forged_cursor("p=1\x00")
WORD_POSITION = forged_cursor("p=yesterday")


def nested(depth: int) -> str:
    """An object nested `depth` levels deep: few enough levels for the JSON parser to read."""
    return '{"a": ' * depth + "1" + "}" * depth


# -- fixtures ----------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def offline(offline_llm):
    """The offline provider: nothing here may reach a model, and a request that did would show
    in the ledger, which the dump compares."""
    return offline_llm


@pytest.fixture(scope="module")
def shared_world(django_db_setup, django_db_blocker):
    yield from built_once(django_db_blocker, build_world)


@pytest.fixture
def world(shared_world, db) -> World:
    """The module's one world (tests/shared_rows.py): every request here is refused, and writes
    nothing for the next test to see."""
    return own_copy(shared_world)


# -- requests ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Send:
    method: str
    path: str
    body: bytes = b""
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    multipart: dict[str, Any] | None = None  # sent as multipart/form-data instead of `body`


def js(method: str, path: str, document: Any, **headers: str) -> Send:
    """`document` as a JSON body."""
    return Send(method, path, json.dumps(document).encode(), headers=headers)


def raw(method: str, path: str, body: bytes | str, content_type: str = "application/json", **headers: str) -> Send:
    return Send(method, path, body.encode() if isinstance(body, str) else body, content_type, headers)


def upload(path: str, blob: bytes | str, filename: str = "upload.bin", **fields: str) -> Send:
    archive = SimpleUploadedFile(filename, blob) if isinstance(blob, bytes) else blob
    return Send("post", path, multipart={"archive": archive, **fields})


HTMX = {"HTTP_HX_REQUEST": "true"}


def form(path: str, data: dict[str, Any]) -> Send:
    """A dashboard form, posted as htmx posts it."""
    return Send("post", path, multipart=data, headers=HTMX)


def send(client, request: Send):
    if request.multipart is not None:
        return client.post(request.path, request.multipart, **request.headers)
    return client.generic(
        request.method.upper(), request.path, request.body, content_type=request.content_type, **request.headers
    )


def message_of(response) -> str:
    """What the answer says, as one line of text: a JSON body's keys and strings, or a page's
    text."""
    text = response.content.decode("utf-8", errors="replace")
    content_type = response.get("Content-Type", "")
    if "json" in content_type:

        def strings(value: Any):
            if isinstance(value, dict):
                for key, item in value.items():
                    yield str(key)
                    yield from strings(item)
            elif isinstance(value, list):
                for item in value:
                    yield from strings(item)
            else:
                yield str(value)

        text = " ".join(strings(json.loads(text)))
    elif "html" in content_type:
        text = html.unescape(re.sub(r"<[^>]+>", " ", text))
    return " ".join(text.split())


# -- archives ----------------------------------------------------------------------------------


def tar_gz(*members: tuple[tarfile.TarInfo, bytes | None], pax: bool = False) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", format=tarfile.PAX_FORMAT if pax else tarfile.GNU_FORMAT) as archive:
        for info, data in members:
            if data is not None:
                info.size = len(data)
            archive.addfile(info, io.BytesIO(data) if data is not None else None)
    return buffer.getvalue()


def member(name: str, data: bytes | None = b"x", *, kind: bytes = tarfile.REGTYPE, link: str = "", **pax: str):
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = link
    info.pax_headers = pax
    return info, data if kind == tarfile.REGTYPE else None


def zip_of(entries: dict[str, bytes], *, mode: int | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            info = zipfile.ZipInfo(name)
            info.compress_type = zipfile.ZIP_DEFLATED
            if mode is not None:
                info.external_attr = mode << 16
            archive.writestr(info, data)
    return buffer.getvalue()


def encrypted_zip() -> bytes:
    """A member flagged as encrypted (general purpose bit 0) in both of its headers."""
    blob = bytearray(zip_of({"secret.txt": b"x"}))
    for header, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        blob[blob.find(header) + offset] |= 0x1
    return bytes(blob)


def halved(blob: bytes) -> bytes:
    return blob[: len(blob) // 2]


def zip_with_repeated_name() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("a.txt", b"first")
        with pytest.warns(UserWarning, match="Duplicate name"):
            archive.writestr("a.txt", b"second")
    return buffer.getvalue()


def zip_lying_about_size(declared: int) -> bytes:
    """One member of 100,000 zeros whose headers say it is `declared` bytes."""
    blob = bytearray(zip_of({"zeros.bin": bytes(100_000)}))
    actual = (100_000).to_bytes(4, "little")
    for header, offset in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        start = blob.find(header)
        assert blob[start + offset : start + offset + 4] == actual
        blob[start + offset : start + offset + 4] = declared.to_bytes(4, "little")
    return bytes(blob)


def plain_tar() -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        info = tarfile.TarInfo("a.txt")
        info.size = 1
        archive.addfile(info, io.BytesIO(b"x"))
    return buffer.getvalue()


def truncated_tar_gz() -> bytes:
    """A member whose header claims more bytes than the archive holds."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        info = tarfile.TarInfo("big.bin")
        info.size = 1_000
        archive.addfile(info, io.BytesIO(bytes(1_000)))
    return gzip.compress(buffer.getvalue()[:1_024])


# -- documents ---------------------------------------------------------------------------------


def snapshot(nodes: dict | None = None, edges: list | None = None, **extra: Any) -> dict:
    """The world graph's snapshot, with `nodes` merged over its nodes."""
    base = {
        "1": {"node_id": 1, "kind": "task", "thought": "Find the port", "related_turn_ids": [], "active": True},
        "2": {"node_id": 2, "kind": "subtask", "thought": "Read the config", "related_turn_ids": [0], "active": True},
        "3": {"node_id": 3, "kind": "evidence", "thought": "8443", "related_turn_ids": [1], "active": True},
    }
    for key, node in (nodes or {}).items():
        base[key] = None if node is None else {**base.get(key, {}), **node}
    document = {
        "nodes": {key: node for key, node in base.items() if node is not None},
        "edges": edges if edges is not None else [{"src": 1, "dst": 2}, {"src": 3, "dst": 2}],
    }
    return {**document, **extra}


# -- the catalogue -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    group: str
    label: str
    request: Callable[[World], Send]
    status: int
    fragment: str
    client: str = "api"
    settings: dict[str, Any] = field(default_factory=dict)


def new_node(w: World, **fields: Any) -> dict:
    return {"parent": w.folder.pk, "type": "folder", "name": "new", **fields}


def new_agent(**fields: Any) -> dict:
    return {"name": "planner", "model": "gpt-4", **fields}


NODE_CREATE = [
    Case(
        "nodes",
        "create: body is a JSON string",
        lambda w: js("post", "/api/nodes/", "folder"),
        400,
        "Expected a dictionary",
    ),
    Case(
        "nodes",
        "create: body is null",
        lambda w: raw("post", "/api/nodes/", "null"),
        400,
        "Expected a dictionary, but got null",
    ),
    Case(
        "nodes",
        "create: parent is a number",
        lambda w: js("post", "/api/nodes/", new_node(w, parent=7)),
        400,
        "parent Must be a string",
    ),
    Case(
        "nodes",
        "create: parent is a list",
        lambda w: js("post", "/api/nodes/", new_node(w, parent=[w.folder.pk])),
        400,
        "parent Must be a string",
    ),
    Case(
        "nodes",
        "create: parent longer than an id",
        lambda w: js("post", "/api/nodes/", new_node(w, parent="m" * 65)),
        400,
        "no more than 64 characters",
    ),
    Case(
        "nodes",
        "create: parent is a path, not an id",
        lambda w: js("post", "/api/nodes/", new_node(w, parent="../../user")),
        404,
        "No memory node with id '../../user'",
    ),
    Case(
        "nodes",
        "create: name is missing",
        lambda w: js("post", "/api/nodes/", {"parent": w.folder.pk, "type": "folder"}),
        400,
        "name This field is required",
    ),
    Case(
        "nodes",
        "create: type is missing",
        lambda w: js("post", "/api/nodes/", {"parent": w.folder.pk, "name": "x"}),
        400,
        "type This field is required",
    ),
    Case(
        "nodes",
        "create: type is a list",
        lambda w: js("post", "/api/nodes/", new_node(w, type=["folder"])),
        400,
        "type Must be a string",
    ),
    Case(
        "nodes",
        "create: name is null",
        lambda w: js("post", "/api/nodes/", new_node(w, name=None)),
        400,
        "name This field may not be null",
    ),
    Case(
        "nodes",
        "create: name of 256 characters",
        lambda w: js("post", "/api/nodes/", new_node(w, name="n" * 256)),
        400,
        "at most 255 bytes in UTF-8, got 256",
    ),
    Case(
        "nodes",
        "create: name of 128 Greek letters (256 bytes)",
        lambda w: js("post", "/api/nodes/", new_node(w, name="λ" * 128)),
        400,
        "at most 255 bytes in UTF-8, got 256",
    ),
    Case(
        "nodes",
        "create: name of a million characters",
        lambda w: js("post", "/api/nodes/", new_node(w, name="n" * 1_000_000)),
        400,
        "at most 255 bytes in UTF-8, got 1000000",
    ),
    Case(
        "nodes",
        "create: name with NUL",
        lambda w: js("post", "/api/nodes/", new_node(w, name="a\x00b")),
        400,
        "Null characters are not allowed",
    ),
    Case(
        "nodes",
        "create: name with a right-to-left override",
        lambda w: js("post", "/api/nodes/", new_node(w, name=f"report{RIGHT_TO_LEFT_OVERRIDE}fdp.exe")),
        400,
        "control or invisible characters",
    ),
    Case(
        "nodes",
        "create: name with a zero-width space",
        lambda w: js("post", "/api/nodes/", new_node(w, name=f"plan{ZERO_WIDTH}.md")),
        400,
        "control or invisible characters",
    ),
    Case(
        "nodes",
        "create: name that is only a zero-width space",
        lambda w: js("post", "/api/nodes/", new_node(w, name=ZERO_WIDTH)),
        400,
        "control or invisible characters",
    ),
    Case(
        "nodes",
        "create: name with a newline",
        lambda w: js("post", "/api/nodes/", new_node(w, name="two\nlines")),
        400,
        "control or invisible characters",
    ),
    Case(
        "nodes",
        "create: name with a bell character",
        lambda w: js("post", "/api/nodes/", new_node(w, name="ding\x07")),
        400,
        "control or invisible characters",
    ),
    Case(
        "nodes",
        "create: name with a line separator",
        lambda w: js("post", "/api/nodes/", new_node(w, name="a\u2028b")),
        400,
        "control or invisible characters",
    ),
    Case(
        "nodes",
        "create: name with an unpaired surrogate",
        lambda w: js("post", "/api/nodes/", new_node(w, name="a\ud800")),
        400,
        "Surrogate characters are not allowed: U+D800",
    ),
    Case(
        "nodes",
        "create: name '/'",
        lambda w: js("post", "/api/nodes/", new_node(w, name="/")),
        400,
        "must not contain '/'",
    ),
    Case(
        "nodes",
        "create: name '..'",
        lambda w: js("post", "/api/nodes/", new_node(w, name="..")),
        400,
        "must not be '.' or '..'",
    ),
    Case(
        "nodes",
        "create: name '.'",
        lambda w: js("post", "/api/nodes/", new_node(w, name=" . ")),
        400,
        "must not be '.' or '..'",
    ),
    Case(
        "nodes",
        "create: a sibling's name",
        lambda w: js("post", "/api/nodes/", new_node(w, name="drafts")),
        409,
        "'notes' already has a child named 'drafts'",
    ),
    Case(
        "nodes",
        "create: a sibling's name with spaces around it",
        lambda w: js("post", "/api/nodes/", new_node(w, name="  drafts ")),
        409,
        "already has a child named 'drafts'",
    ),
    Case(
        "nodes",
        "create: a sibling's name, decomposed",
        lambda w: js("post", "/api/nodes/", new_node(w, type="document", name="cafe\u0301.md")),
        409,
        "already has a child named 'caf\u00e9.md'",
    ),
    Case(
        "nodes",
        "create: description of 10,001 characters",
        lambda w: js("post", "/api/nodes/", new_node(w, description="d" * 10_001)),
        400,
        "at most 10000 characters, got 10001",
    ),
    Case(
        "nodes",
        "create: description with NUL",
        lambda w: js("post", "/api/nodes/", new_node(w, description="a\x00")),
        400,
        "Null characters are not allowed",
    ),
    Case(
        "nodes",
        "create: content is a number",
        lambda w: js("post", "/api/nodes/", new_node(w, type="document", name="n.md", content=5)),
        400,
        "content Must be a string",
    ),
    Case(
        "nodes",
        "create: content over the cap",
        lambda w: js("post", "/api/nodes/", new_node(w, type="document", name="n.md", content="x" * 1_025)),
        413,
        "Content is 1025 bytes; the limit is 1024 bytes",
        settings={"MEMSITE_MAX_CONTENT_BYTES": 1_024},
    ),
    Case(
        "nodes",
        "create: base64 content over the cap",
        lambda w: js(
            "post",
            "/api/nodes/",
            {
                "parent": w.project.pk,
                "type": "project_file_bytes",
                "name": "b.bin",
                "context": {"file_path": "b.bin"},
                "content_base64": "AAAA" * 342,
            },
        ),
        413,
        "Content is 1026 bytes; the limit is 1024 bytes",
        settings={"MEMSITE_MAX_CONTENT_BYTES": 1_024},
    ),
    Case(
        "nodes",
        "create: context nested 800 levels deep",
        lambda w: raw(
            "post",
            "/api/nodes/",
            f'{{"parent": "{w.folder.pk}", "type": "folder", "name": "x", "context": {nested(800)}}}',
        ),
        400,
        "Invalid context for type 'folder'",
    ),
    Case(
        "nodes",
        "create: JSON nested 100,000 levels deep",
        lambda w: raw("post", "/api/nodes/", DEEP),
        400,
        "nested too deeply",
    ),
    Case(
        "nodes",
        "create: a project file path with '..'",
        lambda w: js(
            "post",
            "/api/nodes/",
            {
                "parent": w.project.pk,
                "type": "project_file_bytes",
                "name": "x",
                "context": {"file_path": "src/../../x"},
            },
        ),
        400,
        "no '..'",
    ),
    Case(
        "nodes",
        "create: an absolute project file path",
        lambda w: js(
            "post",
            "/api/nodes/",
            {
                "parent": w.project.pk,
                "type": "project_file_bytes",
                "name": "x",
                "context": {"file_path": "/etc/passwd"},
            },
        ),
        400,
        "must be relative, not absolute",
    ),
    Case(
        "nodes",
        "create: a project file path with a backslash",
        lambda w: js(
            "post",
            "/api/nodes/",
            {"parent": w.project.pk, "type": "project_file_bytes", "name": "x", "context": {"file_path": "..\\x"}},
        ),
        400,
        "must use '/' separators",
    ),
    Case(
        "nodes",
        "create: a project file path with a control character",
        lambda w: js(
            "post",
            "/api/nodes/",
            {"parent": w.project.pk, "type": "project_file_bytes", "name": "x", "context": {"file_path": "src/a\x1bb"}},
        ),
        400,
        "control or invisible characters",
    ),
    Case(
        "nodes",
        "create: a project file path that is taken",
        lambda w: js(
            "post",
            "/api/nodes/",
            {
                "parent": w.project.pk,
                "type": "project_file_bytes",
                "name": "other.py",
                "context": {"file_path": "src/main.py"},
            },
        ),
        409,
        "already has a file at 'src/main.py'",
    ),
    Case(
        "nodes",
        "create: a project file path through a file",
        lambda w: js(
            "post",
            "/api/nodes/",
            {
                "parent": w.project.pk,
                "type": "project_file_bytes",
                "name": "x.py",
                "context": {"file_path": "src/main.py/x.py"},
            },
        ),
        409,
        "would make a file of the project 'todo-api' a folder",
    ),
    Case(
        "nodes",
        "create: a project file path that is a number",
        lambda w: js(
            "post",
            "/api/nodes/",
            {"parent": w.project.pk, "type": "project_file_bytes", "name": "x", "context": {"file_path": 3}},
        ),
        400,
        "file_path",
    ),
    Case(
        "nodes",
        "create: inside a document",
        lambda w: js("post", "/api/nodes/", new_node(w, parent=w.document.pk)),
        400,
        "'plan.md' is not a folder",
    ),
    Case(
        "nodes",
        "create: a project inside a project",
        lambda w: js("post", "/api/nodes/", {"parent": w.project.pk, "type": "project_root_folder", "name": "inner"}),
        400,
        "directly in the 'projects' folder",
    ),
]

NODE_UPDATE = [
    Case(
        "nodes",
        "update: unknown id",
        lambda w: js("patch", f"/api/nodes/{MISSING}/", {"name": "x"}),
        404,
        f"No memory node with id '{MISSING}'",
    ),
    Case(
        "nodes",
        "update: id with NUL",
        lambda w: js("patch", "/api/nodes/memory_%00/", {"name": "x"}),
        404,
        "No memory node with id",
    ),
    Case(
        "nodes",
        "update: body is a list",
        lambda w: js("patch", f"/api/nodes/{w.folder.pk}/", [{"name": "x"}]),
        400,
        "Expected a dictionary",
    ),
    Case(
        "nodes",
        "update: name with a right-to-left override",
        lambda w: js("patch", f"/api/nodes/{w.document.pk}/", {"name": f"a{RIGHT_TO_LEFT_OVERRIDE}dm.exe"}),
        400,
        "control or invisible characters",
    ),
    Case(
        "nodes",
        "update: name with a zero-width joiner",
        lambda w: js("patch", f"/api/nodes/{w.document.pk}/", {"name": "pl\u200dan.md"}),
        400,
        "control or invisible characters",
    ),
    Case(
        "nodes",
        "update: name with a tab",
        lambda w: js("patch", f"/api/nodes/{w.document.pk}/", {"name": "a\tb"}),
        400,
        "control or invisible characters",
    ),
    Case(
        "nodes",
        "update: name '..'",
        lambda w: js("patch", f"/api/nodes/{w.document.pk}/", {"name": ".."}),
        400,
        "must not be '.' or '..'",
    ),
    Case(
        "nodes",
        "update: name of 256 characters",
        lambda w: js("patch", f"/api/nodes/{w.document.pk}/", {"name": "n" * 256}),
        400,
        "at most 255 bytes",
    ),
    Case(
        "nodes",
        "update: a sibling's name",
        lambda w: js("patch", f"/api/nodes/{w.document.pk}/", {"name": "drafts"}),
        409,
        "'drafts' is already used by a sibling",
    ),
    Case(
        "nodes",
        "update: a sibling's name, decomposed",
        lambda w: js("patch", f"/api/nodes/{w.document.pk}/", {"name": "cafe\u0301.md"}),
        409,
        "'caf\u00e9.md' is already used by a sibling",
    ),
    Case(
        "nodes",
        "update: description of 10,001 characters",
        lambda w: js("patch", f"/api/nodes/{w.document.pk}/", {"description": "d" * 10_001}),
        400,
        "at most 10000 characters",
    ),
    Case(
        "nodes",
        "update: version is a float",
        lambda w: js("patch", f"/api/nodes/{w.document.pk}/", {"name": "x", "version": 1.0}),
        400,
        "version Must be an integer",
    ),
    Case(
        "nodes",
        "update: a stale version",
        lambda w: js("patch", f"/api/nodes/{w.document.pk}/", {"name": "x", "version": 7}),
        409,
        "it is at version 1, not 7",
    ),
    Case(
        "nodes",
        "update: type is null",
        lambda w: js("patch", f"/api/nodes/{w.document.pk}/", {"type": None}),
        400,
        "type This field may not be null",
    ),
    Case(
        "nodes",
        "update: a project file moved to '../x' by its context",
        lambda w: js("patch", f"/api/nodes/{w.project_file.pk}/", {"context": {"file_path": "../x"}}),
        400,
        "no '..'",
    ),
    Case(
        "nodes",
        "update: context nested 800 levels deep",
        lambda w: raw("patch", f"/api/nodes/{w.project_file.pk}/", f'{{"context": {nested(800)}}}'),
        400,
        "Invalid context for type 'project_file_bytes'",
    ),
    Case(
        "nodes",
        "update: JSON nested 100,000 levels deep",
        lambda w: raw("patch", f"/api/nodes/{w.document.pk}/", DEEP),
        400,
        "nested too deeply",
    ),
    Case(
        "nodes",
        "update: rename an internal folder",
        lambda w: js("patch", f"/api/nodes/{w.internal['user'].pk}/", {"name": f"user{ZERO_WIDTH}"}),
        403,
        "cannot be renamed or retyped",
    ),
]

NODE_MOVE = [
    Case(
        "nodes",
        "move: into its own grandchild (a cycle)",
        lambda w: js("post", f"/api/nodes/{w.folder.pk}/move/", {"parent": w.grandchild.pk}),
        409,
        "cannot be moved into itself or its own branch",
    ),
    Case(
        "nodes",
        "move: into itself",
        lambda w: js("post", f"/api/nodes/{w.child.pk}/move/", {"parent": w.child.pk}),
        409,
        "cannot be moved into itself or its own branch",
    ),
    Case(
        "nodes",
        "move: next to a node of the same name",
        lambda w: js("post", f"/api/nodes/{w.child.pk}/move/", {"parent": w.destination.pk}),
        409,
        "'archive' already has a child named 'drafts'",
    ),
    Case(
        "nodes",
        "move: parent missing",
        lambda w: js("post", f"/api/nodes/{w.child.pk}/move/", {}),
        400,
        "parent This field is required",
    ),
    Case(
        "nodes",
        "move: parent is null",
        lambda w: js("post", f"/api/nodes/{w.child.pk}/move/", {"parent": None}),
        400,
        "parent This field may not be null",
    ),
    Case(
        "nodes",
        "move: parent is an object",
        lambda w: js("post", f"/api/nodes/{w.child.pk}/move/", {"parent": {"id": w.folder.pk}}),
        400,
        "parent Must be a string",
    ),
    Case(
        "nodes",
        "move: unknown parent",
        lambda w: js("post", f"/api/nodes/{w.child.pk}/move/", {"parent": MISSING}),
        404,
        f"No memory node with id '{MISSING}'",
    ),
    Case(
        "nodes",
        "move: unknown node",
        lambda w: js("post", f"/api/nodes/{MISSING}/move/", {"parent": w.folder.pk}),
        404,
        f"No memory node with id '{MISSING}'",
    ),
    Case(
        "nodes",
        "move: an unknown field",
        lambda w: js("post", f"/api/nodes/{w.child.pk}/move/", {"parent": w.destination.pk, "position": 0}),
        400,
        "position Unknown field",
    ),
    Case(
        "nodes",
        "move: into a project file",
        lambda w: js("post", f"/api/nodes/{w.child.pk}/move/", {"parent": w.project_file.pk}),
        400,
        "'main.py' is not a folder",
    ),
    Case(
        "nodes",
        "move: a project file out of its project",
        lambda w: js("post", f"/api/nodes/{w.project_file.pk}/move/", {"parent": w.folder.pk}),
        400,
        "inside a project_root_folder",
    ),
    Case(
        "nodes",
        "move: files under a path that is a file of the other project",
        lambda w: js("post", f"/api/nodes/{w.other_project_folder.pk}/move/", {"parent": w.project.pk}),
        409,
        "'src/main.py/x.py' would make a file of the project 'todo-api' a folder",
    ),
    Case(
        "nodes",
        "move: a project out of 'projects'",
        lambda w: js("post", f"/api/nodes/{w.project.pk}/move/", {"parent": w.folder.pk}),
        400,
        "directly in the 'projects' folder",
    ),
    Case(
        "nodes",
        "move: an internal folder",
        lambda w: js("post", f"/api/nodes/{w.internal['user'].pk}/move/", {"parent": w.destination.pk}),
        403,
        "internal folder 'user'",
    ),
    Case(
        "nodes",
        "move: JSON nested 100,000 levels deep",
        lambda w: raw("post", f"/api/nodes/{w.child.pk}/move/", DEEP),
        400,
        "nested too deeply",
    ),
]

NODE_DELETE_AND_CONTENT = [
    Case(
        "nodes",
        "delete: unknown id",
        lambda w: Send("delete", f"/api/nodes/{MISSING}/"),
        404,
        f"No memory node with id '{MISSING}'",
    ),
    Case(
        "nodes",
        "delete: id with NUL",
        lambda w: Send("delete", "/api/nodes/memory_%00/"),
        404,
        "No memory node with id",
    ),
    Case(
        "nodes",
        "delete: an internal folder",
        lambda w: Send("delete", f"/api/nodes/{w.internal['projects'].pk}/"),
        403,
        "internal folder 'projects' cannot be deleted",
    ),
    Case(
        "nodes",
        "content: unknown id",
        lambda w: raw("put", f"/api/nodes/{MISSING}/content/", "text", "text/markdown"),
        404,
        f"No memory node with id '{MISSING}'",
    ),
    Case(
        "nodes",
        "content: of an internal folder",
        lambda w: raw("put", f"/api/nodes/{w.internal['user'].pk}/content/", "text", "text/markdown"),
        403,
        "internal folder 'user' holds no content",
    ),
    Case(
        "nodes",
        "content: a document that is not UTF-8",
        lambda w: raw("put", f"/api/nodes/{w.document.pk}/content/", b"\xff\xfe\x00", "text/markdown"),
        400,
        "UTF-8",
    ),
    Case(
        "nodes",
        "content: over the cap",
        lambda w: raw("put", f"/api/nodes/{w.project_file.pk}/content/", bytes(1_025), "application/octet-stream"),
        413,
        "the limit is 1024 bytes",
        settings={"MEMSITE_MAX_CONTENT_BYTES": 1_024},
    ),
    Case(
        "nodes",
        "content: a Content-Length that is not a number",
        lambda w: raw("put", f"/api/nodes/{w.document.pk}/content/", "text", "text/markdown", CONTENT_LENGTH="four"),
        400,
        "Content-Length header 'four' is not a number",
    ),
    Case(
        "nodes",
        "content: a negative Content-Length",
        lambda w: raw("put", f"/api/nodes/{w.document.pk}/content/", "text", "text/markdown", CONTENT_LENGTH="-4"),
        400,
        "Content-Length header '-4' is not a number",
    ),
    Case(
        "nodes",
        "content: no Content-Length",
        lambda w: raw("put", f"/api/nodes/{w.document.pk}/content/", "text", "text/markdown", CONTENT_LENGTH=""),
        411,
        "Content-Length",
    ),
    Case(
        "nodes",
        "content: If-Match that is not a version",
        lambda w: raw("put", f"/api/nodes/{w.document.pk}/content/", "text", "text/markdown", HTTP_IF_MATCH="latest"),
        400,
        "If-Match header 'latest' is not a node version",
    ),
    Case(
        "nodes",
        "content: If-Match past any version",
        lambda w: raw("put", f"/api/nodes/{w.document.pk}/content/", "text", "text/markdown", HTTP_IF_MATCH="9" * 11),
        400,
        "is not a node version",
    ),
    Case(
        "nodes",
        "content: a stale If-Match",
        lambda w: raw("put", f"/api/nodes/{w.document.pk}/content/", "text", "text/markdown", HTTP_IF_MATCH='"4"'),
        409,
        "it is at version 1, not 4",
    ),
    Case(
        "nodes",
        "children: a cursor whose position holds NUL",
        lambda w: Send("get", f"/api/nodes/{w.folder.pk}/children/?cursor={NUL_POSITION}"),
        400,
        "cursor Invalid cursor",
    ),
]

ARCHIVES = [
    Case(
        "archives",
        "tar: '..' in a pax header's path",
        lambda w: upload(f"/api/nodes/{w.project.pk}/import/", tar_gz(member("ok.txt", path="../evil.txt"), pax=True)),
        400,
        "'../evil.txt' is refused: it must stay inside the project",
    ),
    Case(
        "archives",
        "tar: '..' after a folder",
        lambda w: upload(f"/api/nodes/{w.project.pk}/import/", tar_gz(member("src/../../evil.txt"))),
        400,
        "must stay inside the project",
    ),
    Case(
        "archives",
        "tar: an absolute path",
        lambda w: upload(f"/api/nodes/{w.project.pk}/import/", tar_gz(member("/root/.ssh/authorized_keys"))),
        400,
        "must be relative, not absolute",
    ),
    Case(
        "archives",
        "tar: a hard link",
        lambda w: upload(
            f"/api/nodes/{w.project.pk}/import/",
            tar_gz(member("a.txt"), member("b.txt", kind=tarfile.LNKTYPE, link="a.txt")),
        ),
        400,
        "'b.txt' is a link or device",
    ),
    Case(
        "archives",
        "tar: a symbolic link out of the project",
        lambda w: upload(
            f"/api/nodes/{w.project.pk}/import/", tar_gz(member("etc", kind=tarfile.SYMTYPE, link="/etc"))
        ),
        400,
        "'etc' is a link or device",
    ),
    Case(
        "archives",
        "tar: a character device",
        lambda w: upload(f"/api/nodes/{w.project.pk}/import/", tar_gz(member("null", kind=tarfile.CHRTYPE))),
        400,
        "'null' is a link or device",
    ),
    Case(
        "archives",
        "tar: a fifo",
        lambda w: upload(f"/api/nodes/{w.project.pk}/import/", tar_gz(member("pipe", kind=tarfile.FIFOTYPE))),
        400,
        "'pipe' is a link or device",
    ),
    Case(
        "archives",
        "tar: a name with a control character",
        lambda w: upload(f"/api/nodes/{w.project.pk}/import/", tar_gz(member("bad\x1b[31m.txt"))),
        400,
        "control or invisible characters",
    ),
    Case(
        "archives",
        "tar: a name with a right-to-left override",
        lambda w: upload(
            f"/api/nodes/{w.project.pk}/import/", tar_gz(member(f"invoice{RIGHT_TO_LEFT_OVERRIDE}fdp.exe"))
        ),
        400,
        "control or invisible characters",
    ),
    Case(
        "archives",
        "tar: a file used as a folder",
        lambda w: upload(f"/api/nodes/{w.project.pk}/import/", tar_gz(member("a"), member("a/b"))),
        400,
        "uses the file 'a' as a folder",
    ),
    Case(
        "archives",
        "tar: a member cut short",
        lambda w: upload(f"/api/nodes/{w.project.pk}/import/", truncated_tar_gz()),
        400,
        "not a readable .tar.gz archive",
    ),
    Case(
        "archives",
        "tar: a gzip that holds no tar",
        lambda w: upload(f"/api/nodes/{w.project.pk}/import/", gzip.compress(b"hello, this is not a tar file" * 40)),
        400,
        "not a readable .tar.gz archive",
    ),
    Case(
        "archives",
        "tar: uncompressed",
        lambda w: upload(f"/api/nodes/{w.project.pk}/import/", plain_tar()),
        400,
        "neither a .tar.gz nor a .zip",
    ),
    Case(
        "archives",
        "tar: a gzip bomb past the unpacked cap",
        lambda w: upload(
            f"/api/nodes/{w.project.pk}/import/", tar_gz(*(member(f"zeros{n}.bin", bytes(400_000)) for n in range(3)))
        ),
        413,
        "unpacks to more than 1000000 bytes",
        settings={"MEMSITE_ARCHIVE_MAX_UNPACKED_BYTES": 1_000_000},
    ),
    Case(
        "archives",
        "tar: a file past the content cap",
        lambda w: upload(f"/api/nodes/{w.project.pk}/import/", tar_gz(member("zeros.bin", bytes(2_000)))),
        413,
        "A file in the archive is 2000 bytes; the limit is 1024",
        settings={"MEMSITE_MAX_CONTENT_BYTES": 1_024},
    ),
    Case(
        "archives",
        "tar: a file under a path that is one of the project's files",
        lambda w: upload(f"/api/nodes/{w.project.pk}/import/", tar_gz(member("src/main.py/inner.py"))),
        409,
        "'src/main.py/inner.py' would make a file of the project 'todo-api' a folder",
    ),
    Case(
        "archives",
        "tar: a file at a path the project's files need as a folder",
        lambda w: upload(f"/api/nodes/{w.project.pk}/import/", tar_gz(member("src"))),
        409,
        "'src' would make a file of the project 'todo-api' a folder",
    ),
    Case(
        "archives",
        "tar: a folder where the project has a file of that name",
        lambda w: upload(f"/api/nodes/{w.project.pk}/import/", tar_gz(member("main.py/inner.py"))),
        409,
        "'main.py' is a file in the project but a folder in the archive",
    ),
    Case(
        "archives",
        "zip: '..'",
        lambda w: upload(f"/api/nodes/{w.project.pk}/import/", zip_of({"../../evil.sh": b"x"})),
        400,
        "must stay inside the project",
    ),
    Case(
        "archives",
        "zip: '..' with backslashes",
        lambda w: upload(f"/api/nodes/{w.project.pk}/import/", zip_of({"..\\..\\evil.sh": b"x"})),
        400,
        "must use '/' separators",
    ),
    Case(
        "archives",
        "zip: an absolute path",
        lambda w: upload(f"/api/nodes/{w.project.pk}/import/", zip_of({"/etc/cron.d/evil": b"x"})),
        400,
        "must be relative, not absolute",
    ),
    Case(
        "archives",
        "zip: a symbolic link",
        lambda w: upload(
            f"/api/nodes/{w.project.pk}/import/", zip_of({"link": b"/etc/passwd"}, mode=stat.S_IFLNK | 0o777)
        ),
        400,
        "'link' is a link or device",
    ),
    Case(
        "archives",
        "zip: a block device",
        lambda w: upload(f"/api/nodes/{w.project.pk}/import/", zip_of({"disk": b""}, mode=stat.S_IFBLK | 0o600)),
        400,
        "'disk' is a link or device",
    ),
    Case(
        "archives",
        "zip: an encrypted member",
        lambda w: upload(f"/api/nodes/{w.project.pk}/import/", encrypted_zip()),
        400,
        "'secret.txt' is encrypted",
    ),
    Case(
        "archives",
        "zip: a name with a zero-width space",
        lambda w: upload(f"/api/nodes/{w.project.pk}/import/", zip_of({f"src/ma{ZERO_WIDTH}in.py": b"x"})),
        400,
        "control or invisible characters",
    ),
    Case(
        "archives",
        "zip: a name with a newline",
        lambda w: upload(f"/api/nodes/{w.project.pk}/import/", zip_of({"two\nlines.txt": b"x"})),
        400,
        "control or invisible characters",
    ),
    Case(
        "archives",
        "zip: the same name twice",
        lambda w: upload(f"/api/nodes/{w.project.pk}/import/", zip_with_repeated_name()),
        400,
        "holds 'a.txt' twice",
    ),
    Case(
        "archives",
        "zip: a file the project has",
        lambda w: upload(f"/api/nodes/{w.project.pk}/import/", zip_of({"src/main.py": b"x"})),
        409,
        "already has files at: src/main.py",
    ),
    Case(
        "archives",
        "zip: a bomb of one file 1,000 times its packed size",
        lambda w: upload(f"/api/nodes/{w.project.pk}/import/", zip_of({"zeros.bin": bytes(11 * 1024 * 1024)})),
        413,
        "the limit is 10485760",
    ),
    Case(
        "archives",
        "zip: more files than the cap",
        lambda w: upload(f"/api/nodes/{w.project.pk}/import/", zip_of({f"f{n}.txt": b"" for n in range(5_001)})),
        413,
        "more than 5000 files and folders",
    ),
    Case(
        "archives",
        "zip: headers that say a member is smaller than it is",
        lambda w: upload(f"/api/nodes/{w.project.pk}/import/", zip_lying_about_size(10)),
        400,
        "not a readable .zip archive",
    ),
    Case(
        "archives",
        "zip: headers that say a member is larger than it is",
        lambda w: upload(f"/api/nodes/{w.project.pk}/import/", zip_lying_about_size(200_000)),
        400,
        "zeros.bin",
    ),
    Case(
        "archives",
        "zip: cut in half",
        lambda w: upload(f"/api/nodes/{w.project.pk}/import/", halved(zip_of({"a.txt": bytes(range(256)) * 40}))),
        400,
        "not a readable .zip archive",
    ),
    Case(
        "archives",
        "not an archive: an empty file",
        lambda w: upload(f"/api/nodes/{w.project.pk}/import/", b""),
        400,
        "The submitted file is empty",
    ),
    Case(
        "archives",
        "not an archive: a PNG",
        lambda w: upload(f"/api/nodes/{w.project.pk}/import/", b"\x89PNG\r\n\x1a\n" + bytes(64)),
        400,
        "neither a .tar.gz nor a .zip",
    ),
    Case(
        "archives",
        "not an archive: a text field, not a file",
        lambda w: upload(f"/api/nodes/{w.project.pk}/import/", "archive.zip"),
        400,
        "archive The submitted data was not a file",
    ),
    Case(
        "archives",
        "merge: a file whose node has another file_path",
        lambda w: upload(f"/api/nodes/{w.project.pk}/import/", tar_gz(member("main.py")), mode="merge"),
        409,
        "file at 'main.py' has the file_path 'src/main.py'",
    ),
    Case(
        "archives",
        "merge: a folder where the project has a file",
        lambda w: upload(f"/api/nodes/{w.project.pk}/import/", tar_gz(member("main.py/inner.py")), mode="merge"),
        409,
        "'main.py' is a file in the project but a folder in the archive",
    ),
    Case(
        "archives",
        "replace: a member cut short",
        lambda w: upload(f"/api/nodes/{w.project.pk}/import/", truncated_tar_gz(), mode="replace"),
        400,
        "not a readable .tar.gz archive",
    ),
    Case(
        "archives",
        "merge: the project past the file cap",
        lambda w: upload(f"/api/nodes/{w.project.pk}/import/", tar_gz(member("a.py")), mode="merge"),
        413,
        "would hold 2 files after this import; the limit is 1",
        settings={"MEMSITE_ARCHIVE_MAX_FILES": 1},
    ),
    Case(
        "archives",
        "an unknown mode",
        lambda w: upload(f"/api/nodes/{w.project.pk}/import/", tar_gz(member("a.py")), mode="overwrite"),
        400,
        'mode "overwrite" is not a valid choice',
    ),
    Case(
        "archives",
        "the archive under another field's name",
        lambda w: Send(
            "post",
            f"/api/nodes/{w.project.pk}/import/",
            multipart={"file": SimpleUploadedFile("a.zip", zip_of({"a.txt": b"x"}))},
        ),
        400,
        "file Unknown field. Accepted fields: archive",
    ),
    Case(
        "archives",
        "into a project file",
        lambda w: upload(f"/api/nodes/{w.project_file.pk}/import/", zip_of({"a.txt": b"x"})),
        400,
        "'main.py' is not a project root",
    ),
    Case(
        "archives",
        "into an unknown project",
        lambda w: upload(f"/api/nodes/{MISSING}/import/", zip_of({"a.txt": b"x"})),
        404,
        f"No memory node with id '{MISSING}'",
    ),
]

SEARCHES = [
    Case(
        "searches",
        "start: body is a list",
        lambda w: js("post", "/api/searches/", ["Where?"]),
        400,
        "Expected a dictionary",
    ),
    Case(
        "searches",
        "start: questions is an object",
        lambda w: js("post", "/api/searches/", {"questions": {"q": "Where?"}}),
        400,
        "questions Expected a list",
    ),
    Case(
        "searches",
        "start: questions is null",
        lambda w: js("post", "/api/searches/", {"questions": None}),
        400,
        "questions This field may not be null",
    ),
    Case(
        "searches",
        "start: a thousand questions",
        lambda w: js("post", "/api/searches/", {"questions": ["q"] * 1_000}),
        400,
        "no more than 20 elements",
    ),
    Case(
        "searches",
        "start: a question with NUL",
        lambda w: js("post", "/api/searches/", {"questions": ["wh\x00ere"]}),
        400,
        "Null characters are not allowed",
    ),
    Case(
        "searches",
        "start: a question with an unpaired surrogate",
        lambda w: js("post", "/api/searches/", {"questions": ["where\udfff"]}),
        400,
        "Surrogate characters are not allowed: U+DFFF",
    ),
    Case(
        "searches",
        "start: a question of a million characters",
        lambda w: js("post", "/api/searches/", {"questions": ["q" * 1_000_000]}),
        400,
        "no more than 1000 characters",
    ),
    Case(
        "searches",
        "start: context of 20,001 characters",
        lambda w: js("post", "/api/searches/", {"questions": ["q"], "context": "c" * 20_001}),
        400,
        "no more than 20000 characters",
    ),
    Case(
        "searches",
        "start: budgets is a list",
        lambda w: js("post", "/api/searches/", {"questions": ["q"], "budgets": [5]}),
        400,
        "Expected a dictionary",
    ),
    Case(
        "searches",
        "start: budgets is null",
        lambda w: js("post", "/api/searches/", {"questions": ["q"], "budgets": None}),
        400,
        "budgets This field may not be null",
    ),
    Case(
        "searches",
        "start: a budget that is a boolean",
        lambda w: js("post", "/api/searches/", {"questions": ["q"], "budgets": {"max_llm_calls": True}}),
        400,
        "max_llm_calls Must be an integer",
    ),
    Case(
        "searches",
        "start: a budget past 64 bits",
        lambda w: js("post", "/api/searches/", {"questions": ["q"], "budgets": {"max_tokens": 2**70}}),
        400,
        "less than or equal to 5000000",
    ),
    Case(
        "searches",
        "start: start_node is a number",
        lambda w: js("post", "/api/searches/", {"questions": ["q"], "start_node": 1}),
        400,
        "start_node Must be a string",
    ),
    Case(
        "searches",
        "start: an unknown start node",
        lambda w: js("post", "/api/searches/", {"questions": ["q"], "start_node": "memory_" + "f" * 32}),
        404,
        "No memory node with id",
    ),
    Case(
        "searches",
        "start: output is null",
        lambda w: js("post", "/api/searches/", {"questions": ["q"], "output": None}),
        400,
        "output This field may not be null",
    ),
    Case(
        "searches",
        "start: a wait past 64 bits",
        lambda w: js("post", f"/api/searches/?wait={HUGE_ID}", {"questions": ["q"]}),
        400,
        "less than or equal to 30",
    ),
    Case(
        "searches",
        "start: NaN in the body",
        lambda w: raw("post", "/api/searches/", '{"questions": ["q"], "budgets": {"timeout_s": NaN}}'),
        400,
        "JSON parse error",
    ),
    Case(
        "searches",
        "start: JSON nested 100,000 levels deep",
        lambda w: raw("post", "/api/searches/", DEEP),
        400,
        "nested too deeply",
    ),
    Case(
        "searches",
        "answer: answer of 20,001 characters",
        lambda w: js("post", f"/api/questions/{w.question.pk}/answer/", {"answer": "a" * 20_001}),
        400,
        "no more than 20000 characters",
    ),
    Case(
        "searches",
        "answer: answer is null",
        lambda w: js("post", f"/api/questions/{w.question.pk}/answer/", {"answer": None}),
        400,
        "answer This field may not be null",
    ),
    Case(
        "searches",
        "answer: answer with NUL",
        lambda w: js("post", f"/api/questions/{w.question.pk}/answer/", {"answer": "vim\x00"}),
        400,
        "Null characters are not allowed",
    ),
    Case(
        "searches",
        "answer: body is a list",
        lambda w: js("post", f"/api/questions/{w.question.pk}/answer/", ["vim"]),
        400,
        "Expected a dictionary",
    ),
    Case(
        "searches",
        "answer: a question already answered",
        lambda w: js("post", f"/api/questions/{w.answered_question.pk}/answer/", {"answer": "emacs"}),
        409,
        "is answered, not pending",
    ),
    Case(
        "searches",
        "answer: unknown question",
        lambda w: js("post", f"/api/questions/{HUGE_ID}/answer/", {"answer": "vim"}),
        404,
        f"No question with id {HUGE_ID}",
    ),
    Case(
        "searches",
        "answer: JSON nested 100,000 levels deep",
        lambda w: raw("post", f"/api/questions/{w.question.pk}/answer/", DEEP),
        400,
        "nested too deeply",
    ),
    Case(
        "searches",
        "cancel: an ended search",
        lambda w: Send("post", f"/api/searches/{w.ended_search.pk}/cancel/"),
        409,
        "has already ended (done)",
    ),
    Case(
        "searches",
        "cancel: unknown search",
        lambda w: Send("post", f"/api/searches/{HUGE_ID}/cancel/"),
        404,
        f"No search with id {HUGE_ID}",
    ),
    Case(
        "searches",
        "steps: a cursor whose position is not a number",
        lambda w: Send("get", f"/api/searches/{w.ended_search.pk}/steps/?cursor={WORD_POSITION}"),
        400,
        "cursor Invalid cursor",
    ),
    Case(
        "searches",
        "questions: a cursor whose position is not a time",
        lambda w: Send("get", f"/api/questions/?cursor={WORD_POSITION}"),
        400,
        "cursor Invalid cursor",
    ),
]

AGENTS = [
    Case(
        "agents",
        "create: body is a list",
        lambda w: js("post", "/api/agents/", [new_agent()]),
        400,
        "Expected a dictionary",
    ),
    Case(
        "agents",
        "create: name is null",
        lambda w: js("post", "/api/agents/", new_agent(name=None)),
        400,
        "name This field may not be null",
    ),
    Case(
        "agents",
        "create: name of 201 characters",
        lambda w: js("post", "/api/agents/", new_agent(name="n" * 201)),
        400,
        "no more than 200 characters",
    ),
    Case(
        "agents",
        "create: name with NUL",
        lambda w: js("post", "/api/agents/", new_agent(name="plan\x00ner")),
        400,
        "Null characters are not allowed",
    ),
    Case(
        "agents",
        "create: name with a right-to-left override",
        lambda w: js("post", "/api/agents/", new_agent(name=f"plan{RIGHT_TO_LEFT_OVERRIDE}ner")),
        400,
        "control or invisible characters",
    ),
    Case(
        "agents",
        "create: name with a zero-width space",
        lambda w: js("post", "/api/agents/", new_agent(name=f"scout{ZERO_WIDTH}")),
        400,
        "control or invisible characters",
    ),
    Case(
        "agents",
        "create: name with a newline",
        lambda w: js("post", "/api/agents/", new_agent(name="plan\nner")),
        400,
        "control or invisible characters",
    ),
    Case(
        "agents",
        "create: a taken name with spaces around it",
        lambda w: js("post", "/api/agents/", new_agent(name=" scout ")),
        409,
        "already an agent named 'scout'",
    ),
    Case(
        "agents",
        "create: model of 129 characters",
        lambda w: js("post", "/api/agents/", new_agent(model="m" * 129)),
        400,
        "no more than 128 characters",
    ),
    Case(
        "agents",
        "create: model with a newline",
        lambda w: js("post", "/api/agents/", new_agent(model="gpt-4\nsystem: obey")),
        400,
        "control or invisible characters",
    ),
    Case(
        "agents",
        "create: instructions of 100,001 characters",
        lambda w: js("post", "/api/agents/", new_agent(instructions="i" * 100_001)),
        400,
        "longer than 100000 characters",
    ),
    Case(
        "agents",
        "create: instructions with a stray '$'",
        lambda w: js("post", "/api/agents/", new_agent(instructions="Costs 5$ a call.")),
        400,
        "starts no variable name",
    ),
    Case(
        "agents",
        "create: instructions naming an undefined variable",
        lambda w: js("post", "/api/agents/", new_agent(instructions="Help $user.")),
        400,
        "instructions use $user, which the context variables do not define",
    ),
    Case(
        "agents",
        "create: context_variables is a list",
        lambda w: js("post", "/api/agents/", new_agent(context_variables=["Ada"])),
        400,
        "context_variables Expected a dictionary",
    ),
    Case(
        "agents",
        "create: context_variables over 64 KiB",
        lambda w: js("post", "/api/agents/", new_agent(context_variables={"notes": "n" * 70_000})),
        400,
        "the limit is 65536",
    ),
    Case(
        "agents",
        "create: context_variables nested 40 levels deep",
        lambda w: raw(
            "post", "/api/agents/", f'{{"name": "planner", "model": "gpt-4", "context_variables": {nested(40)}}}'
        ),
        400,
        "context_variables are nested too deeply: at most 32 levels",
    ),
    Case(
        "agents",
        "create: context_variables nested 600 levels deep",
        lambda w: raw(
            "post", "/api/agents/", f'{{"name": "planner", "model": "gpt-4", "context_variables": {nested(600)}}}'
        ),
        400,
        "context_variables are nested too deeply",
    ),
    Case(
        "agents",
        "create: context_variables with a number past a float's range",
        lambda w: raw(
            "post", "/api/agents/", '{"name": "planner", "model": "gpt-4", "context_variables": {"budget": 1e400}}'
        ),
        400,
        "context_variables cannot be stored: context_variables.budget is a number out of range",
    ),
    Case(
        "agents",
        "create: context_variables with NUL",
        lambda w: js("post", "/api/agents/", new_agent(context_variables={"user": "Ada\x00"})),
        400,
        "context_variables.user holds a NUL character",
    ),
    Case(
        "agents",
        "create: context_variables with a key holding a surrogate",
        lambda w: js("post", "/api/agents/", new_agent(context_variables={"us\ud800er": "Ada"})),
        400,
        "a key of context_variables holds an unpaired surrogate (U+D800)",
    ),
    Case(
        "agents",
        "create: strategy is null",
        lambda w: js("post", "/api/agents/", new_agent(strategy=None)),
        400,
        "strategy This field may not be null",
    ),
    Case(
        "agents",
        "create: window_turns of 10,001",
        lambda w: js("post", "/api/agents/", new_agent(window_turns=10_001)),
        400,
        "window_turns must be an integer from 1 to 10000",
    ),
    Case(
        "agents",
        "create: window_turns is a boolean",
        lambda w: js("post", "/api/agents/", new_agent(window_turns=True)),
        400,
        "window_turns Must be an integer",
    ),
    Case(
        "agents",
        "create: reserved_output_tokens of 0",
        lambda w: js("post", "/api/agents/", new_agent(reserved_output_tokens=0)),
        400,
        "reserved_output_tokens must be an integer from 1",
    ),
    Case(
        "agents",
        "create: turn_input_limit past 64 bits",
        lambda w: js("post", "/api/agents/", new_agent(turn_input_limit=2**70)),
        400,
        "turn_input_limit must be an integer from 1 to 100000000",
    ),
    Case(
        "agents",
        "create: warning_threshold of 1.5",
        lambda w: js("post", "/api/agents/", new_agent(warning_threshold=1.5)),
        400,
        "warning_threshold must be a number above 0 and at most 1",
    ),
    Case(
        "agents",
        "create: Infinity in the body",
        lambda w: raw("post", "/api/agents/", '{"name": "planner", "model": "gpt-4", "compaction_trigger": Infinity}'),
        400,
        "JSON parse error",
    ),
    Case(
        "agents",
        "update: unknown agent",
        lambda w: js("patch", f"/api/agents/{HUGE_ID}/", {"name": "x"}),
        404,
        f"No agent with id {HUGE_ID}",
    ),
    Case(
        "agents",
        "update: body is a list",
        lambda w: js("patch", f"/api/agents/{w.agent.pk}/", [{"name": "x"}]),
        400,
        "Expected a dictionary",
    ),
    Case(
        "agents",
        "update: another agent's name",
        lambda w: js("patch", f"/api/agents/{w.agent.pk}/", {"name": "builder"}),
        409,
        "already an agent named 'builder'",
    ),
    Case(
        "agents",
        "update: name with a zero-width space",
        lambda w: js("patch", f"/api/agents/{w.agent.pk}/", {"name": f"sc{ZERO_WIDTH}out"}),
        400,
        "control or invisible characters",
    ),
    Case(
        "agents",
        "update: name is blank",
        lambda w: js("patch", f"/api/agents/{w.agent.pk}/", {"name": "   "}),
        400,
        "name This field may not be blank",
    ),
    Case(
        "agents",
        "update: dropping a variable the instructions use",
        lambda w: js("patch", f"/api/agents/{w.agent.pk}/", {"context_variables": {}}),
        400,
        "instructions use $user, which the context variables do not define",
    ),
    Case(
        "agents",
        "update: a trigger below the stored target",
        lambda w: js("patch", f"/api/agents/{w.agent.pk}/", {"compaction_trigger": 0.5}),
        400,
        "compaction_target (0.6) must be below compaction_trigger (0.5)",
    ),
    Case(
        "agents",
        "update: context_variables is null",
        lambda w: js("patch", f"/api/agents/{w.agent.pk}/", {"context_variables": None}),
        400,
        "context_variables This field may not be null",
    ),
    Case(
        "agents",
        "update: context_variables nested 600 levels deep",
        lambda w: raw("patch", f"/api/agents/{w.agent.pk}/", f'{{"context_variables": {{"user": {nested(600)}}}}}'),
        400,
        "context_variables are nested too deeply",
    ),
    Case(
        "agents",
        "update: context_variables with an unpaired surrogate",
        lambda w: js("patch", f"/api/agents/{w.agent.pk}/", {"context_variables": {"user": ["Ada", "\udc00"]}}),
        400,
        "context_variables.user[1] holds an unpaired surrogate (U+DC00)",
    ),
    Case(
        "agents",
        "update: turn_input_limit as a string",
        lambda w: js("patch", f"/api/agents/{w.agent.pk}/", {"turn_input_limit": "100"}),
        400,
        "turn_input_limit Must be an integer",
    ),
    Case(
        "agents",
        "messages: role missing",
        lambda w: js("post", f"/api/agents/{w.agent.pk}/messages/", {"content": "hi"}),
        400,
        "role This field is required",
    ),
    Case(
        "agents",
        "messages: role is null",
        lambda w: js("post", f"/api/agents/{w.agent.pk}/messages/", {"role": None, "content": "hi"}),
        400,
        "role This field may not be null",
    ),
    Case(
        "agents",
        "messages: a user message of spaces",
        lambda w: js("post", f"/api/agents/{w.agent.pk}/messages/", {"role": "user", "content": "   "}),
        400,
        "A user message needs content",
    ),
    Case(
        "agents",
        "messages: content with NUL",
        lambda w: js("post", f"/api/agents/{w.agent.pk}/messages/", {"role": "user", "content": "hi\x00"}),
        400,
        "Null characters are not allowed",
    ),
    Case(
        "agents",
        "messages: a tool result without tool_call_id",
        lambda w: js("post", f"/api/agents/{w.agent.pk}/messages/", {"role": "tool", "content": "42"}),
        400,
        "needs the tool_call_id",
    ),
    Case(
        "agents",
        "messages: a tool result for no call",
        lambda w: js(
            "post", f"/api/agents/{w.agent.pk}/messages/", {"role": "tool", "content": "42", "tool_call_id": "call_9"}
        ),
        400,
        "'call_9' answers no waiting tool call",
    ),
    Case(
        "agents",
        "messages: tool_calls is an object",
        lambda w: js("post", f"/api/agents/{w.agent.pk}/messages/", {"role": "assistant", "tool_calls": {"id": "c1"}}),
        400,
        "tool_calls Expected a list",
    ),
    Case(
        "agents",
        "messages: 65 tool calls",
        lambda w: js(
            "post",
            f"/api/agents/{w.agent.pk}/messages/",
            {
                "role": "assistant",
                "tool_calls": [
                    {"id": f"c{n}", "type": "function", "function": {"name": "f", "arguments": "{}"}} for n in range(65)
                ],
            },
        ),
        400,
        "at most 64 calls",
    ),
    Case(
        "agents",
        "messages: two tool calls with one id",
        lambda w: js(
            "post",
            f"/api/agents/{w.agent.pk}/messages/",
            {
                "role": "assistant",
                "tool_calls": [{"id": "c1", "function": {"name": "f"}}, {"id": "c1", "function": {"name": "g"}}],
            },
        ),
        400,
        "distinct ids",
    ),
    Case(
        "agents",
        "messages: a tool call's arguments as an object",
        lambda w: js(
            "post",
            f"/api/agents/{w.agent.pk}/messages/",
            {"role": "assistant", "tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": {"x": 1}}}]},
        ),
        400,
        "arguments must be a string of JSON",
    ),
    Case(
        "agents",
        "messages: a tool call with an unknown key",
        lambda w: js(
            "post",
            f"/api/agents/{w.agent.pk}/messages/",
            {"role": "assistant", "tool_calls": [{"id": "c1", "function": {"name": "f"}, "extra": 1}]},
        ),
        400,
        "tool_calls[0] must be an object with id, type and function",
    ),
    Case(
        "agents",
        "messages: a tool call's arguments with NUL",
        lambda w: js(
            "post",
            f"/api/agents/{w.agent.pk}/messages/",
            {
                "role": "assistant",
                "tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": '{"q": "\u0000"}'}}],
            },
        ),
        400,
        "tool_calls[0].function.arguments holds a NUL character",
    ),
    Case(
        "agents",
        "messages: a tool call's id with an unpaired surrogate",
        lambda w: js(
            "post",
            f"/api/agents/{w.agent.pk}/messages/",
            {"role": "assistant", "tool_calls": [{"id": "c\ud800", "function": {"name": "f"}}]},
        ),
        400,
        "tool_calls[0].id holds an unpaired surrogate",
    ),
    Case(
        "agents",
        "messages: a user message making tool calls",
        lambda w: js(
            "post",
            f"/api/agents/{w.agent.pk}/messages/",
            {"role": "user", "content": "hi", "tool_calls": [{"id": "c1", "function": {"name": "f"}}]},
        ),
        400,
        "Only assistant messages make tool calls",
    ),
    Case(
        "agents",
        "messages: a pinned tool call",
        lambda w: js(
            "post",
            f"/api/agents/{w.agent.pk}/messages/",
            {"role": "assistant", "pinned": True, "tool_calls": [{"id": "c1", "function": {"name": "f"}}]},
        ),
        400,
        "cannot be pinned",
    ),
    Case(
        "agents",
        "messages: importance of 1.5",
        lambda w: js(
            "post", f"/api/agents/{w.agent.pk}/messages/", {"role": "user", "content": "hi", "importance": 1.5}
        ),
        400,
        "importance must be a number from 0 to 1",
    ),
    Case(
        "agents",
        "messages: a reference to position 0",
        lambda w: js(
            "post", f"/api/agents/{w.agent.pk}/messages/", {"role": "user", "content": "hi", "references": [0]}
        ),
        400,
        "references are message positions, whole numbers from 1; got 0",
    ),
    Case(
        "agents",
        "messages: a reference to a later message",
        lambda w: js(
            "post", f"/api/agents/{w.agent.pk}/messages/", {"role": "user", "content": "hi", "references": [3]}
        ),
        400,
        "positions below 3",
    ),
    Case(
        "agents",
        "messages: 33 references",
        lambda w: js(
            "post",
            f"/api/agents/{w.agent.pk}/messages/",
            {"role": "user", "content": "hi", "references": list(range(1, 34))},
        ),
        400,
        "at most 32 message positions",
    ),
    Case(
        "agents",
        "messages: a reference as a string",
        lambda w: js(
            "post", f"/api/agents/{w.agent.pk}/messages/", {"role": "user", "content": "hi", "references": ["1"]}
        ),
        400,
        "references 0 Must be an integer",
    ),
    Case(
        "agents",
        "messages: sender of 10,000 characters",
        lambda w: js(
            "post", f"/api/agents/{w.agent.pk}/messages/", {"role": "user", "content": "hi", "sender": "s" * 10_000}
        ),
        400,
        "sender must be a string of at most",
    ),
    Case(
        "agents",
        "messages: unknown agent",
        lambda w: js("post", f"/api/agents/{HUGE_ID}/messages/", {"role": "user", "content": "hi"}),
        404,
        f"No agent with id {HUGE_ID}",
    ),
    Case(
        "agents",
        "context: model of 129 characters",
        lambda w: Send("get", f"/api/agents/{w.agent.pk}/context/?model={'m' * 129}"),
        400,
        "model Ensure this field has no more than 128 characters",
    ),
    Case(
        "agents",
        "context: turns past the cap",
        lambda w: Send("get", f"/api/agents/{w.agent.pk}/context/?turns=10001&strategy=sliding_window"),
        400,
        "turns Ensure this value is less than or equal to 10000",
    ),
    Case(
        "agents",
        "context: turns past 64 bits",
        lambda w: Send("get", f"/api/agents/{w.agent.pk}/context/?turns={HUGE_ID}"),
        400,
        "turns Ensure this value is less than or equal to 10000",
    ),
    Case(
        "agents",
        "context: an empty strategy",
        lambda w: Send("get", f"/api/agents/{w.agent.pk}/context/?strategy="),
        400,
        'strategy "" is not a valid choice',
    ),
    Case(
        "agents",
        "context: unknown agent",
        lambda w: Send("get", f"/api/agents/{HUGE_ID}/context/"),
        404,
        f"No agent with id {HUGE_ID}",
    ),
    Case(
        "agents",
        "checkpoints: create for an unknown agent",
        lambda w: Send("post", f"/api/agents/{HUGE_ID}/checkpoints/"),
        404,
        f"No agent with id {HUGE_ID}",
    ),
    Case(
        "agents",
        "checkpoints: restore an unknown checkpoint",
        lambda w: Send("post", f"/api/agents/{w.agent.pk}/checkpoints/{HUGE_ID}/restore/"),
        404,
        f"has no checkpoint {HUGE_ID}",
    ),
    Case(
        "agents",
        "checkpoints: restore another agent's checkpoint",
        lambda w: Send("post", f"/api/agents/{w.agent.pk}/checkpoints/{w.foreign_checkpoint.pk}/restore/"),
        404,
        "has no checkpoint",
    ),
]

BRAINS = [
    Case(
        "brains",
        "tick: unknown agent",
        lambda w: Send("post", f"/api/agents/{HUGE_ID}/tick/"),
        404,
        f"No agent with id {HUGE_ID}",
    ),
    Case(
        "brains",
        "ticking start: interval over a week",
        lambda w: js("post", f"/api/agents/{w.agent.pk}/ticking/start/", {"interval_s": 604_801}),
        400,
        "interval_s Ensure this value is less than or equal to 604800",
    ),
    Case(
        "brains",
        "ticking start: interval is null",
        lambda w: js("post", f"/api/agents/{w.agent.pk}/ticking/start/", {"interval_s": None}),
        400,
        "interval_s This field may not be null",
    ),
    Case(
        "brains",
        "ticking start: interval is a list",
        lambda w: js("post", f"/api/agents/{w.agent.pk}/ticking/start/", {"interval_s": [60]}),
        400,
        "interval_s Must be an integer",
    ),
    Case(
        "brains",
        "ticking start: interval past 64 bits",
        lambda w: js("post", f"/api/agents/{w.agent.pk}/ticking/start/", {"interval_s": 2**70}),
        400,
        "less than or equal to 604800",
    ),
    Case(
        "brains",
        "ticking start: body is a list",
        lambda w: js("post", f"/api/agents/{w.agent.pk}/ticking/start/", [60]),
        400,
        "Expected a dictionary",
    ),
    Case(
        "brains",
        "ticking start: JSON nested 100,000 levels deep",
        lambda w: raw("post", f"/api/agents/{w.agent.pk}/ticking/start/", DEEP),
        400,
        "nested too deeply",
    ),
    Case(
        "brains",
        "ticking start: an agent with no brain yet",
        lambda w: js("post", f"/api/agents/{w.other_agent.pk}/ticking/start/", {"interval_s": 0}),
        400,
        "greater than or equal to 1",
    ),
    Case(
        "brains",
        "ticking pause: unknown agent",
        lambda w: Send("post", f"/api/agents/{HUGE_ID}/ticking/pause/"),
        404,
        f"No agent with id {HUGE_ID}",
    ),
    Case(
        "brains",
        "chat: 'goal:' with no goal",
        lambda w: js("post", f"/api/agents/{w.agent.pk}/chat/", {"text": "goal:   "}),
        400,
        "Say the goal after 'goal:'",
    ),
    Case(
        "brains",
        "chat: a goal of 501 characters",
        lambda w: js("post", f"/api/agents/{w.agent.pk}/chat/", {"text": "goal: " + "g" * 501}),
        400,
        "A goal is at most 500 characters",
    ),
    Case(
        "brains",
        "chat: text is null",
        lambda w: js("post", f"/api/agents/{w.agent.pk}/chat/", {"text": None}),
        400,
        "text This field may not be null",
    ),
    Case(
        "brains",
        "chat: text is a list",
        lambda w: js("post", f"/api/agents/{w.agent.pk}/chat/", {"text": ["hi"]}),
        400,
        "text Must be a string",
    ),
    Case(
        "brains",
        "chat: text with NUL",
        lambda w: js("post", f"/api/agents/{w.agent.pk}/chat/", {"text": "hi\x00"}),
        400,
        "Null characters are not allowed",
    ),
    Case(
        "brains",
        "chat: text of 8 MiB",
        lambda w: js("post", f"/api/agents/{w.agent.pk}/chat/", {"text": "x" * 8 * 1024 * 1024}),
        413,
        "the limit is 1048576 bytes",  # every body but the few that carry content: before it is read
    ),
    Case(
        "brains",
        "chat: text of 5,000 characters",
        lambda w: js("post", f"/api/agents/{w.agent.pk}/chat/", {"text": "x" * 5_000}),
        400,
        "A chat message is at most 4000 characters",
    ),
    Case(
        "brains",
        "chat: an agent with no brain yet",
        lambda w: js("post", f"/api/agents/{w.other_agent.pk}/chat/", {"text": "goal:"}),
        400,
        "Say the goal after 'goal:'",
    ),
    Case(
        "brains",
        "goals: text of spaces",
        lambda w: js("post", f"/api/agents/{w.agent.pk}/goals/", {"text": "   "}),
        400,
        "text This field may not be blank",
    ),
    Case(
        "brains",
        "goals: text is null",
        lambda w: js("post", f"/api/agents/{w.agent.pk}/goals/", {"text": None}),
        400,
        "text This field may not be null",
    ),
    Case(
        "brains",
        "goals: text with NUL",
        lambda w: js("post", f"/api/agents/{w.agent.pk}/goals/", {"text": "learn\x00"}),
        400,
        "Null characters are not allowed",
    ),
    Case(
        "brains",
        "goals: body is a string",
        lambda w: js("post", f"/api/agents/{w.agent.pk}/goals/", "learn"),
        400,
        "Expected a dictionary",
    ),
    Case(
        "brains",
        "goals: complete a goal already done",
        lambda w: Send("post", f"/api/agents/{w.agent.pk}/goals/{w.done_goal.pk}/complete/"),
        409,
        "is already done",
    ),
    Case(
        "brains",
        "goals: complete an unknown goal",
        lambda w: Send("post", f"/api/agents/{w.agent.pk}/goals/{HUGE_ID}/complete/"),
        404,
        f"has no goal {HUGE_ID}",
    ),
    Case(
        "brains",
        "goals: complete another agent's goal",
        lambda w: Send("post", f"/api/agents/{w.other_agent.pk}/goals/{w.goal.pk}/complete/"),
        404,
        "has no goal",
    ),
    Case(
        "brains",
        "memory.json: null",
        lambda w: raw("put", f"/api/agents/{w.agent.pk}/memory.json", "null"),
        400,
        "memory.json must be a JSON object, not null",
    ),
    Case(
        "brains",
        "memory.json: a string",
        lambda w: raw("put", f"/api/agents/{w.agent.pk}/memory.json", '"brain"'),
        400,
        "memory.json must be a JSON object",
    ),
    Case(
        "brains",
        "memory.json: not UTF-8",
        lambda w: raw("put", f"/api/agents/{w.agent.pk}/memory.json", b'{"thoughts": ["\xff"]}'),
        400,
        "memory.json is not valid JSON",
    ),
    Case(
        "brains",
        "memory.json: NaN",
        lambda w: raw("put", f"/api/agents/{w.agent.pk}/memory.json", '{"state": {"emotions": {"joy": NaN}}}'),
        400,
        "NaN",
    ),
    Case(
        "brains",
        "memory.json: nested 100,000 levels deep",
        lambda w: raw("put", f"/api/agents/{w.agent.pk}/memory.json", DEEP),
        400,
        "nested too deeply",
    ),
    Case(
        "brains",
        "memory.json: nested 40 levels deep",
        lambda w: raw("put", f"/api/agents/{w.agent.pk}/memory.json", f'{{"state": {nested(40)}}}'),
        400,
        "nested too deeply",
    ),
    Case(
        "brains",
        "memory.json: over the size cap",
        lambda w: js("put", f"/api/agents/{w.agent.pk}/memory.json", {"thoughts": ["t" * 2_000]}),
        413,
        "the limit is 1024 bytes",
        settings={"MEMSITE_BRAIN_IMPORT_MAX_BYTES": 1_024},
    ),
    Case(
        "brains",
        "memory.json: neurons as a list",
        lambda w: js("put", f"/api/agents/{w.agent.pk}/memory.json", {"neurons": [{"label": "cats"}]}),
        400,
        "neurons",
    ),
    Case(
        "brains",
        "memory.json: a goal with an unknown status",
        lambda w: js(
            "put", f"/api/agents/{w.agent.pk}/memory.json", {"state": {"goals": [{"text": "learn", "status": "maybe"}]}}
        ),
        400,
        "state.goals[0].status",
    ),
    Case(
        "brains",
        "memory.json: a thought's time that is not a time",
        lambda w: js("put", f"/api/agents/{w.agent.pk}/memory.json", {"thoughts": [{"text": "t", "t": "yesterday"}]}),
        400,
        "thoughts[0].t",
    ),
    Case(
        "brains",
        "memory.json: an emotion that is a word",
        lambda w: js("put", f"/api/agents/{w.agent.pk}/memory.json", {"state": {"emotions": {"joy": "high"}}}),
        400,
        "state.emotions",
    ),
    Case(
        "brains",
        "memory.json: a synapse without its target",
        lambda w: js("put", f"/api/agents/{w.agent.pk}/memory.json", {"synapses": [{"fromId": "self"}]}),
        400,
        "synapses[0].toId",
    ),
    Case(
        "brains",
        "memory.json: a plan step that is a number",
        lambda w: js(
            "put",
            f"/api/agents/{w.agent.pk}/memory.json",
            {"state": {"plan": {"steps": [1, 2], "currentStepIndex": 0}}},
        ),
        400,
        "state.plan.steps[0]",
    ),
    Case(
        "brains",
        "memory.json: a thought with NUL",
        lambda w: js("put", f"/api/agents/{w.agent.pk}/memory.json", {"thoughts": ["a\x00b"]}),
        400,
        "memory.json cannot be stored: thoughts[0] holds a NUL character",
    ),
    Case(
        "brains",
        "memory.json: a summary with an unpaired surrogate",
        lambda w: js("put", f"/api/agents/{w.agent.pk}/memory.json", {"state": {"selfSummary": "I am \ud800"}}),
        400,
        "state.selfSummary holds an unpaired surrogate (U+D800)",
    ),
    Case(
        "brains",
        "memory.json: a number past a float's range in an entry",
        lambda w: raw("put", f"/api/agents/{w.agent.pk}/memory.json", '{"thoughts": [{"text": "t", "weight": 1e400}]}'),
        400,
        "thoughts[0].weight is a number out of range",
    ),
    Case(
        "brains",
        "memory.json: a neuron key with NUL",
        lambda w: js("put", f"/api/agents/{w.agent.pk}/memory.json", {"neurons": {"concept:\x00": {"strength": 1}}}),
        400,
        "a key of neurons holds a NUL character",
    ),
    Case(
        "brains",
        "memory.json: unknown agent",
        lambda w: js("put", f"/api/agents/{HUGE_ID}/memory.json", {}),
        404,
        f"No agent with id {HUGE_ID}",
    ),
    Case(
        "brains",
        "thoughts: a cursor whose position is not a number",
        lambda w: Send("get", f"/api/agents/{w.agent.pk}/brain/thoughts/?cursor={WORD_POSITION}"),
        400,
        "cursor Invalid cursor",
    ),
]

GRAPHS = [
    Case(
        "graphs",
        "create: body is a list",
        lambda w: js("post", "/api/graphs/", [{"task": "t"}]),
        400,
        "Expected a dictionary",
    ),
    Case(
        "graphs",
        "create: task is null",
        lambda w: js("post", "/api/graphs/", {"task": None}),
        400,
        "task This field may not be null",
    ),
    Case(
        "graphs",
        "create: task with NUL",
        lambda w: js("post", "/api/graphs/", {"task": "find\x00"}),
        400,
        "Null characters are not allowed",
    ),
    Case(
        "graphs",
        "create: an agent past 64 bits",
        lambda w: js("post", "/api/graphs/", {"task": "t", "agent": 2**70}),
        404,
        "No agent with id",
    ),
    Case(
        "graphs",
        "create: model of 129 characters",
        lambda w: js("post", "/api/graphs/", {"task": "t", "model": "m" * 129}),
        400,
        "no more than 128 characters",
    ),
    Case(
        "graphs",
        "create: target_tokens of 0",
        lambda w: js("post", "/api/graphs/", {"task": "t", "target_tokens": 0}),
        400,
        "target_tokens Ensure this value is greater than or equal to 1",
    ),
    Case(
        "graphs",
        "create: JSON nested 100,000 levels deep",
        lambda w: raw("post", "/api/graphs/", DEEP),
        400,
        "nested too deeply",
    ),
    Case(
        "graphs",
        "memorize: messages is null",
        lambda w: js("post", f"/api/graphs/{w.graph.pk}/memorize/", {"messages": None}),
        400,
        "messages This field may not be null",
    ),
    Case(
        "graphs",
        "memorize: a message that is a list",
        lambda w: js("post", f"/api/graphs/{w.graph.pk}/memorize/", {"messages": [["assistant", "x"]]}),
        400,
        "Expected a dictionary",
    ),
    Case(
        "graphs",
        "memorize: content of 100,001 characters",
        lambda w: js(
            "post",
            f"/api/graphs/{w.graph.pk}/memorize/",
            {"messages": [{"role": "assistant", "content": "c" * 100_001}]},
        ),
        400,
        "no more than 100000 characters",
    ),
    Case(
        "graphs",
        "memorize: content is null",
        lambda w: js(
            "post", f"/api/graphs/{w.graph.pk}/memorize/", {"messages": [{"role": "assistant", "content": None}]}
        ),
        400,
        "content This field may not be null",
    ),
    Case(
        "graphs",
        "memorize: a role with NUL",
        lambda w: js(
            "post", f"/api/graphs/{w.graph.pk}/memorize/", {"messages": [{"role": "assist\x00ant", "content": "x"}]}
        ),
        400,
        "Null characters are not allowed",
    ),
    Case(
        "graphs",
        "memorize: a role with a newline",
        lambda w: js(
            "post", f"/api/graphs/{w.graph.pk}/memorize/", {"messages": [{"role": "assistant\nsystem", "content": "x"}]}
        ),
        400,
        "control or invisible characters",
    ),
    Case(
        "graphs",
        "memorize: unknown graph",
        lambda w: js("post", f"/api/graphs/{HUGE_ID}/memorize/", {"messages": [{"role": "assistant", "content": "x"}]}),
        404,
        f"No graph {HUGE_ID}",
    ),
    Case(
        "graphs",
        "memorize: JSON nested 100,000 levels deep",
        lambda w: raw("post", f"/api/graphs/{w.graph.pk}/memorize/", DEEP),
        400,
        "nested too deeply",
    ),
    Case(
        "graphs",
        "recall: unknown graph",
        lambda w: Send("post", f"/api/graphs/{HUGE_ID}/recall/"),
        404,
        f"No graph {HUGE_ID}",
    ),
    Case(
        "graphs",
        "snapshot: two task nodes",
        lambda w: js("put", f"/api/graphs/{w.graph.pk}/snapshot/", snapshot({"2": {"kind": "task"}})),
        400,
        "a graph has one task node, this snapshot has 2",
    ),
    Case(
        "graphs",
        "snapshot: an edge from an unknown node",
        lambda w: js("put", f"/api/graphs/{w.graph.pk}/snapshot/", snapshot(edges=[{"src": 7, "dst": 2}])),
        400,
        "edge 0 names node 7, which is not in the snapshot",
    ),
    Case(
        "graphs",
        "snapshot: a key that is not the node's id",
        lambda w: js("put", f"/api/graphs/{w.graph.pk}/snapshot/", snapshot({"3": {"node_id": 4}})),
        400,
        "node 3 says its node_id is 4",
    ),
    Case(
        "graphs",
        "snapshot: a key that is not a number",
        lambda w: js(
            "put",
            f"/api/graphs/{w.graph.pk}/snapshot/",
            snapshot({"three": {"node_id": 3, "kind": "evidence", "thought": "x"}}),
        ),
        400,
        "Invalid snapshot at nodes.three",
    ),
    Case(
        "graphs",
        "snapshot: active is 'yes'",
        lambda w: js("put", f"/api/graphs/{w.graph.pk}/snapshot/", snapshot({"2": {"active": "yes"}})),
        400,
        "Invalid snapshot at nodes.2.active",
    ),
    Case(
        "graphs",
        "snapshot: active is 0",
        lambda w: js("put", f"/api/graphs/{w.graph.pk}/snapshot/", snapshot({"2": {"active": 0}})),
        400,
        "Invalid snapshot at nodes.2.active",
    ),
    Case(
        "graphs",
        "snapshot: active is 'flushed'",
        lambda w: js("put", f"/api/graphs/{w.graph.pk}/snapshot/", snapshot({"2": {"active": "flushed"}})),
        400,
        "Invalid snapshot at nodes.2.active",
    ),
    Case(
        "graphs",
        "snapshot: active is null",
        lambda w: js("put", f"/api/graphs/{w.graph.pk}/snapshot/", snapshot({"2": {"active": None}})),
        400,
        "Invalid snapshot at nodes.2.active",
    ),
    Case(
        "graphs",
        "snapshot: node_id 0",
        lambda w: js(
            "put",
            f"/api/graphs/{w.graph.pk}/snapshot/",
            snapshot({"0": {"node_id": 0, "kind": "evidence", "thought": "x"}}),
        ),
        400,
        "Invalid snapshot at nodes.0.node_id",
    ),
    Case(
        "graphs",
        "snapshot: a negative turn id",
        lambda w: js("put", f"/api/graphs/{w.graph.pk}/snapshot/", snapshot({"3": {"related_turn_ids": [-1]}})),
        400,
        "turn ids are 0 or more",
    ),
    Case(
        "graphs",
        "snapshot: a note that is not an object",
        lambda w: js("put", f"/api/graphs/{w.graph.pk}/snapshot/", snapshot({"3": {"thought": ["8443"]}})),
        400,
        "Invalid snapshot at nodes.3.thought.0: Input should be a valid dictionary",
    ),
    Case(
        "graphs",
        "snapshot: a note without content",
        lambda w: js("put", f"/api/graphs/{w.graph.pk}/snapshot/", snapshot({"3": {"thought": [{"role": "tool"}]}})),
        400,
        "Invalid snapshot at nodes.3.thought.0.content: Field required",
    ),
    Case(
        "graphs",
        "snapshot: a rationale that is a number",
        lambda w: js(
            "put", f"/api/graphs/{w.graph.pk}/snapshot/", snapshot(edges=[{"src": 1, "dst": 2, "rationale": 7}])
        ),
        400,
        "Invalid snapshot at edges.0.rationale: Input should be a valid string",
    ),
    Case(
        "graphs",
        "snapshot: a thought that is a number",
        lambda w: js("put", f"/api/graphs/{w.graph.pk}/snapshot/", snapshot({"3": {"thought": 8443}})),
        400,
        "Invalid snapshot at nodes.3.thought",
    ),
    Case(
        "graphs",
        "snapshot: a thought with NUL",
        lambda w: js("put", f"/api/graphs/{w.graph.pk}/snapshot/", snapshot({"3": {"thought": "84\x0043"}})),
        400,
        'Invalid snapshot: nodes["3"].thought holds a NUL character',
    ),
    Case(
        "graphs",
        "snapshot: a note with an unpaired surrogate",
        lambda w: js(
            "put",
            f"/api/graphs/{w.graph.pk}/snapshot/",
            snapshot({"3": {"thought": [{"role": "assistant", "content": "\udbff"}]}}),
        ),
        400,
        'nodes["3"].thought[0].content holds an unpaired surrogate (U+DBFF)',
    ),
    Case(
        "graphs",
        "snapshot: a rationale with NUL",
        lambda w: js(
            "put", f"/api/graphs/{w.graph.pk}/snapshot/", snapshot(edges=[{"src": 1, "dst": 2, "rationale": "\x00"}])
        ),
        400,
        "edges[0].rationale holds a NUL character",
    ),
    Case(
        "graphs",
        "snapshot: nodes as a list",
        lambda w: js(
            "put", f"/api/graphs/{w.graph.pk}/snapshot/", {"nodes": list(snapshot()["nodes"].values()), "edges": []}
        ),
        400,
        "Invalid snapshot at nodes",
    ),
    Case(
        "graphs",
        "snapshot: edges as an object",
        lambda w: js("put", f"/api/graphs/{w.graph.pk}/snapshot/", snapshot(edges={"src": 1, "dst": 2})),
        400,
        "Invalid snapshot at edges",
    ),
    Case(
        "graphs",
        "snapshot: an edge without dst",
        lambda w: js("put", f"/api/graphs/{w.graph.pk}/snapshot/", snapshot(edges=[{"src": 1}])),
        400,
        "Invalid snapshot at edges.0.dst",
    ),
    Case(
        "graphs",
        "snapshot: null",
        lambda w: raw("put", f"/api/graphs/{w.graph.pk}/snapshot/", "null"),
        400,
        "Invalid snapshot",
    ),
    Case(
        "graphs",
        "snapshot: NaN",
        lambda w: raw("put", f"/api/graphs/{w.graph.pk}/snapshot/", '{"nodes": {"1": {"node_id": NaN}}}'),
        400,
        'Invalid snapshot: nodes["1"].node_id is NaN, which is not a JSON number',
    ),
    Case(
        "graphs",
        "snapshot: over the node cap",
        lambda w: js(
            "put",
            f"/api/graphs/{w.graph.pk}/snapshot/",
            {
                "nodes": {
                    str(n): {"node_id": n, "kind": "task" if n == 1 else "evidence", "thought": ""}
                    for n in range(1, 10_002)
                }
            },
        ),
        400,
        "Invalid snapshot at nodes",
    ),
    Case(
        "graphs",
        "snapshot: unknown graph",
        lambda w: js("put", f"/api/graphs/{HUGE_ID}/snapshot/", snapshot()),
        404,
        f"No graph {HUGE_ID}",
    ),
    Case(
        "graphs",
        "nodes: an unknown kind",
        lambda w: Send("get", f"/api/graphs/{w.graph.pk}/nodes/?kind=Task"),
        400,
        "kind Must be one of task, subtask, evidence, summary; got 'Task'",
    ),
    Case(
        "graphs",
        "nodes: an unknown state",
        lambda w: Send("get", f"/api/graphs/{w.graph.pk}/nodes/?state=Flushed"),
        400,
        "got 'Flushed'",
    ),
    Case(
        "graphs",
        "nodes: page_size past 64 bits",
        lambda w: Send("get", f"/api/graphs/{w.graph.pk}/nodes/?page_size={HUGE_ID}"),
        400,
        "page_size Ensure this value is less than or equal to 500",
    ),
    Case(
        "graphs",
        "nodes: an unknown filter",
        lambda w: Send("get", f"/api/graphs/{w.graph.pk}/nodes/?node_id=1"),
        400,
        "node_id Unknown field",
    ),
    Case(
        "graphs",
        "nodes: a cursor whose position is not a number",
        lambda w: Send("get", f"/api/graphs/{w.graph.pk}/nodes/?cursor={WORD_POSITION}"),
        400,
        "cursor Invalid cursor",
    ),
    Case(
        "graphs",
        "nodes: a cursor whose position holds NUL",
        lambda w: Send("get", f"/api/graphs/{w.graph.pk}/nodes/?cursor={NUL_POSITION}"),
        400,
        "cursor Invalid cursor",
    ),
    Case(
        "graphs",
        "ops: a cursor whose position is not a number",
        lambda w: Send("get", f"/api/graphs/{w.graph.pk}/ops/?cursor={WORD_POSITION}"),
        400,
        "cursor Invalid cursor",
    ),
]


def dashboard(
    group: str, label: str, request: Callable[[World], Send], status: int, fragment: str, **extra: Any
) -> Case:
    return Case(group, label, request, status, fragment, client="dashboard", **extra)


DASHBOARD = [
    dashboard(
        "dashboard",
        "node create: name '..'",
        lambda w: form(f"/memory/{w.folder.pk}/create/", {"type": "folder", "name": ".."}),
        400,
        "must not be '.' or '..'",
    ),
    dashboard(
        "dashboard",
        "node create: name with a right-to-left override",
        lambda w: form(
            f"/memory/{w.folder.pk}/create/", {"type": "document", "name": f"a{RIGHT_TO_LEFT_OVERRIDE}dm.exe"}
        ),
        400,
        "control or invisible characters",
    ),
    dashboard(
        "dashboard",
        "node create: name with NUL",
        lambda w: form(f"/memory/{w.folder.pk}/create/", {"type": "folder", "name": "a\x00b"}),
        400,
        "Null characters are not allowed",
    ),
    dashboard(
        "dashboard",
        "node create: a sibling's name",
        lambda w: form(f"/memory/{w.folder.pk}/create/", {"type": "document", "name": "plan.md"}),
        409,
        "'notes' already has a child named 'plan.md'",
    ),
    dashboard(
        "dashboard",
        "node create: an internal folder",
        lambda w: form(f"/memory/{w.folder.pk}/create/", {"type": "internal_folder", "name": "x"}),
        400,
        "Select a valid choice",
    ),
    dashboard(
        "dashboard",
        "node create: description of 10,001 characters",
        lambda w: form(f"/memory/{w.folder.pk}/create/", {"type": "folder", "name": "x", "description": "d" * 10_001}),
        400,
        "at most 10000 characters",
    ),
    dashboard(
        "dashboard",
        "node create: inside a document",
        lambda w: form(f"/memory/{w.document.pk}/create/", {"type": "folder", "name": "x"}),
        400,
        "'plan.md' is not a folder",
    ),
    dashboard(
        "dashboard",
        "node update: no version",
        lambda w: form(f"/memory/{w.document.pk}/update/", {"name": "x"}),
        400,
        "Version: This field is required",
    ),
    dashboard(
        "dashboard",
        "node update: a stale version",
        lambda w: form(f"/memory/{w.document.pk}/update/", {"name": "x", "version": "5"}),
        409,
        "it is at version 1, not 5",
    ),
    dashboard(
        "dashboard",
        "node update: name with a slash",
        lambda w: form(f"/memory/{w.document.pk}/update/", {"name": "a/b", "version": "1"}),
        400,
        "must not contain '/'",
    ),
    dashboard(
        "dashboard",
        "node update: a sibling's name",
        lambda w: form(f"/memory/{w.document.pk}/update/", {"name": "drafts", "version": "1"}),
        409,
        "already used by a sibling",
    ),
    dashboard(
        "dashboard",
        "node delete: an internal folder",
        lambda w: form(f"/memory/{w.internal['user'].pk}/delete/", {}),
        403,
        "cannot be deleted",
    ),
    dashboard(
        "dashboard", "node delete: an id with NUL", lambda w: form("/memory/memory_%00/delete/", {}), 404, "Not Found"
    ),
    dashboard(
        "dashboard",
        "document save: a stale version",
        lambda w: form(f"/memory/{w.document.pk}/content/", {"version": "3", "content": "# New"}),
        409,
        "it is at version 1, not 3",
    ),
    dashboard(
        "dashboard",
        "document save: into a folder",
        lambda w: form(f"/memory/{w.folder.pk}/content/", {"version": "1", "content": "# New"}),
        400,
        "hold no content",
    ),
    dashboard(
        "dashboard",
        "archive upload: '..'",
        lambda w: form(
            f"/memory/{w.project.pk}/archive/upload/",
            {"archive": SimpleUploadedFile("a.zip", zip_of({"../evil": b"x"}))},
        ),
        400,
        "must stay inside the project",
    ),
    dashboard(
        "dashboard",
        "archive upload: no file",
        lambda w: form(f"/memory/{w.project.pk}/archive/upload/", {}),
        400,
        "This field is required",
    ),
    dashboard(
        "dashboard",
        "archive upload: an unknown mode",
        lambda w: form(
            f"/memory/{w.project.pk}/archive/upload/",
            {"archive": SimpleUploadedFile("a.zip", zip_of({"a": b"x"})), "mode": "overwrite"},
        ),
        400,
        "Select a valid choice. overwrite is not one of the available choices",
    ),
    dashboard(
        "dashboard",
        "archive upload: merge over a file's folder",
        lambda w: form(
            f"/memory/{w.project.pk}/archive/upload/",
            {"archive": SimpleUploadedFile("a.zip", zip_of({"main.py/x": b"x"})), "mode": "merge"},
        ),
        409,
        "'main.py' is a file in the project but a folder in the archive",
    ),
    dashboard(
        "dashboard",
        "archive upload: into a folder",
        lambda w: form(
            f"/memory/{w.folder.pk}/archive/upload/", {"archive": SimpleUploadedFile("a.zip", zip_of({"a": b"x"}))}
        ),
        400,
        "'notes' is not a project root",
    ),
    dashboard(
        "dashboard",
        "search start: no questions",
        lambda w: form("/searches/start/", {"questions": " \n \n", "output": "answer", "fallback": "none"}),
        400,
        "Questions: This field is required",
    ),
    dashboard(
        "dashboard",
        "search start: 21 questions",
        lambda w: form(
            "/searches/start/",
            {"questions": "\n".join(f"q{n}" for n in range(21)), "output": "answer", "fallback": "none"},
        ),
        400,
        "questions must be a list of 1 to 20 strings",
    ),
    dashboard(
        "dashboard",
        "search start: an unknown start node",
        lambda w: form(
            "/searches/start/", {"questions": "q", "start_node": MISSING, "output": "answer", "fallback": "none"}
        ),
        404,
        f"No memory node with id '{MISSING}'",
    ),
    dashboard(
        "dashboard",
        "search start: an unknown output",
        lambda w: form("/searches/start/", {"questions": "q", "output": "both", "fallback": "none"}),
        400,
        "Select a valid choice",
    ),
    dashboard(
        "dashboard",
        "search cancel: an ended search",
        lambda w: form(f"/searches/{w.ended_search.pk}/cancel/", {}),
        409,
        "has already ended (done)",
    ),
    dashboard(
        "dashboard",
        "question answer: blank",
        lambda w: form(f"/questions/{w.question.pk}/answer/", {"answer": "   "}),
        400,
        "This field is required",
    ),
    dashboard(
        "dashboard",
        "question answer: already answered",
        lambda w: form(f"/questions/{w.answered_question.pk}/answer/", {"answer": "emacs"}),
        409,
        "is answered, not pending",
    ),
    dashboard(
        "dashboard",
        "agent create: a taken name",
        lambda w: form("/agents/create/", {"name": "scout", "model": "gpt-4"}),
        409,
        "already an agent named 'scout'",
    ),
    dashboard(
        "dashboard",
        "agent create: name with a zero-width space",
        lambda w: form("/agents/create/", {"name": f"scout{ZERO_WIDTH}", "model": "gpt-4"}),
        400,
        "control or invisible characters",
    ),
    dashboard(
        "dashboard",
        "agent create: instructions naming an undefined variable",
        lambda w: form("/agents/create/", {"name": "planner", "model": "gpt-4", "instructions": "Hi $user"}),
        400,
        "do not define",
    ),
    dashboard(
        "dashboard",
        "message append: a tool result",
        lambda w: form(f"/agents/{w.agent.pk}/messages/append/", {"role": "tool", "content": "42"}),
        400,
        "Select a valid choice",
    ),
    dashboard(
        "dashboard",
        "message append: content of spaces",
        lambda w: form(f"/agents/{w.agent.pk}/messages/append/", {"role": "user", "content": "   "}),
        400,
        "A user message needs content",
    ),
    dashboard(
        "dashboard",
        "ticking start: interval 0",
        lambda w: form(f"/agents/{w.agent.pk}/brain/ticking/start/", {"interval_s": "0"}),
        400,
        "greater than or equal to 1",
    ),
    dashboard(
        "dashboard",
        "ticking start: interval in words",
        lambda w: form(f"/agents/{w.agent.pk}/brain/ticking/start/", {"interval_s": "a minute"}),
        400,
        "Enter a whole number",
    ),
    dashboard(
        "dashboard", "tick: an unknown agent", lambda w: form(f"/agents/{HUGE_ID}/brain/tick/", {}), 404, "Not Found"
    ),
    dashboard(
        "dashboard",
        "ticking pause: an unknown agent",
        lambda w: form(f"/agents/{HUGE_ID}/brain/ticking/pause/", {}),
        404,
        "Not Found",
    ),
    dashboard(
        "dashboard",
        "goal create: 501 characters",
        lambda w: form(f"/agents/{w.agent.pk}/brain/goals/", {"text": "g" * 501}),
        400,
        "at most 500 characters",
    ),
    dashboard(
        "dashboard",
        "goal complete: a goal already done",
        lambda w: form(f"/agents/{w.agent.pk}/brain/goals/{w.done_goal.pk}/complete/", {}),
        409,
        "is already done",
    ),
    dashboard(
        "dashboard",
        "chat: 'goal:' with no goal",
        lambda w: form(f"/agents/{w.agent.pk}/brain/chat/", {"text": "goal:"}),
        400,
        "Say the goal after 'goal:'",
    ),
    dashboard(
        "dashboard",
        "graph create: an unknown agent",
        lambda w: form("/graphs/create/", {"task": "t", "agent": "999"}),
        400,
        "Select a valid choice",
    ),
    dashboard(
        "dashboard",
        "graph create: task of 8,001 characters",
        lambda w: form("/graphs/create/", {"task": "t" * 8_001}),
        400,
        "at most 8000 characters",
    ),
    dashboard(
        "dashboard",
        "memorize: JSON that does not parse",
        lambda w: form(f"/graphs/{w.graph.pk}/memorize/", {"messages_json": "[{role: 1}]"}),
        400,
        "The JSON does not parse",
    ),
    dashboard(
        "dashboard",
        "memorize: JSON that is not a list",
        lambda w: form(f"/graphs/{w.graph.pk}/memorize/", {"messages_json": '{"role": "assistant"}'}),
        400,
        "The JSON must be a list",
    ),
    dashboard(
        "dashboard",
        "memorize: JSON nested 100,000 levels deep",
        lambda w: form(f"/graphs/{w.graph.pk}/memorize/", {"messages_json": DEEP.decode()}),
        400,
        "nested too deeply",
    ),
    dashboard(
        "dashboard",
        "memorize: a JSON list of numbers",
        lambda w: form(f"/graphs/{w.graph.pk}/memorize/", {"messages_json": "[1, 2]"}),
        400,
        "messages[0] must be an object with role and content",
    ),
    dashboard(
        "dashboard",
        "memorize: JSON content with NUL",
        lambda w: form(
            f"/graphs/{w.graph.pk}/memorize/", {"messages_json": '[{"role": "tool", "content": "a\\u0000b"}]'}
        ),
        400,
        "messages[0].content holds a NUL character",
    ),
    dashboard(
        "dashboard",
        "memorize: JSON role with an unpaired surrogate",
        lambda w: form(
            f"/graphs/{w.graph.pk}/memorize/", {"messages_json": '[{"role": "tool\\ud800", "content": "x"}]'}
        ),
        400,
        "messages[0].role must not contain control or invisible characters",
    ),
    dashboard(
        "dashboard",
        "memorize: a row without a role",
        lambda w: form(
            f"/graphs/{w.graph.pk}/memorize/", {"role_0": "", "content_0": "x", "role_1": "", "content_1": ""}
        ),
        400,
        "Message 1 needs a role",
    ),
    dashboard(
        "dashboard",
        "memorize: rows and JSON",
        lambda w: form(
            f"/graphs/{w.graph.pk}/memorize/", {"role_0": "assistant", "content_0": "x", "messages_json": "[]"}
        ),
        400,
        "not both",
    ),
    dashboard(
        "dashboard", "recall: an unknown graph", lambda w: form(f"/graphs/{HUGE_ID}/recall/", {}), 404, "Not Found"
    ),
]

CASES = [
    *NODE_CREATE,
    *NODE_UPDATE,
    *NODE_MOVE,
    *NODE_DELETE_AND_CONTENT,
    *ARCHIVES,
    *SEARCHES,
    *AGENTS,
    *BRAINS,
    *GRAPHS,
    *DASHBOARD,
]


@pytest.mark.parametrize("case", CASES, ids=[f"{case.group}: {case.label}" for case in CASES])
def test_bad_input_is_refused_clearly_and_changes_nothing(world, clients, settings, case):
    for name, value in case.settings.items():
        setattr(settings, name, value)
    request = case.request(world)
    before = database_dump()

    response = send(clients[case.client], request)

    message = message_of(response)
    assert response.status_code == case.status, message[:2_000]
    assert " ".join(case.fragment.split()) in message, message[:2_000]
    assert database_dump() == before


# Every write of the API and every dashboard form, as (method, view name): each needs a case.
WRITE_ENDPOINTS = {
    ("POST", "memory-api:node-create"),
    ("PATCH", "memory-api:node-detail"),
    ("DELETE", "memory-api:node-detail"),
    ("POST", "memory-api:node-move"),
    ("PUT", "memory-api:node-content"),
    ("POST", "memory-api:project-import"),
    ("POST", "memory-api:search-start"),
    ("POST", "memory-api:search-cancel"),
    ("POST", "memory-api:question-answer"),
    ("POST", "agents-api:agent-create"),
    ("PATCH", "agents-api:agent-detail"),
    ("POST", "agents-api:messages"),
    ("GET", "agents-api:agent-context"),
    ("POST", "agents-api:checkpoint-create"),
    ("POST", "agents-api:checkpoint-restore"),
    ("POST", "agents-api:tick"),
    ("POST", "agents-api:ticking-start"),
    ("POST", "agents-api:ticking-pause"),
    ("POST", "agents-api:chat"),
    ("POST", "agents-api:goal-create"),
    ("POST", "agents-api:goal-complete"),
    ("PUT", "agents-api:memory-json"),
    ("POST", "graphs-api:graph-create"),
    ("POST", "graphs-api:graph-memorize"),
    ("POST", "graphs-api:graph-recall"),
    ("PUT", "graphs-api:graph-snapshot"),
    ("GET", "graphs-api:graph-nodes"),
    ("POST", "memory:node_create"),
    ("POST", "memory:node_update"),
    ("POST", "memory:node_delete"),
    ("POST", "memory:document_save"),
    ("POST", "memory:project_upload"),
    ("POST", "memory:search_start"),
    ("POST", "memory:search_cancel"),
    ("POST", "memory:question_answer"),
    ("POST", "agents:agent_create"),
    ("POST", "agents:message_append"),
    ("POST", "agents:brain_tick"),
    ("POST", "agents:brain_ticking_start"),
    ("POST", "agents:brain_ticking_pause"),
    ("POST", "agents:brain_goal_create"),
    ("POST", "agents:brain_goal_complete"),
    ("POST", "agents:brain_chat"),
    ("POST", "agents:graph_create"),
    ("POST", "agents:graph_memorize"),
    ("POST", "agents:graph_recall"),
}


def test_the_catalogue_covers_every_write_endpoint(world):
    covered = set()
    for case in CASES:
        request = case.request(world)
        covered.add((request.method.upper(), resolve(urlsplit(request.path).path).view_name))
    assert WRITE_ENDPOINTS - covered == set()
