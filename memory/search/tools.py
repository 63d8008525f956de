"""Tool trees: the node-level fallback of a search (seed 001). Each memory type has a small tree
of tools, grouped as exploratory (they return information) and interactive (they create a node).
When a folder has no viable child left, the router is offered its type's tools once.
Explained in docs/memory.md."""

import fnmatch
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, Field

from memory import selectors
from memory.index.retrieve import best_by_node, retrieve
from memory.models import Node
from memsite.spaces.principals import Principal
from memsite.text.reading import Reading
from memsite.text.words import terms

MAX_RESULTS = 20
MAX_GREP_FILES = 500
MAX_GREP_BYTES = 1_000_000  # a file larger than this is not grepped
Arguments = TypeVar("Arguments", bound=BaseModel)


class ToolOutput(BaseModel):
    # What an exploratory tool found, or the content of the node an interactive tool creates.
    text: str
    nodes: list[str] = Field(default_factory=list)  # ids of nodes found, offered to the router
    found: bool = True  # False when there is nothing to read


@dataclass(frozen=True)
class ToolInput(Generic[Arguments]):
    by: Principal  # who the search is for, in its space: charged for the query's embedding
    node: Node | None  # where the search is: the folder whose tools these are
    arguments: Arguments
    questions: list[str]
    answers: list[tuple[str, str]]  # (question, answer so far)


@dataclass(frozen=True)
class Tool(Generic[Arguments]):
    id: str
    description: str
    interactive: bool  # creates a document under `references`, named by the LLM
    arguments: type[Arguments]
    run: Callable[[ToolInput[Arguments]], ToolOutput]

    @property
    def group(self) -> str:
        return "create" if self.interactive else "explore"

    def key(self, arguments: BaseModel, *, space_id: int, scope: tuple[int, str]) -> str:
        """`scope` is the search and the folder: an exploratory tool's results hold for them
        only; an interactive tool's node holds for every search of the space (keys are unique
        across spaces: one space's node must never be another's)."""
        scoped: list[int | str] = [space_id] if self.interactive else list(scope)
        canonical = json.dumps(
            [self.id, arguments.model_dump(mode="json"), scoped], sort_keys=True, separators=(",", ":")
        )
        return hashlib.sha256(canonical.encode()).hexdigest()


class QueryArguments(BaseModel):
    query: str = Field(min_length=1, max_length=200, description="words to look for")

    @classmethod
    def offline_reply(cls, *, purpose: str, reading: Reading) -> dict[str, Any]:
        return {"query": " ".join(dict.fromkeys(terms(reading.query)))[:200] or "memory"}


class PatternArguments(BaseModel):
    pattern: str = Field(min_length=1, max_length=200, description="a glob over file paths, such as src/*.py")

    @classmethod
    def offline_reply(cls, *, purpose: str, reading: Reading) -> dict[str, Any]:
        keywords = terms(reading.query)
        return {"pattern": f"*{keywords[0]}*" if keywords else "*"}


class NoArguments(BaseModel):
    pass


def full_text_search(tool_input: ToolInput[QueryArguments]) -> ToolOutput:
    """Nodes under the folder holding the query's words in their name, description or content,
    ranked by the content index (full text and embeddings fused), each with its best passage."""
    query = tool_input.arguments.query
    if not terms(query):
        return ToolOutput(text="No words to search for.", found=False)
    here = getattr(tool_input.node, "pk", None)
    hits = retrieve(query=query, by=tool_input.by, start=tool_input.node, k=MAX_RESULTS * 3)
    found = (hit for hit in hits if hit.node_id != here)
    hits = [node_hits[0] for node_hits in best_by_node(found, limit=MAX_RESULTS).values()]
    if not hits:
        return ToolOutput(text=f"No node matches {query!r}.", found=False)
    lines = "\n".join(f"[{hit.node_id}] {hit.path}: {' '.join(hit.snippet.split())}" for hit in hits)
    return ToolOutput(text=lines, nodes=[hit.node_id for hit in hits])


def _project(tool_input: ToolInput[Any]) -> Node:
    """The folder a project's tool is called at: its root, the one type that offers them."""
    if tool_input.node is None:
        raise ValueError("A project's tools are offered at its root folder only.")
    return tool_input.node


def list_files(tool_input: ToolInput[PatternArguments]) -> ToolOutput:
    pattern = tool_input.arguments.pattern
    paths = sorted(
        path
        for path in selectors.project_files(project=_project(tool_input)).values_list("context__file_path", flat=True)
        if fnmatch.fnmatch(path, pattern)
    )
    if not paths:
        return ToolOutput(text=f"No file matches {pattern!r}.", found=False)
    more = f"\n... and {len(paths) - MAX_RESULTS * 5} more" if len(paths) > MAX_RESULTS * 5 else ""
    return ToolOutput(text="\n".join(paths[: MAX_RESULTS * 5]) + more)


def grep(tool_input: ToolInput[QueryArguments]) -> ToolOutput:
    """Lines of the project's files holding the query as written (a fixed string, not a regular
    expression, so no pattern can run away)."""
    needle = tool_input.arguments.query.lower()
    files = selectors.project_files(project=_project(tool_input)).filter(content__size__lte=MAX_GREP_BYTES)
    lines: list[str] = []
    for file_path, data in files.values_list("context__file_path", "content__data")[:MAX_GREP_FILES].iterator():
        if data is None or b"\x00" in bytes(data[:8192]):
            continue
        for number, line in enumerate(bytes(data).decode("utf-8", errors="replace").splitlines(), 1):
            if needle in line.lower():
                lines.append(f"{file_path}:{number}: {line.strip()[:200]}")
                if len(lines) >= MAX_RESULTS * 2:
                    return ToolOutput(text="\n".join(lines))
    return ToolOutput(text="\n".join(lines)) if lines else ToolOutput(text=f"No line holds {needle!r}.", found=False)


def save_answer(tool_input: ToolInput[NoArguments]) -> ToolOutput:
    """The document to save: each question with its answer so far."""
    sections = [f"## {question}\n\n{answer}" for question, answer in tool_input.answers if answer]
    return ToolOutput(text="\n\n".join(sections))


FULL_TEXT = Tool(
    "full_text_search",
    "Search the names, descriptions and contents of every node under this folder for words.",
    False,
    QueryArguments,
    full_text_search,
)
SAVE_ANSWER = Tool(
    "save_answer",
    "Save what this search has found so far as a document under `references`, to be found directly next time.",
    True,
    NoArguments,
    save_answer,
)
LIST_FILES = Tool(
    "list_files", "List this project's files whose paths match a glob pattern.", False, PatternArguments, list_files
)
GREP = Tool("grep", "Find lines holding some text in this project's files.", False, QueryArguments, grep)

TOOL_TREES: dict[str, tuple[Tool[Any], ...]] = {
    "folder": (FULL_TEXT, SAVE_ANSWER),
    "internal_folder": (FULL_TEXT, SAVE_ANSWER),
    "project_root_folder": (LIST_FILES, GREP, FULL_TEXT),
}
TOP_TOOLS: tuple[Tool[Any], ...] = (FULL_TEXT, SAVE_ANSWER)  # at the top of the tree, above all roots


def tools_for(node: Node | None) -> tuple[Tool[Any], ...]:
    return TOP_TOOLS if node is None else TOOL_TREES.get(node.type, ())


def tool_by_id(tool_id: str) -> Tool[Any]:
    return {tool.id: tool for tools in (*TOOL_TREES.values(), TOP_TOOLS) for tool in tools}[tool_id]
