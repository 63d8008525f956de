"""The actions a tick may take: list and read the memory tree, start memory searches, write notes
in the agent's folder of `swarmstar`, fetch allowed web pages, reply in its conversation, or idle. Each
acts as the tick's principal (whoever set the agent ticking or asked for the tick): its writes
and searches stay within their folder, caps and budgets. Each returns an `Outcome` and never
writes to the brain; a refusal is an outcome that did not work. Explained in docs/brains.md."""

import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agents.brains.logic.outcomes import Outcome, Perceived, refused
from agents.brains.models import Brain, Explored
from agents.brains.selectors.ticks import brain_explored_folders, brain_unexplored
from agents.context.models import Agent, Role
from agents.context.services import message_append
from agents.fields import max_chars
from memory import selectors as memory_selectors
from memory import services as memory_services
from memsite.errors import Conflict, NotFound, ServiceError
from memsite.llm.replies import describe_validation_error
from memsite.llm.tokens import counter_for_model
from memsite.spaces.principals import Principal
from memsite.text.lines import one_line

MAX_KEY_CHARS = max_chars(Explored, "key")
LIST_LIMIT = 50  # children named in a listing
SUMMARY_CHARS = 300  # of what a perception keeps
NOTE_FOLDER = "swarmstar"
MAX_NOTE_CHARS = 20_000
NOTE_FOLDER_SLUG_CHARS = 60  # of the agent's name in its folder's name
_NOT_SLUG = re.compile(r"[^\w]+")
SUGGESTION_SCAN = 200  # children looked at per folder when suggesting what to explore
SUGGESTION_KEY_CHARS = 150  # longer suggestions are left out (the offline reader caps keys)
SUGGESTION_PATH_CHARS = SUGGESTION_KEY_CHARS - len("read_file ")  # a path after the longest action
RECENT_FOLDERS = 10  # folders listed lately, looked at for something left to explore


class Arguments(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class NoArguments(Arguments):
    pass


class PathArguments(Arguments):
    path: str = Field(min_length=1, max_length=4_096, description="an absolute path such as /user/notes.md")


class NoteArguments(Arguments):
    name: str = Field(min_length=1, max_length=255, description="the note's file name, such as findings.md")
    content: str = Field(min_length=1, max_length=MAX_NOTE_CHARS, description="markdown text")


class SearchArguments(Arguments):
    query: str = Field(min_length=1, max_length=1_000, description="a question about what memsite holds")


class UrlArguments(Arguments):
    url: str = Field(min_length=1, max_length=2_048, description="an http(s) URL on the allow-list")


class ReplyArguments(Arguments):
    text: str = Field(min_length=1, max_length=4_000, description="what to say to the user")


@dataclass(frozen=True)
class Action:
    name: str
    description: str
    arguments: type[Arguments]
    run: Callable[[Agent, Any, Principal], Outcome]

    @property
    def signature(self) -> str:
        """The arguments as the prompt shows them: `{"path": string}`."""
        fields = self.arguments.model_fields
        return "{" + ", ".join(f'"{name}": string' for name in fields) + "}" if fields else "{}"


class ActionRefused(Exception):
    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def arguments_validated(name: str, arguments: object) -> Arguments:
    """The action's arguments as its model, or ActionRefused saying what is wrong."""
    action = ACTIONS.get(name)
    if action is None:
        raise ActionRefused(f"Unknown action {name!r}; the actions are {', '.join(ACTIONS)}.")
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, Mapping):
        raise ActionRefused(f"The arguments of {name} must be an object {action.signature}.")
    try:
        return action.arguments.model_validate(dict(arguments))
    except ValidationError as exc:
        raise ActionRefused(f"Bad arguments for {name}:\n{describe_validation_error(exc)}") from None


def action_run(*, agent: Agent, name: str, arguments: object, by: Principal) -> Outcome:
    """Run one action as `by`. Refusals come back as an outcome that did not work."""
    try:
        validated = arguments_validated(name, arguments)
    except ActionRefused as exc:
        return refused(exc.message)
    try:
        return ACTIONS[name].run(agent, validated, by)
    except ServiceError as exc:
        return refused(f"{name} failed: {exc.message}", where=_where(validated))


