"""A swarm node's use of memsite, through the REST API in this process with a token: it writes
a set's folders and documents (a project's files as an archive import), asks `/api/retrieve/`,
and starts searches, which a worker would run: here this process runs them."""

from __future__ import annotations

import io
import tarfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from django.core.files.uploadedfile import SimpleUploadedFile

from benchmarks.kit.oracle import searches_run_here
from benchmarks.measures.retrieval import Api
from benchmarks.realdata.shape import Dataset
from memory import services

# Files an archive carries; MEMSITE_ARCHIVE_MAX_FILES (raised for the run) caps an import.
ARCHIVE_FILES = 2_000
PROJECT_TYPE = {"projects": "project_root_folder"}


class NodeApiError(RuntimeError):
    pass


@dataclass(frozen=True)
class Written:
    root: str  # the id of the set's node
    folders: dict[str, str]  # folder key → node id (those a question is asked in)
    prefix: str  # the readable path of the set's node, "/user/beam-100k"
    nodes: int
    seconds: float

    def document_of(self, path: str) -> str | None:
        """The document key of a node's readable path; None outside the set."""
        inside = path.removeprefix(self.prefix + "/")
        return inside if inside != path else None

    def scope(self, key: str) -> str:
        return self.folders[key] if key else self.root


class SwarmNode(Api):
    def _json(self, response: Any, expected: int = 200) -> dict:
        if response.status_code != expected:
            where = response.request["PATH_INFO"]
            raise NodeApiError(f"{where} answered {response.status_code}: {response.content[:300]!r}")
        return response.json()

    def resolve(self, path: str) -> str:
        return self._json(self.client.get("/api/nodes/resolve/", {"path": path}))["id"]

    def create(self, parent: str, *, type: str, name: str, description: str = "", content: str | None = None) -> str:
        body = {"parent": parent, "type": type, "name": name, "description": description}
        if content is not None:
            body["content"] = content
        response = self.client.post("/api/nodes/", body, content_type="application/json")
        return self._json(response, 201)["id"]

    def import_files(self, project: str, files: dict[str, str]) -> int:
        """The files (path → text) into the project, an archive of ARCHIVE_FILES at a time."""
        created = 0
        for archive in archives(files):
            upload = SimpleUploadedFile("files.tar.gz", archive, content_type="application/gzip")
            response = self.client.post(f"/api/nodes/{project}/import/", {"archive": upload, "mode": "fail"})
            created += self._json(response, 201)["files"]
        return created

    def search(self, question: str, *, start: str, output: str) -> dict:
        """A search started as a node starts one, run to its end here, and read back."""
        body = {"questions": [question], "start_node": start, "output": output, "fallback": "none"}
        with searches_run_here():
            response = self.client.post("/api/searches/", body, content_type="application/json")
            started = self._json(response, 202)
        services.search_run(search_id=started["id"])
        return self._json(self.client.get(f"/api/searches/{started['id']}/"))


def archives(files: dict[str, str]) -> Iterator[bytes]:
    paths = sorted(files)
    for first in range(0, len(paths), ARCHIVE_FILES):
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
            for path in paths[first : first + ARCHIVE_FILES]:
                data = files[path].encode()
                entry = tarfile.TarInfo(path)
                entry.size, entry.mode = len(data), 0o644
                archive.addfile(entry, io.BytesIO(data))
        yield buffer.getvalue()


def write(node: SwarmNode, dataset: Dataset) -> Written:
    """The set under /<where>/<name>: its folders described as the set says (nothing of content),
    each document posted with its text; a project's files imported as archives."""
    started = time.perf_counter()
    parent = f"/{dataset.where}"
    kind = PROJECT_TYPE.get(dataset.where, "folder")
    root = node.create(node.resolve(parent), type=kind, name=dataset.name)
    if kind == "project_root_folder":
        count = node.import_files(root, {document.key: document.text for document in dataset.documents})
        folders = {folder.key: node.resolve(f"{parent}/{dataset.name}/{folder.key}") for folder in dataset.folders}
        nodes = 1 + len(folders) + count
    else:
        folders = {
            folder.key: node.create(root, type="folder", name=folder.key, description=folder.description)
            for folder in dataset.folders
        }
        for document in dataset.documents:
            folder, name = document.key.split("/", 1)
            node.create(
                folders[folder], type="document", name=name, description=document.description, content=document.text
            )
        nodes = 1 + len(folders) + len(dataset.documents)
    return Written(root, folders, f"{parent}/{dataset.name}", nodes, time.perf_counter() - started)
