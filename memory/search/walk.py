"""One step of a search's walk (seed 001): decide it, making at most one LLM call, and say what
to write. `memory.services.searches` writes the outcome (the step, the new state, any node, tool
call or sub-search) in one transaction, so a step is either fully recorded or not at all and a
search resumes from its last recorded step.
Explained in docs/memory.md."""

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from django.conf import settings
from django.utils import timezone
from pydantic import BaseModel

from memory import selectors
from memory.index.citations import CitablePassage, content_passages, locate
from memory.index.retrieve import Hit, best_by_node, retrieve
from memory.logic.asked_time import said_when
from memory.models import Node, Search, SearchStep, ToolCall
from memory.search import prompts
from memory.search.state import Citation, WalkState
from memory.search.tools import NoArguments, Tool, ToolInput, tool_by_id, tools_for
from memory.types import RenderInput, get_type
from memsite.llm.errors import LLMError, Reason
from memsite.llm.gateway import complete
from memsite.llm.models import LLMCall
from memsite.llm.prompt import Prompt
from memsite.llm.tokens import offline_counter
from memsite.spaces.principals import Principal
from memsite.text.lines import one_line

Kind = SearchStep.Kind
Reply = TypeVar("Reply", bound=BaseModel)
MAX_ANSWER_CHARS = 4_000  # kept of one question's answer


@dataclass
class NewDocument:
    """A document an interactive tool creates under `references`."""

    name: str
    description: str
    content: str
    tool_key: str
    tool: str
    arguments: dict[str, Any]


@dataclass
class NewToolCall:
    key: str
    tool: str
    arguments: dict[str, Any]
    result: str
    nodes: list[str]
    found: bool
    folder: str  # where it was called: its results are offered there


@dataclass
class Outcome:
    kind: str
    state: WalkState
    summary: str
    node: Node | None = None
    detail: dict[str, Any] = field(default_factory=dict)
    call: LLMCall | None = None
    end: str | None = None  # why the search ends here, if it does
    status: str = Search.Status.DONE  # its status when it ends
    spawn: list[str] | None = None  # questions for a sub-search
    ask_user: list[str] | None = None
    tool_call: NewToolCall | None = None
    document: NewDocument | None = None


class _Rejected(Exception):
    """The model's reply never validated: the step records the call and follows nothing."""

    def __init__(self, call: LLMCall | None, message: str):
        self.call, self.message = call, message


class _Failed(Exception):
    def __init__(self, call: LLMCall | None, message: str):
        self.call, self.message = call, message


class _OverBudget(Exception):
    def __init__(self, budget: str, detail: str = ""):
        self.budget, self.detail = budget, detail


def advance(search: Search, *, by: Principal) -> Outcome:
    """The search's next step, made for `by` (who asked for the search): its LLM calls and
    retrievals are charged to them."""
    state = WalkState.model_validate(search.state)
    if search.cancel_requested:
        return Outcome(Kind.FINISH, state, "Cancelled.", end="cancelled", status=Search.Status.CANCELLED)
    if not state.remaining:
        return Outcome(Kind.FINISH, state, "Every question is answered.", end="answered")
    settle = settings.MEMSITE_SEARCH_SETTLE_READS
    if state.all_answered_in_part and state.reads_since_found >= settle:
        said = f"Every question has an answer in part, and the last {settle} readings added nothing."
        return Outcome(Kind.FINISH, state, said, end="settled")
    fruitless = settings.MEMSITE_SEARCH_FRUITLESS_READS
    if not state.known and state.reads_since_found >= fruitless:
        return _fall_back(search, state, f"The first {fruitless} readings found nothing for any question", "fruitless")
    if state.start and search.start_node_id is None:  # not the whole tree instead
        return Outcome(
            Kind.FINISH, state, "The start node was deleted.", end="start node deleted", status=Search.Status.FAILED
        )
    try:
        _check_time(search)
        return _counted(_step(search, state, by=by))
    except _OverBudget as exc:
        said = f"The {exc.budget} budget ran out." + (f" {exc.detail}" if exc.detail else "")
        return Outcome(Kind.FINISH, state, said, end=f"budget:{exc.budget}")
    except _Failed as exc:
        return Outcome(
            Kind.FINISH,
            state,
            f"The LLM failed: {exc.message}",
            call=exc.call,
            end=f"error: {exc.message}"[:255],
            status=Search.Status.FAILED,
        )


