"""Searches: starting, running step by step, cancelling, and the user's answers to a search's
questions. `memory.search.walk` decides each step; this module writes it, with the new state,
in one transaction guarded by the search's step count, so two workers that both hold a search
(a redelivered task while the first still runs) cannot both record a step: the second stops."""

import logging
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from memory import selectors
from memory.index.citations import cited_passages
from memory.index.retrieve import best_by_node, retrieve
from memory.models import Node, Passage, Search, SearchQuestion, SearchStep, ToolCall
from memory.search import walk
from memory.search.state import QuestionAnswer, WalkState
from memory.services.nodes import node_create
from memory.validation import validate_name
from memsite.errors import Conflict, InvalidInput, NotFound
from memsite.queue import broker_checked, enqueue
from memsite.quotas.checks import search_quota_require
from memsite.spaces.principals import Principal, principal_rebuilt

MAX_QUESTIONS = 20
MAX_QUESTION_CHARS = 1_000
MAX_CONTEXT_CHARS = 20_000
MAX_ANSWER_CHARS = 20_000
# The most a caller may ask for; settings give the defaults.
BUDGET_CAPS = {"max_llm_calls": 1_000, "max_tokens": 5_000_000, "timeout_s": 3_600}
logger = logging.getLogger(__name__)
TERMINAL = (Search.Status.DONE, Search.Status.FAILED, Search.Status.CANCELLED)
# Why a search ends when whoever asked for it is gone: it is never run as anyone else.
ASKER_GONE = "error: the user or token that asked for it can no longer act in this space"


def _questions(questions: object) -> list[str]:
    if not isinstance(questions, (list, tuple)) or not 1 <= len(questions) <= MAX_QUESTIONS:
        raise InvalidInput(f"questions must be a list of 1 to {MAX_QUESTIONS} strings.")
    cleaned = []
    for position, question in enumerate(questions, 1):
        if not isinstance(question, str) or not question.strip():
            raise InvalidInput(f"Question {position} must be a non-empty string.")
        if len(question) > MAX_QUESTION_CHARS:
            raise InvalidInput(f"Question {position} is longer than {MAX_QUESTION_CHARS} characters.")
        cleaned.append(" ".join(question.split()))
    return list(dict.fromkeys(cleaned))


def _budget(name: str, value: int | None) -> int:
    if value is None:
        return getattr(settings, f"MEMSITE_SEARCH_{name.upper()}")
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= BUDGET_CAPS[name]:
        raise InvalidInput(f"{name} must be an integer from 1 to {BUDGET_CAPS[name]}.")
    return value


def _initial_state(questions: Sequence[str], start_node: Node | None = None) -> dict:
    state = WalkState(
        answers=[QuestionAnswer(question=question) for question in questions],
        start=start_node.pk if start_node else None,
    )
    return state.model_dump(mode="json")


def search_start(
    *,
    by: Principal,
    questions: list[str],
    context: str = "",
    start_node: Node | None = None,
    output: str = Search.Output.ANSWER,
    fallback: str = Search.Fallback.NONE,
    max_llm_calls: int | None = None,
    max_tokens: int | None = None,
    timeout_s: int | None = None,
) -> Search:
    """Validate and queue a search of `by`'s space's memory, for `by`; a worker runs it, as
    `by`, once this transaction commits. A start node of another space is as missing as none.
    The user's searches in flight are capped and the LLM budgets it counts against must not be
    spent (QuotaExceeded, 429)."""
    if start_node is not None and start_node.space_id != by.space.pk:
        raise NotFound(f"No memory node with id '{start_node.pk}'.")
    questions = _questions(questions)
    if not isinstance(context, str) or len(context) > MAX_CONTEXT_CHARS:
        raise InvalidInput(f"context must be a string of at most {MAX_CONTEXT_CHARS} characters.")
    if output not in Search.Output.values:
        raise InvalidInput(f"output must be one of {', '.join(Search.Output.values)}.")
    if fallback not in Search.Fallback.values:
        raise InvalidInput(f"fallback must be one of {', '.join(Search.Fallback.values)}.")
    with transaction.atomic():
        search_quota_require(by=by)
        search = Search.objects.create(
            space=by.space,
            created_by=by.user,
            token=by.token,
            acted_as=by.acted_as,
            questions=questions,
            context=context.strip(),
            start_node=start_node,
            output=output,
            fallback=fallback,
            max_llm_calls=_budget("max_llm_calls", max_llm_calls),
            max_tokens=_budget("max_tokens", max_tokens),
            timeout_s=_budget("timeout_s", timeout_s),
            state=_initial_state(questions, start_node),
        )
        _enqueue(search)
    return search