def _where(arguments: Arguments) -> str:
    return str(getattr(arguments, "path", None) or getattr(arguments, "url", None) or "")


def normal_path(path: str) -> str:
    """`/a/b` for `a/b/`, `/a/b` or ` /a//b `; `/` for the top of the tree."""
    names = [name for name in path.strip().split("/") if name]
    return "/" + "/".join(names)


def _perceived(kind: str, key: str, summary: str, *, folder: bool = False) -> tuple[Perceived, ...]:
    # A key past the explored index's limit is read but not remembered as explored.
    if len(key) > MAX_KEY_CHARS:
        return ()
    return (Perceived(kind=kind, key=key, summary=one_line(summary, SUMMARY_CHARS), folder=folder),)


# The actions ------------------------------------------------------------------------------------


def list_dir(agent: Agent, arguments: PathArguments, by: Principal) -> Outcome:
    path = normal_path(arguments.path)
    if path == "/":
        roots = memory_selectors.node_roots(space=agent.space)
        children = list(roots[: LIST_LIMIT + 1])
        total = roots.count()
    else:
        folder = memory_selectors.node_resolve(space=agent.space, path=path)
        if not folder.is_folder:
            return refused(f"{path} is a {folder.type}, not a folder: read it with read_file.", where=path)
        children = list(memory_selectors.node_children(node=folder)[: LIST_LIMIT + 1])
        total = folder.numchild
    names = [f"{child.name}/" if child.is_folder else child.name for child in children[:LIST_LIMIT]]
    more = f" and {total - LIST_LIMIT} more" if total > LIST_LIMIT else ""
    listing = ", ".join(names) + more if names else "nothing"
    summary = f"Listed {path}: {total} {'child' if total == 1 else 'children'}: {listing}."
    return Outcome(
        ok=True,
        summary=one_line(summary, 2_000),
        perceived=_perceived(Explored.Kind.PATH, path, summary, folder=True),
        content="\n".join(names) + (f"\n({total - LIST_LIMIT} more)" if more else ""),
        where=path,
        state={"lastDir": path},
    )


def read_file(agent: Agent, arguments: PathArguments, by: Principal) -> Outcome:
    path = normal_path(arguments.path)
    if path == "/":
        return refused("/ is the top of the tree, not a file: list it with list_dir.", where=path)
    node = memory_selectors.node_resolve(space=agent.space, path=path)
    if node.is_folder:
        return refused(f"{path} is a folder: list it with list_dir.", where=path)
    data = memory_selectors.node_content(node=node) or b""
    if b"\x00" in data[:8_192]:
        body = f"(binary content, {len(data)} bytes)"
    else:
        body = data.decode("utf-8", errors="replace")
    counter = counter_for_model(agent.model)
    text = counter.truncate(body, settings.MEMSITE_TICK_READ_TOKENS)
    cut = " (cut to the read budget)" if len(text) < len(body) else ""
    about = node.description or body
    summary = f"Read {path} ({len(data)} bytes{cut}): {one_line(about, 200)}"
    return Outcome(
        ok=True,
        summary=summary,
        perceived=_perceived(Explored.Kind.PATH, path, f"{node.description} {body}".strip()),
        content=f"# {node.name}\n{node.description}\n\n{text}".strip(),
        where=path,
        counters={"totalReads": 1},
    )


def note_folder_name(agent: Agent) -> str:
    """The agent's folder in `swarmstar`: keyed by its id, so that no two agents share one whatever
    their names, with a readable slug of its name beside it (`agent-7-ops-team`)."""
    slug = _NOT_SLUG.sub("-", agent.name.lower()).strip("-_")[:NOTE_FOLDER_SLUG_CHARS].rstrip("-_")
    return f"agent-{agent.pk}-{slug}" if slug else f"agent-{agent.pk}"