def _step(search: Search, state: WalkState, *, by: Principal) -> Outcome:
    if _here(search, state) in state.tool_results:
        outcome = _tool_results(search, state, by=by)
        if outcome is not None:
            return outcome
    if state.tool is not None:
        return _call_tool(search, state, state.tool, by=by)
    where = _current_node(search, state)
    if where is False:  # the node the walk was on was deleted
        gone = state.trail.pop()
        return Outcome(Kind.BACKTRACK, state, f"Node {gone} no longer exists; back to its parent.")
    if where is None or where.is_folder:
        return _at_folder(search, state, where, by=by)
    if where.pk in state.visited:  # a start node with content, read
        return _exhausted(search, state)
    return _at_content(search, state, where, by=by)


def _counted(outcome: Outcome) -> Outcome:
    """The outcome, with the readings in a row that added nothing to any answer counted. Routing
    is not counted: a model that reads right may need several calls to reach the rest."""
    if outcome.kind == Kind.READ and outcome.call is not None:
        added = outcome.detail.get("added")
        outcome.state.reads_since_found = 0 if added else outcome.state.reads_since_found + 1
    return outcome


def _here(search: Search, state: WalkState) -> str:
    """The key of where the walk is: a node id, or "" for the top of the tree."""
    return state.current or search.start_node_id or ""


def _current_node(search: Search, state: WalkState) -> Node | Literal[False] | None:
    node_id = state.current or search.start_node_id
    if node_id is None:
        return None
    return Node.objects.filter(pk=node_id, space_id=search.space_id).first() or False


# Budgets -------------------------------------------------------------------------------------


def _check_time(search: Search) -> None:
    started = search.started_at or timezone.now()
    if (timezone.now() - started).total_seconds() >= search.timeout_s:
        raise _OverBudget("timeout_s")


def _ask(search: Search, *, by: Principal, purpose: str, prompt: Prompt, schema: type[Reply]) -> tuple[Reply, LLMCall]:
    """One LLM call, after checking that the budgets allow it."""
    if search.llm_calls >= search.max_llm_calls:
        raise _OverBudget("max_llm_calls")
    if search.total_tokens + offline_counter().count_messages(prompt.messages) > search.max_tokens:
        raise _OverBudget("max_tokens")
    try:
        completion = complete(
            purpose=purpose,
            messages=prompt.messages,
            reading=prompt.reading,
            schema=schema,
            served=search,
            by=by,
        )
    except LLMError as exc:
        if exc.reason is Reason.INVALID_REPLY:
            raise _Rejected(exc.call, exc.message) from None
        if exc.reason is Reason.BUDGET_SPENT:  # the user's day, not the search's own budgets
            raise _OverBudget("daily_llm", exc.message) from None
        raise _Failed(exc.call, exc.message) from None
    return completion.value, completion.call


def _notes(state: WalkState) -> list[str]:
    """What the walk has learnt, for its prompts: the newest first kept within a token budget,
    so a long search's prompts do not outgrow the model's window."""
    partial = [
        f"Known so far about '{entry.question}': {entry.answer}"
        for entry in state.answers
        if entry.answer and not entry.complete
    ]
    counter = offline_counter()
    kept, spent = [], 0
    for note in reversed([*state.notes, *partial]):
        spent += counter.count(note)
        if spent > settings.MEMSITE_SEARCH_NOTES_TOKENS:
            break
        kept.append(note)
    return kept[::-1]


# At a folder ---------------------------------------------------------------------------------