def _enqueue(search: Search) -> None:
    from memory.tasks import search_run  # tasks import this module

    # Inside the transaction that saved the search: a broker that does not answer rolls it back.
    enqueue(search_run, sent=Search.objects.filter(pk=search.pk), search_id=search.pk)


def search_cancel(*, search: Search, user) -> Search:
    """Stop a search: at once if it is queued or waiting for the user, at its next step if a
    worker is running it."""
    with transaction.atomic():
        search = Search.objects.select_for_update().get(pk=search.pk)
        if search.status in TERMINAL:
            raise Conflict(f"Search {search.pk} has already ended ({search.status}).")
        if search.status == Search.Status.RUNNING:
            search.cancel_requested = True
            search.save(update_fields=["cancel_requested"])
        else:
            _end_family(search, status=Search.Status.CANCELLED, because="cancelled")
    return search


def search_question_answer(*, question: SearchQuestion, answer: str, by: Principal) -> SearchQuestion:
    """The answer completes the waiting search and is kept as a document in `user`: a write of
    `by`'s, so a token limited to a folder elsewhere is refused (403)."""
    if not isinstance(answer, str) or not answer.strip():
        raise InvalidInput("The answer must not be empty.")
    if len(answer) > MAX_ANSWER_CHARS:
        raise InvalidInput(f"The answer is longer than {MAX_ANSWER_CHARS} characters.")
    answer = answer.strip()
    with transaction.atomic():
        search = Search.objects.select_for_update().get(pk=question.search_id)  # as cancel: search first
        question = SearchQuestion.objects.select_for_update().get(pk=question.pk)
        if question.status != SearchQuestion.Status.PENDING:
            raise Conflict(f"Question {question.pk} is {question.status}, not pending.")
        content = "\n\n".join(f"## {asked}\n\n{answer}" for asked in question.questions)
        user_folder = selectors.node_internal_folder(space=search.space, name="user")
        document = node_create(
            parent=user_folder,
            type="document",
            name=_free_name(user_folder, f"Answer to search {search.pk}"),
            description=f"The user's answer to: {' | '.join(question.questions)}"[:1000],
            content=content.encode(),
            by=by,
        )
        question.status = SearchQuestion.Status.ANSWERED
        question.answer = answer
        question.answered_by = by.user
        question.answered_at = timezone.now()
        question.document = document
        question.save()
        state = WalkState.model_validate(search.state)
        for entry in state.answers:
            if not entry.complete:
                entry.answer, entry.node_ids, entry.complete = answer, [*entry.node_ids, document.pk], True
        _write_step(search, SearchStep.Kind.USER_ANSWER, "The user answered.", node=document)
        _finish(search, state, status=Search.Status.DONE, because="answered by the user")
    return question


# Running ---------------------------------------------------------------------------------------


def search_run(*, search_id: int) -> None:
    """Advance a search until it ends or waits for the user. Safe to call again for a search that
    is already running elsewhere or was interrupted: it continues from the last recorded step."""
    while search_advance(search_id=search_id):
        pass