def _note_folder(agent: Agent, by: Principal):
    name = note_folder_name(agent)
    path = f"/{NOTE_FOLDER}/{name}"
    try:
        folder = memory_selectors.node_resolve(space=agent.space, path=path)
    except NotFound:
        parent = memory_selectors.node_internal_folder(space=agent.space, name=NOTE_FOLDER)
        try:
            return memory_services.node_create(
                parent=parent,
                type="folder",
                name=name,
                description=f"Notes written by the agent {agent.name}.",
                by=by,
            )
        except Conflict:  # made meanwhile by another writer
            folder = memory_selectors.node_resolve(space=agent.space, path=path)
    if not folder.is_folder:
        raise Conflict(f"{path} is a {folder.type}, not a folder for your notes.")
    return folder


def _not_own_note(node, path: str, by: Principal) -> str:
    """Why the agent may not rewrite this node, or "" when it is a note of its own.

    Nodes record the user who made them, not the agent: an agent writes as the member it ticks
    for (notes written before ticks acted for anyone have no user). So in the agent's own folder
    (which no other agent writes to), a document made by that member or by nobody is the
    agent's; one another person made there is theirs."""
    if node.type != "document":
        return f"{path} is a {node.type}, not a note: choose another name."
    if node.created_by_id not in (None, by.user_id):
        return f"{path} was written by a person, not by you: choose another name."
    return ""


def write_note(agent: Agent, arguments: NoteArguments, by: Principal) -> Outcome:
    """A document in the agent's folder of `swarmstar`, made, or (by the same name) replaced if
    it is the agent's own and nobody changed it since it was read here; written as `by`, so a
    token limited to another folder is refused."""
    if "/" in arguments.name:
        return refused(f"A note's name must not contain '/': {arguments.name!r}.")
    folder = _note_folder(agent, by)
    path = f"/{NOTE_FOLDER}/{folder.name}/{arguments.name}"
    data = arguments.content.encode()
    try:
        existing = memory_selectors.node_resolve(space=agent.space, path=path)
    except NotFound:
        existing = None
    if existing is None:
        node = memory_services.node_create(
            parent=folder,
            type="document",
            name=arguments.name,
            description=f"A note by the agent {agent.name}.",
            content=data,
            by=by,
        )
        verb = "Wrote"
    else:
        if problem := _not_own_note(existing, path, by):
            return refused(problem, where=path)
        # Conflict (refused) if someone wrote the note since it was resolved above.
        node = memory_services.node_content_set(node=existing, data=data, expected_version=existing.version, by=by)
        verb = "Rewrote"
    return Outcome(
        ok=True,
        summary=f"{verb} the note {path} ({len(data)} bytes).",
        novel=existing is None,
        where=path,
        detail={"node_id": node.pk},
    )


def search_memory(agent: Agent, arguments: SearchArguments, by: Principal) -> Outcome:
    """Start a memory search for `by`, within their cap on searches; its answer is not waited for."""
    search = memory_services.search_start(
        by=by,
        questions=[arguments.query],
        context=f"Asked by the agent {agent.name} during a tick.",
    )
    return Outcome(
        ok=True,
        summary=f"Started memory search {search.pk}: {one_line(arguments.query, 200)}",
        novel=True,
        where=f"search:{search.pk}",
        detail={"search_id": search.pk},
    )


def fetch_url(agent: Agent, arguments: UrlArguments, by: Principal) -> Outcome:
    from memsite import (
        fetch,  # the module is looked up at call time, so tests can replace fetch_url
    )

    try:
        page = fetch.fetch_url(arguments.url)
    except fetch.FetchRefused as exc:
        return refused(f"fetch_url refused: {exc.message}", where=arguments.url)
    except fetch.FetchFailed as exc:
        return refused(f"fetch_url failed: {exc.message}", where=arguments.url)
    url = page.url
    counter = counter_for_model(agent.model)
    text = counter.truncate(page.text, settings.MEMSITE_TICK_READ_TOKENS)
    cut = " (cut to the read budget)" if len(text) < len(page.text) or page.truncated else ""
    return Outcome(
        ok=True,
        summary=f"Fetched {url} ({page.content_type}{cut}): {one_line(page.text, 200)}",
        perceived=_perceived(Explored.Kind.URL, url, page.text),
        content=text,
        where=url,
        state={"lastUrl": url},
        counters={"totalFetches": 1},
    )


