"""What an archive import does to a project, decided before anything is written: the nodes it
creates, the project files it updates and, when it replaces the project, the nodes it deletes.
Pure logic over the project's nodes as read and the archive's checked list of members;
`memory.services.archives` reads the one and the other and writes the plan.
Explained in docs/memory.md."""

from dataclasses import dataclass, field

from django.conf import settings
from django.db import models

from memory.services.archive_formats import ArchiveEntry
from memory.services.nodes import NodeSpec
from memsite.errors import Conflict, TooLarge
from memsite.names import excerpt

PROJECT_FILE = "project_file_bytes"


class ImportMode(models.TextChoices):
    FAIL = "fail", "Refuse the upload (fail)"
    MERGE = "merge", "Update those files, keep the rest (merge)"
    REPLACE = "replace", "Make the project the archive, deleting the rest (replace)"


@dataclass(frozen=True)
class ProjectNode:
    """A node of the project, as the plan needs it."""

    id: str
    parent_id: str
    name: str
    is_folder: bool
    type: str
    file_path: str | None = None  # a project file's
    size: int = 0  # a project file's bytes
    sha256: str | None = None
    mode: int | None = None

    @property
    def is_file(self) -> bool:
        return self.type == PROJECT_FILE


@dataclass
class FileWrite:
    """A file of the archive and the node its data goes to: a new one, or a file it updates."""

    entry: ArchiveEntry
    spec: NodeSpec | None = None  # a new node, whose id is set once it is created
    node: ProjectNode | None = None  # a file of the project that the entry updates

    @property
    def node_id(self) -> str:
        node_id = self.spec.node_id if self.spec is not None else self.node.id if self.node is not None else None
        if node_id is None:
            raise ValueError(f"The node of {self.entry.path} is not created yet.")
        return node_id


@dataclass
class ImportPlan:
    # New branches, each by the id of the project's folder they go in.
    creates: list[tuple[str, list[NodeSpec]]]
    files: list[FileWrite]  # in the archive's order, in which their data is read
    deletes: list[str]  # the topmost nodes to delete, each with its branch
    folders: int  # how many folders are created


def plan_import(
    *, project_id: str, nodes: list[ProjectNode], entries: list[ArchiveEntry], mode: ImportMode
) -> ImportPlan:
    """The plan of an import of `entries` into the project whose nodes (all but its own) are
    `nodes`; Conflict or TooLarge, before anything is written, when the mode refuses it."""
    planner = _Planner(project_id, nodes, mode)
    for entry in entries:
        planner.add(entry)
    plan = ImportPlan(
        creates=planner.creates(),
        files=planner.files,
        deletes=planner.unused() if mode == ImportMode.REPLACE else [],
        folders=planner.folders,
    )
    _check_result(plan, nodes, mode)
    return plan


@dataclass
class _Folder:
    """A folder of the result: one of the project's (`node_id`) or a new one (`spec`)."""

    node_id: str | None = None
    spec: NodeSpec | None = None
    folders: dict[str, "_Folder"] = field(default_factory=dict)
    new_children: list[NodeSpec] = field(default_factory=list)  # of a folder of the project's

    def add(self, spec: NodeSpec) -> None:
        (self.new_children if self.node_id or self.spec is None else self.spec.children).append(spec)