def search_advance(*, search_id: int) -> bool:
    """Record one step of the search, or of the sub-search it is waiting on. False when there is
    nothing more to do here (ended, waiting, or another worker recorded this step first)."""
    root = Search.objects.filter(pk=search_id).first()
    if root is None or root.status not in (Search.Status.QUEUED, Search.Status.RUNNING):
        return False
    if root.status == Search.Status.QUEUED:
        now = timezone.now()
        # A search re-queued after a stall keeps its start: its timeout counts from there.
        Search.objects.filter(pk=root.pk, status=Search.Status.QUEUED).update(
            status=Search.Status.RUNNING, started_at=Coalesce("started_at", Value(now)), heartbeat_at=now
        )
        root.refresh_from_db()
        if root.status != Search.Status.RUNNING:  # cancelled meanwhile
            return False
    if root.cancel_requested:
        with transaction.atomic():
            _end_family(
                Search.objects.select_for_update().get(pk=root.pk), status=Search.Status.CANCELLED, because="cancelled"
            )
        return False
    by = principal_rebuilt(space=root.space, user_id=root.created_by_id, token_id=root.token_id, acted_as=root.acted_as)
    if by is None:
        with transaction.atomic():
            _end_family(
                Search.objects.select_for_update().get(pk=root.pk), status=Search.Status.FAILED, because=ASKER_GONE
            )
        return False
    target = root
    while target.state.get("child"):
        target = Search.objects.get(pk=target.state["child"])
    try:
        outcome = walk.advance(target, by=by)
        recorded = _record(target, outcome, root_id=root.pk, by=by)
    except Exception as exc:  # a bug must end the search, not leave it "running" for the sweep
        logger.exception("Search %s failed at step %s.", target.pk, target.steps_taken + 1)
        with transaction.atomic():
            _end_family(
                Search.objects.select_for_update().get(pk=root.pk),
                status=Search.Status.FAILED,
                because=f"error: {type(exc).__name__}: {exc}"[:255],
            )
        return False
    # A sub-search's step never ends its parent; the parent's own step may.
    return recorded is not None and (recorded.pk != root.pk or recorded.status == Search.Status.RUNNING)


# Written by every step; the rest of a running search's row does not change.
STEP_FIELDS = [
    "state",
    "steps_taken",
    "heartbeat_at",
    "requeues",
    "status",
    "llm_calls",
    "prompt_tokens",
    "completion_tokens",
    "cost_usd",
]


@transaction.atomic
def _record(search: Search, outcome: walk.Outcome, *, root_id: int, by: Principal) -> Search | None:
    """Write the step; the search as written, or None if it was not (see the module's doc).
    Locks the top-level search first, as every write to a family of searches does."""
    root = Search.objects.select_for_update().get(pk=root_id)
    current = root if root.pk == search.pk else Search.objects.select_for_update().get(pk=search.pk)
    if current.steps_taken != search.steps_taken or current.status in TERMINAL:
        return None  # someone else recorded this step, or the search was ended meanwhile
    if root is not current:  # the family is alive: the sweep must not take it for stalled
        Search.objects.filter(pk=root.pk).update(heartbeat_at=timezone.now(), requeues=0)
    state = outcome.state
    call = outcome.call
    if call is not None:
        current.llm_calls += 1
        current.prompt_tokens += call.prompt_tokens
        current.completion_tokens += call.completion_tokens
        current.cost_usd += call.cost_usd
    if outcome.tool_call is not None:
        made = outcome.tool_call
        saved = ToolCall.objects.create(
            key=made.key,
            tool=made.tool,
            arguments=made.arguments,
            result=made.result,
            nodes=made.nodes,
            found=made.found,
            search=current,
        )
        if made.found:
            state.tool_results[made.folder] = saved.pk
    if outcome.document is not None:
        _save_document(current, outcome.document, by=by)
    _write_step(current, outcome.kind, outcome.summary, node=outcome.node, detail=outcome.detail, call=call)
    if outcome.spawn:
        child = _spawn(current, outcome.spawn, state)
        state.child = child.pk
        _write_step(
            current,
            SearchStep.Kind.SUBSEARCH,
            f"Sub-search {child.pk} for {len(outcome.spawn)} new question(s).",
            detail={"child": child.pk, "questions": outcome.spawn},
        )
    if outcome.ask_user:
        SearchQuestion.objects.create(search=current, questions=outcome.ask_user)
        current.status = Search.Status.WAITING
    if outcome.end is not None:
        _finish(current, state, status=outcome.status, because=outcome.end)
    else:
        current.state = state.model_dump(mode="json")
        current.save(update_fields=STEP_FIELDS)
    return current