def _at_folder(search: Search, state: WalkState, folder: Node | None, *, by: Principal) -> Outcome:
    if not state.trail and not state.first_reading_done:
        outcome = _first_reading(search, state, folder, by=by)
        if outcome is not None:
            return outcome
    if not state.trail and not state.shortcut_done:
        outcome = _shortcut(search, state, folder, by=by)
        if outcome is not None:
            return outcome
    key = folder.pk if folder is not None else ""
    marked = {*state.visited, *state.unviable, *state.passed.get(key, ())}
    children = selectors.node_children(node=folder) if folder is not None else selectors.node_roots(space=search.space)
    rows = [row for row in children.values_list("id", "name", "description", "path") if row[0] not in marked]
    if rows:
        candidates, detail = _by_passages(search, state, folder, rows, by=by)
        return _route(
            search, state, key=key, candidates=candidates, where=_name(folder), node=folder, detail=detail, by=by
        )
    if settings.MEMSITE_SEARCH_TOOLS and key not in state.tools_tried and _tools(state, folder):
        return _choose_tool(search, state, folder, key, by=by)
    if folder is not None:
        state.mark_visited(folder.pk)
        state.passed.pop(key, None)
    if state.trail:
        state.trail.pop()
        return Outcome(
            Kind.BACKTRACK, state, f"Nothing left to try in {_name(folder)}; back to its parent.", node=folder
        )
    return _exhausted(search, state)


# The content index -----------------------------------------------------------------------------

SHORTCUT_KEY = "hits"
FIRST_READING_LINE = "the passages of any node that best match the questions, each headed by its node's path"
MAX_CANDIDATES_SHOWN = 20  # in a step's trace


def _hits(state: WalkState, start: Node | None, k: int, *, by: Principal) -> list[Hit]:
    return retrieve(query=" ".join(state.remaining), by=by, start=start, k=k)


def _label(name: str, description: str, hit: Hit | None) -> str:
    """`name: description`, and the best passage under the option when one is in its content."""
    return prompts.option_label(name, description, hit.snippet if hit is not None and hit.kind == "content" else "")


def _seen(options: list[prompts.Option], best: dict[str, Hit]) -> list[dict[str, Any]]:
    """What the trace shows of the options a step ranked: each with its best passage's score."""
    return [
        {
            "node": option.key,
            "name": prompts.option_name(option.label),
            "score": best[option.key].score if option.key in best else None,
            "snippet": one_line(best[option.key].snippet, prompts.SNIPPET_CHARS) if option.key in best else "",
        }
        for option in options[:MAX_CANDIDATES_SHOWN]
    ]


def _shortcut(search: Search, state: WalkState, start: Node | None, *, by: Principal) -> Outcome | None:
    """Before routing from the start, the router may go straight to one of the nodes holding
    the best passages for the questions, once, but for those read already (the best passages
    read first showed them whole). None when there are none."""
    wanted = settings.MEMSITE_SEARCH_SHORTCUT_HITS
    marked = {*state.visited, *state.unviable}
    hits = _hits(state, start, settings.MEMSITE_INDEX_CANDIDATES, by=by) if wanted else []
    hits = [hit for hit in hits if hit.node_id not in marked]
    best = {node_id: node_hits[0] for node_id, node_hits in best_by_node(hits, limit=wanted, kind="content").items()}
    state.shortcut_done = True  # offered once: the walk then ranks the tree by the same passages
    if not best:
        return None
    options = [
        prompts.Option(node_id, f"{hit.path}: {one_line(hit.snippet, prompts.SNIPPET_CHARS)}")
        for node_id, hit in best.items()
    ]
    where = "the passages that best match the questions"
    return _route(
        search,
        state,
        key=SHORTCUT_KEY,
        candidates=options,
        where=where,
        node=start,
        detail={"candidates": _seen(options, best)},
        by=by,
    )


