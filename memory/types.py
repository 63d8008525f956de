"""The registry of memory types. A type says whether its nodes are folders, the pydantic schema
of their `context`, what content they hold, and how that content is read by an LLM. Adding a
type is one `register(...)` call."""

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from memory.validation import DEFAULT_FILE_MODE, normalize_relative_path
from memsite.errors import InvalidInput
from memsite.llm.tokens import offline_counter


class ContentKind(StrEnum):
    NONE = "none"
    TEXT = "text"  # UTF-8 text, such as markdown documents
    BYTES = "bytes"  # arbitrary bytes, such as project files


class NoContext(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ProjectFileContext(NoContext):
    file_path: str

    @field_validator("file_path")
    @classmethod
    def _normalize(cls, value: str) -> str:
        return normalize_relative_path(value)


Renderer = Callable[["RenderInput"], str]


@dataclass(frozen=True)
class RenderInput:
    name: str
    description: str
    context: dict[str, Any]
    content: bytes | None
    token_limit: int


def render_text(item: RenderInput) -> str:
    """Name, description and content as plain text, cut to the token limit."""
    header = f"# {item.name}\n{item.description}".strip()
    if item.content is None:
        body = ""
    elif b"\x00" in item.content[:8192]:
        body = f"(binary content, {len(item.content)} bytes)"
    else:
        body = item.content.decode("utf-8", errors="replace")
    text = f"{header}\n\n{body}".strip() if body else header
    return offline_counter().truncate(text, item.token_limit)


def render_project_file(item: RenderInput) -> str:
    return render_text(
        RenderInput(
            name=f"{item.name} ({item.context.get('file_path', '')})",
            description=item.description,
            context=item.context,
            content=item.content,
            token_limit=item.token_limit,
        )
    )


@dataclass(frozen=True)
class MemoryType:
    name: str
    is_folder: bool
    description: str
    context_schema: type[BaseModel] = NoContext
    content: ContentKind = ContentKind.NONE
    render: Renderer = field(default=render_text)
    # The mode of its nodes unless an archive gives another; None for nodes that are not files of
    # a file system (`memory.validation.file_mode`).
    file_mode: int | None = None

    @property
    def keeps_versions(self) -> bool:
        """Whether its nodes keep what they were at each version (`memory.models.NodeVersion`):
        text does, for its history's diffs and restores; bytes, which archives write in bulk,
        do not."""
        return self.content is ContentKind.TEXT

    def validate_context(self, context: dict[str, Any] | None) -> dict[str, Any]:
        """The context normalized by the schema, or InvalidInput naming each bad field."""
        try:
            return self.context_schema.model_validate(context or {}).model_dump()
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(part) for part in error['loc']) or 'context'}: {error['msg']}" for error in exc.errors()
            )
            raise InvalidInput(f"Invalid context for type '{self.name}': {problems}.") from None

    def validate_content(self, data: bytes) -> None:
        if self.content is ContentKind.NONE:
            raise InvalidInput(f"Nodes of type '{self.name}' hold no content.")
        if self.content is ContentKind.TEXT:
            try:
                data.decode("utf-8")
            except UnicodeDecodeError:
                raise InvalidInput(f"Content of type '{self.name}' must be UTF-8 text.") from None


_registry: dict[str, MemoryType] = {}


def register(memory_type: MemoryType) -> MemoryType:
    if memory_type.is_folder and memory_type.content is not ContentKind.NONE:
        raise ValueError(f"Folder type {memory_type.name!r} cannot hold content.")
    _registry[memory_type.name] = memory_type
    return memory_type


def unregister(name: str) -> None:
    _registry.pop(name, None)


def get_type(name: str) -> MemoryType:
    try:
        return _registry[name]
    except KeyError:
        known = ", ".join(sorted(_registry))
        raise InvalidInput(f"Unknown memory type '{name}'. Known types: {known}.") from None


def all_types() -> list[MemoryType]:
    return sorted(_registry.values(), key=lambda memory_type: memory_type.name)


FOLDER = register(MemoryType(name="folder", is_folder=True, description="Folders created by the swarm or user."))
INTERNAL_FOLDER = register(MemoryType(name="internal_folder", is_folder=True, description="Default immutable folders."))
PROJECT_ROOT_FOLDER = register(
    MemoryType(
        name="project_root_folder",
        is_folder=True,
        description="The root of a software project; its branch is the project's files.",
    )
)
PROJECT_FILE_BYTES = register(
    MemoryType(
        name="project_file_bytes",
        is_folder=False,
        description="A file of a project, stored as bytes.",
        context_schema=ProjectFileContext,
        content=ContentKind.BYTES,
        render=render_project_file,
        file_mode=DEFAULT_FILE_MODE,
    )
)
DOCUMENT = register(
    MemoryType(
        name="document",
        is_folder=False,
        description="Markdown text: notes, reports and the user's documents.",
        content=ContentKind.TEXT,
    )
)