def _write_step(
    search: Search, kind: str, summary: str, *, node: Node | None = None, detail: dict | None = None, call=None
) -> None:
    search.steps_taken += 1
    search.heartbeat_at = timezone.now()
    search.requeues = 0  # it moves: earlier re-queues are forgiven
    SearchStep.objects.create(
        search=search,
        number=search.steps_taken,
        kind=kind,
        node=node,
        node_name=node.name if node is not None else "",
        summary=summary[:2000],
        detail=detail or {},
        llm_call=call,
    )


def _save_document(search: Search, document: walk.NewDocument, *, by: Principal) -> None:
    """A tool's document under `references`, recorded as made by `by`'s user. `references` is
    where searches keep what they found: a search writes there whatever folder its token is
    limited to, so the token's folder is not checked."""
    references = selectors.node_internal_folder(space=search.space, name="references")
    node = node_create(
        parent=references,
        type="document",
        name=_free_name(references, document.name),
        description=document.description,
        content=document.content.encode(),
        by=replace(by, write_under=""),
    )
    ToolCall.objects.create(
        key=document.tool_key,
        tool=document.tool,
        arguments=document.arguments,
        result=document.content,
        node=node,
        search=search,
    )


def _free_name(parent: Node, wanted: str) -> str:
    """`wanted`, or `wanted (2)`, `(3)`...: a name is a wish here, and another node may hold it."""
    name = base = validate_name(wanted)
    taken = set(Node.objects.filter(parent=parent, name__startswith=base).values_list("name", flat=True))
    suffix = 1
    while name in taken:
        suffix += 1
        name = validate_name(f"{base} ({suffix})")
    return name


def _spawn(parent: Search, questions: list[str], state: WalkState) -> Search:
    """A sub-search from the top of the tree, with what is left of the parent's budgets."""
    elapsed = (timezone.now() - (parent.started_at or timezone.now())).total_seconds()
    known = "\n".join(f"{entry.question}: {entry.answer}" for entry in state.answers if entry.answer)
    now = timezone.now()
    return Search.objects.create(
        space_id=parent.space_id,
        parent=parent,
        depth=parent.depth + 1,
        created_by=parent.created_by,
        token_id=parent.token_id,
        acted_as=parent.acted_as,
        questions=questions,
        context="\n".join(part for part in (parent.context, known) if part)[:MAX_CONTEXT_CHARS],
        output=Search.Output.ANSWER,
        fallback=Search.Fallback.NONE,
        max_llm_calls=max(parent.max_llm_calls - parent.llm_calls, 0),
        max_tokens=max(parent.max_tokens - parent.total_tokens, 0),
        timeout_s=max(int(parent.timeout_s - elapsed), 0),
        status=Search.Status.RUNNING,
        started_at=now,
        heartbeat_at=now,
        state=_initial_state(questions),
    )


# output=node when a question is left open: the nodes the reading confirmed, then those of the
# index's best passages for the questions (marked as found by the index), at most this many.
INDEX_NODES = 3