def _first_reading(search: Search, state: WalkState, start: Node | None, *, by: Principal) -> Outcome | None:
    """Before anything else, the reader is shown the index's best passages for the questions,
    of any node, within MEMSITE_SEARCH_FIRST_READ_TOKENS: a question they answer costs one call,
    and no node is read whole for it. A node all of whose passages were read has been read, and
    is not read again. None when there are none. Once a search."""
    state.first_reading_done = True
    budget = settings.MEMSITE_SEARCH_FIRST_READ_TOKENS
    kept = _within_tokens(_hits(state, start, settings.MEMSITE_INDEX_CANDIDATES, by=by), budget, with_path=True)
    if not kept:
        return None
    first_at: dict[str, int] = {}
    for position, (hit, _) in enumerate(kept):
        first_at.setdefault(hit.node_id, position)
    kept.sort(key=lambda pair: (first_at[pair[0].node_id], pair[0].start))  # a node's passages together, in order
    shown = tuple(CitablePassage(hit.start, hit.end, hit.text, hit.date, hit.node_id) for hit, _ in kept)
    text = "\n\n".join(piece for _, piece in kept)
    outcome = _read(search, state, node_line=FIRST_READING_LINE, text=text, source=Source(shown=shown), by=by)
    outcome.detail["shown"] = list(dict.fromkeys(hit.node_id for hit, _ in kept))
    if outcome.call is not None and not outcome.detail.get("rejected"):
        counts = Counter(hit.node_id for hit, _ in kept)
        read_whole = selectors.content_passage_counts(node_ids=counts)
        for node_id in (node_id for node_id, count in read_whole.items() if count == counts[node_id]):
            state.mark_visited(node_id)
        outcome.detail["read_whole"] = [node_id for node_id in outcome.detail["shown"] if node_id in state.visited]
    return outcome


def _by_passages(
    search: Search, state: WalkState, folder: Node | None, rows: list[tuple[str, str, str, str]], *, by: Principal
) -> tuple[list[prompts.Option], dict[str, Any]]:
    """A folder's unmarked children, those holding the best passages under them first (with
    the passage beside the description), the rest by lexical overlap with the questions."""
    prefix = len(folder.path) + Node.steplen if folder is not None else Node.steplen
    child_of = {path: node_id for node_id, _, _, path in rows}
    best: dict[str, Hit] = {}
    for hit in _hits(state, folder, settings.MEMSITE_INDEX_CANDIDATES, by=by):
        child = child_of.get(hit.tree_path[:prefix])
        if child is not None:
            best.setdefault(child, hit)
    options = {
        node_id: prompts.Option(node_id, _label(name, description, best.get(node_id)))
        for node_id, name, description, _ in rows
    }
    rest = prompts.lexical_rank([option for key, option in options.items() if key not in best], state.remaining)
    ranked = [options[node_id] for node_id in best] + rest
    return ranked, {"candidates": _seen(ranked, best)}


def _route(
    search: Search,
    state: WalkState,
    *,
    key: str,
    candidates: list[prompts.Option],
    where: str,
    node: Node | None,
    detail: dict[str, Any] | None = None,
    by: Principal,
) -> Outcome:
    """Show the router the first batch of `candidates` (the unmarked options at `key`, best
    first: a folder, the best passages' nodes, or a tool's results) and follow its choice."""
    counter = offline_counter()
    shown = prompts.batch_by_tokens(candidates, budget=settings.MEMSITE_SEARCH_ROUTE_TOKENS, count_tokens=counter.count)
    prompt = prompts.route_prompt(
        questions=state.remaining, context=search.context, notes=_notes(state), where=where, options=shown
    )
    detail = {**(detail or {}), "shown": [option.key for option in shown], "options": len(candidates)}
    try:
        reply, call = _ask(search, by=by, purpose="route", prompt=prompt, schema=prompts.route_reply(len(shown)))
    except _Rejected as exc:
        state.passed.setdefault(key, []).extend(option.key for option in shown)
        return Outcome(
            Kind.ROUTE,
            state,
            f"Reply rejected, nothing followed: {exc.message}",
            node=node,
            call=exc.call,
            detail={**detail, "rejected": True},
        )
    unviable = [shown[index - 1].key for index in reply.unviable]
    for node_id in unviable:
        state.mark_unviable(node_id)
    detail.update(unviable=unviable, reason=reply.reason)
    if reply.choice is None:
        state.passed.setdefault(key, []).extend(option.key for option in shown if option.key not in unviable)
        more = len(candidates) > len(shown)
        return Outcome(
            Kind.ROUTE,
            state,
            f"No option in {where} can help{'; next batch' if more else ''}.",
            node=node,
            call=call,
            detail=detail,
        )
    chosen = shown[reply.choice - 1]
    state.trail.append(chosen.key)
    state.chunk = 0
    detail["chosen"] = chosen.key
    return Outcome(
        Kind.ROUTE, state, f"Entered {prompts.option_name(chosen.label)}.", node=node, call=call, detail=detail
    )