def reply(agent: Agent, arguments: ReplyArguments, by: Principal) -> Outcome:
    """The line, said as an assistant message of the agent's conversation, as a chat reply is."""
    said = message_append(agent=agent, role=Role.ASSISTANT, content=arguments.text)
    summary = f"Said: {one_line(arguments.text, 200)}"
    return Outcome(ok=True, summary=summary, detail={"message_position": said.position})


def idle(agent: Agent, arguments: NoArguments, by: Principal) -> Outcome:
    return Outcome(ok=True, summary="Idled.", happened=False)


ACTIONS: dict[str, Action] = {
    action.name: action
    for action in (
        Action("list_dir", "list a folder of the memory tree (/ for the top)", PathArguments, list_dir),
        Action("read_file", "read a document or file of the memory tree", PathArguments, read_file),
        Action(
            "search_memory", "start a search of the memory tree; its answer comes later", SearchArguments, search_memory
        ),
        Action("write_note", f"write a markdown note in your folder of /{NOTE_FOLDER}", NoteArguments, write_note),
        Action("fetch_url", "fetch a web page from an allowed host", UrlArguments, fetch_url),
        Action("reply", "say something to the user in your conversation", ReplyArguments, reply),
        Action("idle", "do nothing this tick", NoArguments, idle),
    )
}
ACTION_NAMES: tuple[str, ...] = tuple(ACTIONS)


# What to explore next -------------------------------------------------------------------------


@dataclass(frozen=True)
class Suggestion:
    action: str
    argument: str  # the path, or "" for idle
    why: str

    @property
    def key(self) -> str:
        return f"{self.action} {self.argument}".strip()


@dataclass(frozen=True)
class Exploration:
    suggestions: list[Suggestion]
    # Listed folders looked in with nothing left to explore among their first children: the
    # tick stops looking in them (`BrainWrite.folders_spent`) until they are listed again.
    spent: list[str]


def explore_next(*, brain: Brain, limit: int = 5) -> Exploration:
    """Paths not explored yet, nearest first: in the folder listed last and each folder above
    it, then in the folders listed most lately, then at the top of the tree; one query for each
    folder looked in, until `limit` are found. Idle when everything near is explored."""
    suggestions: list[Suggestion] = []
    spent: list[str] = []
    for folder_path in _folders_to_scan(brain):
        prefix = "" if folder_path == "/" else folder_path
        unexplored = brain_unexplored(
            brain=brain,
            folder_path=folder_path,
            count=limit - len(suggestions),
            scan=SUGGESTION_SCAN,
            max_path_chars=SUGGESTION_PATH_CHARS,
            leave_out_char="]",
        )
        if not unexplored and folder_path != "/":
            spent.append(folder_path)
        for child in unexplored:
            path = f"{prefix}/{child.name}"
            # The description is the tree's data, quoted like everything remembered.
            about = (
                f", described as {json.dumps(one_line(child.description, 120), ensure_ascii=False)}"
                if child.description
                else ""
            )
            if child.is_folder:
                suggestions.append(Suggestion("list_dir", path, f"a folder you have not listed{about}"))
            else:
                suggestions.append(Suggestion("read_file", path, f"a {child.type} you have not read{about}"))
        if len(suggestions) >= limit:
            return Exploration(suggestions=suggestions, spent=spent)
    if not suggestions:
        suggestions.append(Suggestion("idle", "", "everything near has been explored"))
    return Exploration(suggestions=suggestions, spent=spent)


def _folders_to_scan(brain: Brain) -> Iterator[str]:
    """The folder listed last and those above it, the folders listed most lately and not found
    spent (read only once the scan gets to them), and `/` last."""
    seen = {"/"}
    last_dir = brain.extra_state.get("lastDir") if isinstance(brain.extra_state, dict) else None
    if isinstance(last_dir, str):
        names = normal_path(last_dir).split("/")[1:]
        for depth in range(len(names), 0, -1):
            path = "/" + "/".join(names[:depth])
            if path not in seen:
                seen.add(path)
                yield path
    for path in brain_explored_folders(brain=brain, count=RECENT_FOLDERS):
        if path not in seen:
            seen.add(path)
            yield path
    yield "/"