class _Planner:
    def __init__(self, project_id: str, nodes: list[ProjectNode], mode: ImportMode) -> None:
        self.mode = mode
        self.project_id = project_id
        self.root = _Folder(node_id=project_id)
        self.children: dict[str, dict[str, ProjectNode]] = {}
        for node in nodes:
            self.children.setdefault(node.parent_id, {})[node.name] = node
        self.used: set[str] = set()  # the project's nodes the result keeps
        self.files: list[FileWrite] = []
        self.folders = 0

    def add(self, entry: ArchiveEntry) -> None:
        parts = entry.path.split("/")
        if entry.size is None:
            self._folder_at(parts)
            return
        folder = self._folder_at(parts[:-1])
        node = self._meets(folder, parts[-1], entry.path, as_folder=False)
        if node is not None:
            self.files.append(FileWrite(entry, node=node))
            return
        context = {"file_path": entry.path}
        spec = NodeSpec(name=parts[-1], type=PROJECT_FILE, context=context, mode=entry.mode)
        folder.add(spec)
        self.files.append(FileWrite(entry, spec=spec))

    def _folder_at(self, parts: list[str]) -> _Folder:
        current = self.root
        for depth, part in enumerate(parts, start=1):
            child = current.folders.get(part)
            if child is None:
                node = self._meets(current, part, "/".join(parts[:depth]), as_folder=True)
                if node is not None:
                    child = _Folder(node_id=node.id)
                else:
                    spec = NodeSpec(name=part, type="folder")
                    child = _Folder(spec=spec)
                    current.add(spec)
                    self.folders += 1
                current.folders[part] = child
            current = child
        return current

    def _meets(self, folder: _Folder, name: str, path: str, *, as_folder: bool) -> ProjectNode | None:
        """The project's node at `path` that the entry there reuses or updates; None when the
        entry makes a node of its own there (the place is free, or replace deletes its node)."""
        node = self.children.get(folder.node_id, {}).get(name) if folder.node_id else None
        if node is None:
            return None
        # A folder reuses a folder; a file updates a file, in merge and replace.
        if node.is_folder if as_folder else self._updates(node, path):
            self.used.add(node.id)
            return node
        if self.mode == ImportMode.REPLACE:
            return None
        raise Conflict(self._clash(node, path, as_folder=as_folder))

    def _updates(self, file: ProjectNode, path: str) -> bool:
        return self.mode != ImportMode.FAIL and file.is_file and file.file_path == path

    def _clash(self, node: ProjectNode, path: str, *, as_folder: bool) -> str:
        if not as_folder and self.mode == ImportMode.FAIL:
            return f"The project already has {excerpt(path)}."
        kind = "folder" if node.is_folder else "file" if node.is_file else node.type
        if as_folder or not node.is_file:
            wanted = "folder" if as_folder else "file"
            return f"{excerpt(path)} is a {kind} in the project but a {wanted} in the archive."
        return (
            f"The project's file at {excerpt(path)} has the file_path {excerpt(node.file_path or '')}, "
            "so the archive cannot update it."
        )

    def creates(self) -> list[tuple[str, list[NodeSpec]]]:
        creates: list[tuple[str, list[NodeSpec]]] = []
        pending = [self.root]
        while pending:
            folder = pending.pop()
            if folder.new_children and folder.node_id:  # new children go in the project's folders only
                creates.append((folder.node_id, folder.new_children))
            pending.extend(child for child in folder.folders.values() if child.node_id)
        return creates

    def unused(self) -> list[str]:
        """The topmost of the project's nodes that the archive does not name."""
        unused: list[str] = []
        pending = [self.project_id]
        while pending:
            for node in self.children.get(pending.pop(), {}).values():
                if node.id not in self.used:
                    unused.append(node.id)
                elif node.is_folder:
                    pending.append(node.id)
        return unused


def _check_result(plan: ImportPlan, nodes: list[ProjectNode], mode: ImportMode) -> None:
    """The project's files after the import, those it keeps and the archive's, within the caps."""
    updated = {file.node.id for file in plan.files if file.node is not None}
    if mode == ImportMode.REPLACE:
        kept = []  # each of the project's files is one of the archive's, or deleted
    else:
        kept = [node for node in nodes if node.is_file and node.id not in updated]
    count, limit = len(kept) + len(plan.files), settings.MEMSITE_ARCHIVE_MAX_FILES
    if count > limit:
        raise TooLarge(f"The project would hold {count} files after this import; the limit is {limit}.")
    size = sum(node.size for node in kept) + sum(file.entry.size or 0 for file in plan.files)
    limit = settings.MEMSITE_ARCHIVE_MAX_UNPACKED_BYTES
    if size > limit:
        raise TooLarge(f"The project's files would add up to {size} bytes after this import; the limit is {limit}.")