# At a node with content ----------------------------------------------------------------------


def _chunks(search: Search, node: Node, *, by: Principal) -> list[str]:
    """The node rendered by its type's handler, cut into chunks of the reading budget; for a
    node longer than one chunk, its best passages for the search's questions come first,
    wherever they are in it (the chunks cover only its first MEMSITE_SEARCH_MAX_CHUNKS)."""
    size = settings.MEMSITE_SEARCH_READ_TOKENS
    text = get_type(node.type).render(
        RenderInput(
            name=node.name,
            # The node line above the text gives the description: in the text, it would read as
            # what the node says, and a description made of its keywords would be quoted as an answer.
            description="",
            context=node.context,
            # A token is rarely over eight bytes: no need to encode more of a large file.
            content=(selectors.node_content(node=node) or b"")[: size * settings.MEMSITE_SEARCH_MAX_CHUNKS * 8] or None,
            token_limit=size * settings.MEMSITE_SEARCH_MAX_CHUNKS,
        )
    )
    encoding = offline_counter().encoding
    tokens = encoding.encode(text, disallowed_special=())
    chunks = [encoding.decode(tokens[start : start + size]) for start in range(0, max(len(tokens), 1), size)]
    best = (
        _best_passages(search, node, by=by)
        if len(chunks) > 1 or len(tokens) >= size * settings.MEMSITE_SEARCH_MAX_CHUNKS
        else ""
    )
    return [best, *chunks] if best else chunks


def _best_passages(search: Search, node: Node, *, by: Principal) -> str:
    """The node's passages that best match the questions, taken best first until one reading
    budget is full (a passage is a line: many fit), then put in the text's order, each headed
    by where it is."""
    hits = retrieve(query=" ".join(search.questions), by=by, start=node, k=settings.MEMSITE_INDEX_CANDIDATES)
    kept = _within_tokens(hits, settings.MEMSITE_SEARCH_READ_TOKENS, with_path=False)
    return "\n\n".join(piece for _, piece in sorted((hit.start, piece) for hit, piece in kept))


def _within_tokens(hits: list[Hit], budget: int, *, with_path: bool) -> list[tuple[Hit, str]]:
    """The content hits, best first, each as the piece the reader is shown (headed by where it
    is: its node's path too when they are of several nodes), while their pieces fit in `budget`."""
    counter, kept = offline_counter(), []
    for hit in (hit for hit in hits if hit.kind == "content"):
        where = f"{hit.path}, " if with_path else ""
        dated = f", dated {hit.date.isoformat()}" if hit.date else ""
        piece = f"[{where}characters {hit.start}-{hit.end}{dated}]\n{hit.text}"
        budget -= counter.count(piece) + 1  # and the blank line that parts it from the next
        if budget < 0:
            break
        kept.append((hit, piece))
    return kept


def _at_content(search: Search, state: WalkState, node: Node, *, by: Principal) -> Outcome:
    # The best passages for all the search's questions, not for those still open: `state.chunk`
    # indexes these chunks, which must stay the same from one step to the next.
    chunks = _chunks(search, node, by=by)
    part = min(state.chunk, len(chunks) - 1)
    node_line = f"[{node.pk}] {prompts.option_label(node.name, node.description)}"
    if node.date:
        node_line += f" (dated {node.date.isoformat()})"
    if len(chunks) > 1:
        node_line += f" (part {part + 1} of {len(chunks)})"
    outcome = _read(search, state, node_line=node_line, text=chunks[part], source=Source(node), by=by)
    if outcome.spawn is not None:
        pass  # stay: this chunk is read again with the sub-search's answer, where it arose
    elif state.remaining and part + 1 < len(chunks):
        state.chunk = part + 1  # stay: the next step reads the next chunk
    else:
        state.mark_visited(node.pk)
        state.chunk = 0
        if state.trail:
            state.trail.pop()
    return outcome