def _node_entry(node_id: str, name: str, path: str, found_by: str, passages: list[tuple[int, int, str]]) -> dict:
    return {
        "id": node_id,
        "name": name,
        "path": path,
        "found_by": found_by,
        "passages": [{"start": start, "end": end, "snippet": snippet} for start, end, snippet in passages],
    }


def _read_nodes(search: Search, state: WalkState) -> list[dict]:
    """The nodes the reading found to be answers, in the order the walk found them (its best
    first), each with the passages its answers were cited from."""
    found = list(Node.objects.filter(pk__in=state.found, space_id=search.space_id).only("id", "name", "path"))
    paths = selectors.node_paths(nodes=found)
    order = {node_id: position for position, node_id in enumerate(state.found)}
    cited: dict[str, list[tuple[int, int]]] = {}
    for entry in state.answers:
        for citation in entry.citations:
            cited.setdefault(citation.node, []).append((citation.start, citation.end))
    passages = cited_passages(cited={node_id: ranges for node_id, ranges in cited.items() if node_id in order})
    return [
        _node_entry(node.pk, node.name, paths.get(node.pk, node.name), "reading", passages.get(node.pk, []))
        for node in sorted(found, key=lambda node: order[node.pk])
    ]


def _index_nodes(search: Search, state: WalkState, *, limit: int) -> list[dict]:
    """The nodes holding the index's best passages for the search's questions, in its scope,
    retrieved for whoever asked for the search (none if they are gone)."""
    start = Node.objects.filter(pk=state.start, space_id=search.space_id).first() if state.start else None
    if state.start and start is None:  # the start node was deleted: no scope to search in
        return []
    by = principal_rebuilt(
        space=search.space, user_id=search.created_by_id, token_id=search.token_id, acted_as=search.acted_as
    )
    if by is None:
        return []
    query = " ".join(search.questions)
    found = retrieve(query=query, by=by, start=start, k=settings.MEMSITE_INDEX_CANDIDATES)
    best = best_by_node(found, limit=limit, kind=Passage.Kind.CONTENT)
    return [
        _node_entry(
            node_id, hits[0].name, hits[0].path, "index", sorted((hit.start, hit.end, hit.snippet) for hit in hits)
        )
        for node_id, hits in best.items()
    ]


def _found_nodes(search: Search, state: WalkState, status: str) -> list[dict]:
    """output=node: the nodes the reading confirmed, then, when a search that ran to its end
    left a question open or confirmed no node, the index's best nodes up to INDEX_NODES in all:
    an offline reader does not recognise a paraphrase, a question that two nodes answer may have
    been read in one of them alone, and an answer may come from no node (a tool's result)."""
    read = _read_nodes(search, state)
    if status != Search.Status.DONE or (read and not state.remaining) or len(read) >= INDEX_NODES:
        return read
    known = {node["id"] for node in read}
    guessed = [node for node in _index_nodes(search, state, limit=INDEX_NODES + len(read)) if node["id"] not in known]
    return read + guessed[: INDEX_NODES - len(read)]


def _finish(search: Search, state: WalkState, *, status: str, because: str, hand_back: bool = True) -> None:
    answers = [entry.model_dump(mode="json") for entry in state.answers]
    search.result = {
        "answers": answers,
        "nodes": _found_nodes(search, state, status) if search.output == Search.Output.NODE else [],
        "open_questions": state.remaining,
        "ended_because": because,
    }
    state.child = None
    search.state = state.model_dump(mode="json")
    search.status = status
    search.ended_because = because[:255]
    search.finished_at = timezone.now()
    search.save()
    SearchQuestion.objects.filter(search=search, status=SearchQuestion.Status.PENDING).update(
        status=SearchQuestion.Status.CLOSED
    )
    if hand_back and search.parent_id is not None:
        _hand_back(search, parent_id=search.parent_id, child_answers=answers)


def _add_spend(parent: Search, child: Search) -> None:
    parent.llm_calls += child.llm_calls
    parent.prompt_tokens += child.prompt_tokens
    parent.completion_tokens += child.completion_tokens
    parent.cost_usd += child.cost_usd