@dataclass(frozen=True)
class Source:
    """What one reading call is shown the text of: a node (its passages are where the answers
    are cited, and it is the node that answers), passages of several nodes (an answer cites, and
    finds, the nodes it quotes word for word), or neither (a tool's result)."""

    node: Node | None = None
    shown: tuple[CitablePassage, ...] = ()

    def citable(self) -> list[CitablePassage]:
        """Where its answers are cited: the node's passages (read only for a reading that found
        something), or those shown."""
        return content_passages(node_id=self.node.pk) if self.node is not None else list(self.shown)


def _read(search: Search, state: WalkState, *, node_line: str, text: str, source: Source, by: Principal) -> Outcome:
    open_entries = [entry for entry in state.answers if not entry.complete]
    questions = [entry.question for entry in open_entries]
    prompt = prompts.read_prompt(
        questions=questions, context=search.context, notes=_notes(state), node_line=node_line, text=text
    )
    node = source.node
    try:
        reply, call = _ask(search, by=by, purpose="read", prompt=prompt, schema=prompts.read_reply(len(questions)))
    except _Rejected as exc:
        return Outcome(
            Kind.READ, state, f"Reply rejected: {exc.message}", node=node, call=exc.call, detail={"rejected": True}
        )
    before = [entry.answer for entry in open_entries]
    applied = _apply_findings(open_entries, reply.findings, source)
    answered = list(dict.fromkeys(finding.question for finding in applied))
    added = any(entry.answer != answer for entry, answer in zip(open_entries, before, strict=True))
    for node_id in _answer_nodes(search, reply, source, applied):
        if node_id not in state.found:
            state.found.append(node_id)
    known = {*state.arisen, *(entry.question for entry in state.answers)}
    new = [question for question in dict.fromkeys(reply.new_questions) if question not in known]
    spawn = None
    if new and search.depth < settings.MEMSITE_SEARCH_MAX_DEPTH:
        state.arisen.extend(new)
        spawn = new
    summary = f"Answers {len(answered)} question(s)" if answered else "Answers nothing"
    if spawn:
        summary += f"; {len(spawn)} new question(s)"
    detail = {"answered": answered, "added": added, "new_questions": new, "is_answer": reply.is_answer}
    return Outcome(Kind.READ, state, f"{summary}.", node=node, call=call, detail=detail, spawn=spawn)


def _answer_nodes(search: Search, reply: Any, source: Source, applied: list["Applied"]) -> list[str]:
    """The nodes a reading found to be answers: a node read that the reader says is one, or,
    where nodes are asked for, that answers in part; of several nodes' passages, those that
    complete answers quote, or, where nodes are asked for, that any answer quotes."""
    for_nodes = search.output == Search.Output.NODE
    if source.node is not None:
        return [source.node.pk] if reply.is_answer or (for_nodes and applied) else []
    quoted = (node_id for finding in applied if for_nodes or finding.complete for node_id in finding.nodes)
    return list(dict.fromkeys(quoted))


@dataclass(frozen=True)
class Applied:
    """A finding joined to its question's answer: the nodes it came from, and whether it answers
    the question whole."""

    question: str
    nodes: list[str]
    complete: bool


def _apply_findings(open_entries: list, findings: list, source: Source) -> list[Applied]:
    """Each finding joined to its question's answer, with where it came from and, for a
    question asking when, the date it speaks of. Of several nodes' passages, only a quotation
    credits a node: a passage sharing words with an answer says too little of where it came from."""
    applied = []
    citable = source.citable() if findings else []
    for finding in findings:
        entry = open_entries[finding.question - 1]
        quotes = locate(finding.answer, citable, quoted_only=source.node is None)
        cited = [Citation(node=held.node, start=start, end=end, date=held.date) for held, start, end in quotes]
        evidence = next((citation.date for citation in cited if citation.date), None)
        said = said_when(entry.question, finding.answer, evidence)
        # The latest findings, when they pile up.
        entry.answer = _joined(entry.answer, said, complete=finding.complete)[-MAX_ANSWER_CHARS:]
        nodes = list(dict.fromkeys([source.node.pk] if source.node else [citation.node for citation in cited]))
        entry.node_ids.extend(node_id for node_id in nodes if node_id not in entry.node_ids)
        entry.cite(cited)
        entry.complete = entry.complete or finding.complete
        applied.append(Applied(entry.question, nodes, finding.complete))
    return applied


def _joined(answer: str, finding: str, *, complete: bool) -> str:
    """The answer with a finding: a complete one replaces it; a partial one is added unless the
    answer holds it already (a long node's best passages are read again in their own chunk)."""
    if complete or not answer:
        return finding
    return answer if finding in answer else f"{answer} {finding}".strip()


# Tools ---------------------------------------------------------------------------------------


def _tools(state: WalkState, folder: Node | None) -> tuple[Tool[Any], ...]:
    """The folder's tools worth offering: one that saves answers only once there are some."""
    has_answers = any(entry.answer for entry in state.answers)
    return tuple(tool for tool in tools_for(folder) if has_answers or not tool.interactive)


def _choose_tool(search: Search, state: WalkState, folder: Node | None, key: str, *, by: Principal) -> Outcome:
    state.tools_tried.append(key)
    tools = _tools(state, folder)
    options = [prompts.Option(tool.id, f"{tool.id}: ({tool.group}) {tool.description}") for tool in tools]
    prompt = prompts.route_prompt(
        questions=state.remaining,
        context=search.context,
        notes=_notes(state),
        where=f"the tools of {_name(folder)}",
        options=options,
    )
    try:
        reply, call = _ask(search, by=by, purpose="route", prompt=prompt, schema=prompts.tool_reply(len(options)))
    except _Rejected as exc:
        return Outcome(Kind.TOOLS, state, f"Reply rejected, no tool used: {exc.message}", node=folder, call=exc.call)
    if reply.choice is None:
        return Outcome(Kind.TOOLS, state, "No tool can help here.", node=folder, call=call)
    tool = tools[reply.choice - 1]
    state.tool = tool.id
    return Outcome(Kind.TOOLS, state, f"Chose the tool {tool.id}.", node=folder, call=call, detail={"tool": tool.id})


def _call_tool(search: Search, state: WalkState, tool_id: str, *, by: Principal) -> Outcome:
    tool = tool_by_id(tool_id)
    folder = _current_node(search, state) or None
    state.tool = None
    call = None
    if tool.arguments is NoArguments:
        arguments: BaseModel = NoArguments()
    else:
        prompt = prompts.arguments_prompt(questions=state.remaining, tool=tool.id, description=tool.description)
        try:
            arguments, call = _ask(search, by=by, purpose="decide", prompt=prompt, schema=tool.arguments)
        except _Rejected as exc:
            return Outcome(
                Kind.TOOL, state, f"No usable arguments for {tool.id}: {exc.message}", node=folder, call=exc.call
            )
    tool_input = ToolInput(
        by=by,
        node=folder,
        arguments=arguments,
        questions=state.remaining,
        answers=[(entry.question, entry.answer) for entry in state.answers],
    )
    key = tool.key(
        arguments if not tool.interactive else _answers_key(state),
        space_id=search.space_id,
        scope=(search.pk, _here(search, state)),
    )
    detail: dict[str, Any] = {"tool": tool.id, "arguments": arguments.model_dump(mode="json"), "key": key}
    earlier = ToolCall.objects.filter(key=key).first()
    if earlier is not None:
        if not tool.interactive and earlier.found:
            state.tool_results[_here(search, state)] = earlier.pk
        made = f" (node {earlier.node_id})" if earlier.node_id else ""
        return Outcome(
            Kind.TOOL,
            state,
            f"{tool.id} was called with these arguments before; reusing its result{made}.",
            node=folder,
            call=call,
            detail={**detail, "reused": True},
        )
    output = tool.run(tool_input)
    if not tool.interactive:
        # The service records the call and, if it found anything, files it under this folder.
        tool_call = NewToolCall(
            key, tool.id, detail["arguments"], output.text, output.nodes, output.found, _here(search, state)
        )
        said = f"Called {tool.id}." if output.found else f"Called {tool.id}: {output.text}"
        return Outcome(Kind.TOOL, state, said, node=folder, call=call, detail=detail, tool_call=tool_call)
    return _describe_and_create(search, state, tool, output.text, key, detail, folder, by=by)