def _hand_back(child: Search, *, parent_id: int, child_answers: list[dict[str, Any]]) -> None:
    """A sub-search's answers go into its parent's notes (the parent is still on the node where
    the questions arose, and reads it again with them), and what it spent into the parent's
    budget."""
    parent = Search.objects.select_for_update().get(pk=parent_id)
    state = WalkState.model_validate(parent.state)
    answers = [entry for entry in child_answers if entry["answer"]]
    state.notes.extend(f"Answer to '{entry['question']}': {entry['answer']}" for entry in answers)
    state.child = None
    _add_spend(parent, child)
    parent.state = state.model_dump(mode="json")
    summary = (
        f"Sub-search {child.pk} answered {len(answers)} of {len(child.questions)} question(s) ({child.ended_because})."
    )
    _write_step(parent, SearchStep.Kind.HANDBACK, summary, detail={"child": child.pk, "answers": answers})
    parent.save()


def _end_family(search: Search, *, status: str, because: str, hand_back: bool = True) -> None:
    """End a search and the sub-searches it is waiting on (whose answers go nowhere)."""
    state = WalkState.model_validate(search.state)
    if state.child:
        child = Search.objects.select_for_update().get(pk=state.child)
        if child.status not in TERMINAL:
            _end_family(child, status=status, because=because, hand_back=False)
            _add_spend(search, child)  # its answers go nowhere, but its calls were made
    _write_step(search, SearchStep.Kind.FINISH, because[:1].upper() + because[1:] + ".")
    _finish(search, state, status=status, because=because, hand_back=hand_back)


def searches_sweep_stale() -> dict[str, int]:
    """Re-queue the searches whose worker stopped writing steps (it died, or stalled), and those
    whose message never reached the broker, and fail those re-queued too often. A search whose
    message the broker holds only waits its turn: sent again it would wait twice, and be failed
    as stalled in a long enough backlog. Run by beat."""
    cutoff = timezone.now() - timedelta(seconds=settings.MEMSITE_SEARCH_STALE_S)
    counts = {"requeued": 0, "failed": 0}
    stale_ids = list(Search.objects.filter(_stale(cutoff)).values_list("pk", flat=True))
    if not stale_ids:
        return counts
    with broker_checked():
        for search_id in stale_ids:
            _requeue_or_fail(search_id, cutoff, counts)
    return counts


def _stale(cutoff: datetime) -> Q:
    """Top-level searches a worker started and stopped moving before `cutoff`, or queued before
    it and never sent."""
    stalled = Q(status=Search.Status.RUNNING, heartbeat_at__lt=cutoff)
    unsent = Q(status=Search.Status.QUEUED, sent_at__isnull=True, created_at__lt=cutoff)
    return Q(parent__isnull=True) & (stalled | unsent)


def _requeue_or_fail(search_id: int, cutoff: datetime, counts: dict[str, int]) -> None:
    """Queue the search again, as never started, unless it moved meanwhile; fail it instead
    once it has stalled MEMSITE_SEARCH_MAX_REQUEUES times."""
    with transaction.atomic():
        search = Search.objects.select_for_update().filter(_stale(cutoff), pk=search_id).first()
        if search is None:
            return
        stalled = search.status == Search.Status.RUNNING
        if stalled and search.requeues >= settings.MEMSITE_SEARCH_MAX_REQUEUES:
            _end_family(
                search,
                status=Search.Status.FAILED,
                because=f"stalled: no step for {settings.MEMSITE_SEARCH_STALE_S} s after {search.requeues} re-queues",
            )
            counts["failed"] += 1
            return
        Search.objects.filter(pk=search.pk).update(
            status=Search.Status.QUEUED, sent_at=None, requeues=F("requeues") + int(stalled)
        )
        _enqueue(search)
        counts["requeued"] += 1