def _answers_key(state: WalkState) -> BaseModel:
    """An interactive tool is keyed by what it would save, so saving the same answers twice
    finds the first document."""

    class Saved(BaseModel):
        answers: list[tuple[str, str]]

    return Saved(answers=[(entry.question, entry.answer) for entry in state.answers])


def _describe_and_create(
    search: Search,
    state: WalkState,
    tool: Tool[Any],
    content: str,
    key: str,
    detail: dict[str, Any],
    folder: Node | None,
    *,
    by: Principal,
) -> Outcome:
    prompt = prompts.describe_prompt(content)
    try:
        described, call = _ask(search, by=by, purpose="describe", prompt=prompt, schema=prompts.NodeDescription)
    except _Rejected as exc:
        return Outcome(
            Kind.TOOL, state, f"{tool.id}: no usable name for the new node: {exc.message}", node=folder, call=exc.call
        )
    document = NewDocument(described.name, described.description, content, key, tool.id, detail["arguments"])
    return Outcome(
        Kind.TOOL,
        state,
        f"{tool.id}: saving '{described.name}'.",
        node=folder,
        call=call,
        detail=detail,
        document=document,
    )


def _tool_results(search: Search, state: WalkState, *, by: Principal) -> Outcome | None:
    """What an exploratory tool returned, where it was called: nodes it found are offered to the
    router like a folder's children; text is read once. None when there is nothing left."""
    here = _here(search, state)
    tool_call = ToolCall.objects.filter(pk=state.tool_results[here]).first()
    if tool_call is not None and tool_call.nodes:
        key = f"tool:{tool_call.pk}"
        marked = {*state.visited, *state.unviable, *state.passed.get(key, ())}
        found = {
            node_id: prompts.option_label(name, description)
            for node_id, name, description in Node.objects.filter(
                pk__in=tool_call.nodes, space_id=search.space_id
            ).values_list("id", "name", "description")
        }
        # In the tool's own order: full_text_search ranks its nodes by the content index.
        candidates = [
            prompts.Option(node_id, found[node_id])
            for node_id in tool_call.nodes
            if node_id in found and node_id not in marked
        ]
        if candidates:
            where = f"the results of {tool_call.tool} {tool_call.arguments}"
            return _route(search, state, key=key, candidates=candidates, where=where, node=None, by=by)
    del state.tool_results[here]
    if tool_call is None or tool_call.nodes:
        return None
    return _read(
        search,
        state,
        node_line=f"Result of {tool_call.tool} {tool_call.arguments}",
        text=tool_call.result,
        source=Source(),
        by=by,
    )


# The end of the tree -------------------------------------------------------------------------


def _exhausted(search: Search, state: WalkState) -> Outcome:
    if state.restarts < settings.MEMSITE_SEARCH_MAX_RESTARTS and state.known > state.known_at_start:
        state.restarts += 1
        state.known_at_start = state.known
        state.visited, state.unviable, state.passed, state.tools_tried, state.trail = [], [], {}, [], []
        state.tool_results, state.shortcut_done = {}, False
        return Outcome(
            Kind.RESTART,
            state,
            f"Tree exhausted with {len(state.remaining)} question(s) open; restarting with what was learnt.",
        )
    return _fall_back(search, state, f"Tree exhausted with {len(state.remaining)} question(s) open", "exhausted")


def _fall_back(search: Search, state: WalkState, why: str, end: str) -> Outcome:
    """A walk that can go no further with questions open: the user is asked, where the search
    says so (and is no sub-search), else it ends as it is."""
    if search.fallback == Search.Fallback.ASK_USER and search.parent_id is None:
        return Outcome(Kind.ASK_USER, state, f"{why}; asking the user.", ask_user=state.remaining)
    return Outcome(Kind.FINISH, state, f"{why}.", end=end)


def _name(node: Node | None) -> str:
    return node.name if node is not None else "the top of the tree"
