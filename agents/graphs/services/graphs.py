"""Reasoning graphs (seed 004): creating them, memorize and recall, and snapshot imports.
A graph's operations run one at a time under a lease, each applied whole or not at all and
recorded as a `GraphOp`. Explained in docs/graphs.md."""

import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from operator import attrgetter
from typing import Any, TypeVar

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from agents.context.logic.wire import wire_tokens
from agents.context.models import Agent
from agents.context.selectors.agents import agent_missing
from agents.graphs import selectors
from agents.graphs.logic.context import GraphContext, notes_text
from agents.graphs.logic.patches import (
    FlushAndFoldOp,
    FlushOp,
    FoldOp,
    GraphView,
    MemoryPatch,
    folded_edges,
    patch_errors,
    recall_errors,
    schema_for,
)
from agents.graphs.logic.snapshot import snapshot_read
from agents.graphs.models import Graph, GraphEdge, GraphNode, GraphOp, NodeKind, NodeState, Turn
from memsite.errors import InvalidInput, TooLarge
from memsite.llm.config import llm_config
from memsite.llm.errors import LLMError
from memsite.llm.gateway import complete
from memsite.llm.purposes import Purpose
from memsite.llm.quoting import DATA_RULE, data_block
from memsite.llm.tokens import counter_for_model
from memsite.names import has_invisible_characters
from memsite.queue import broker_checked, enqueue
from memsite.quotas.checks import graph_op_quota_require
from memsite.spaces.models import Space
from memsite.spaces.principals import Principal, principal_rebuilt
from memsite.storable import unstorable
from memsite.text.reading import Reading

logger = logging.getLogger(__name__)
T = TypeVar("T")
# An operation is never run as anyone but whoever asked for it.
ASKER_GONE = "Whoever asked for this operation (a member, or their token) can no longer act in this space."

MAX_TASK_CHARS = 8_000
MAX_MESSAGES = 200  # one memorize call
MAX_TURN_CHARS = 100_000
MEMORIZE_SYSTEM = (
    "You keep an agent's reasoning graph: a task, the subtasks it decomposes into and the "
    "evidence that supports them. Given the graph and the agent's newest step (its action and "
    "the result), reply in JSON with a MemoryPatch: new nodes (tmp_id, kind subtask or "
    "evidence, thought as notes {role, content}) and edges (src, dst, rationale) that link them "
    "to active nodes by id or to each other by tmp_id. No cycles, no self-loops. " + DATA_RULE
)
RECALL_SYSTEM = (
    "You keep an agent's reasoning graph small. Reply in JSON with a FlushAndFoldOp: flush_ops "
    "for active nodes that turned out wrong or useless (their notes replace their turns), and "
    "fold_ops that fold finished active nodes into one summary (notes {role, content}). Never "
    "the task node; each node in at most one operation. " + DATA_RULE
)


def _clean_text(name: str, value: object, limit: int) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"{name} must be a non-empty string.")
    if len(value) > limit:
        raise InvalidInput(f"{name} is longer than {limit} characters.")
    return value


def graph_create(
    *,
    space: Space,
    task: str,
    agent: Agent | None = None,
    model: str | None = None,
    trigger_tokens: int | None = None,
    target_tokens: int | None = None,
) -> Graph:
    """A graph with its task node (node 1). The trigger defaults to a share of the model's
    window (at most MEMSITE_GRAPH_TRIGGER_TOKENS), the target to 60% of the trigger. The agent,
    if any, must be of the graph's space: another space's is not found."""
    if agent is not None and agent.space_id != space.pk:
        raise agent_missing(agent.pk)
    task = _clean_text("task", task, MAX_TASK_CHARS).strip()
    model = model or (agent.model if agent else llm_config().model_for(Purpose.MEMORIZE))
    window = llm_config().model_info(model).context_window
    trigger = trigger_tokens or min(settings.MEMSITE_GRAPH_TRIGGER_TOKENS, window // 2)
    target = target_tokens or int(trigger * 0.6)
    for name, value in (("trigger_tokens", trigger), ("target_tokens", target)):
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= window:
            raise InvalidInput(f"{name} must be a whole number of tokens from 1 to {window} ({model}'s window).")
    if target >= trigger:
        raise InvalidInput(f"target_tokens ({target}) must be below trigger_tokens ({trigger}).")
    with transaction.atomic():
        graph = Graph.objects.create(
            space=space,
            task=task,
            agent=agent,
            model=model,
            trigger_tokens=trigger,
            target_tokens=target,
            next_node_id=2,
        )
        GraphNode.objects.create(graph=graph, node_id=1, kind=NodeKind.TASK, thought=task)
        GraphOp.objects.create(
            graph=graph,
            kind=GraphOp.Kind.CREATE,
            status=GraphOp.Status.APPLIED,
            rationale="the task",
            detail={"task": task},
            ended_at=timezone.now(),
        )
    return graph


def _view(graph: Graph) -> GraphView:
    nodes = GraphNode.objects.filter(graph=graph).values_list("node_id", "kind", "state")
    edges = GraphEdge.objects.filter(graph=graph).values_list("src", "dst")
    return GraphView(
        kinds={node: kind for node, kind, _ in nodes},
        states={node: state for node, _, state in nodes},
        edges=frozenset(edges),
    )


def _enqueue(graph: Graph) -> None:
    from agents.graphs.tasks import graph_work  # tasks import this module

    # Inside the transaction that saved the operation: a broker that does not answer rolls it back.
    # The task runs every operation queued by then, so all of them are sent with it.
    queued = GraphOp.objects.filter(graph_id=graph.pk, status=GraphOp.Status.QUEUED, sent_at__isnull=True)
    enqueue(graph_work, sent=queued, graph_id=graph.pk)


def _steps_check(roles: list[str]) -> None:
    """TooLarge past MEMSITE_GRAPH_MEMORIZE_MAX_STEPS steps: each is an LLM call."""
    steps = len(_pairs(roles, role=str))
    limit = settings.MEMSITE_GRAPH_MEMORIZE_MAX_STEPS
    if steps > limit:
        raise TooLarge(
            f"The messages hold {steps} steps (an assistant turn and the results after it; each is one "
            f"LLM call); one memorize takes at most {limit} (MEMSITE_GRAPH_MEMORIZE_MAX_STEPS). "
            "Send them in several memorize calls.",
            data={"steps": steps, "max_steps": limit},
        )


def graph_memorize(*, graph: Graph, messages: Sequence[Mapping[str, Any]], by: Principal) -> GraphOp:
    """Store the turns (ids that never shift) and queue their memorizing for `by`, within the
    user's quota (QuotaExceeded, 429): the worker runs it as `by`."""
    if (
        isinstance(messages, (str, bytes))
        or not isinstance(messages, Sequence)
        or not 1 <= len(messages) <= MAX_MESSAGES
    ):
        raise InvalidInput(f"messages must be a list of 1 to {MAX_MESSAGES} messages.")
    cleaned = []
    for number, message in enumerate(messages):
        if not isinstance(message, Mapping) or set(message) - {"role", "content"}:
            raise InvalidInput(f"messages[{number}] must be an object with role and content.")
        role = _clean_text(f"messages[{number}].role", message.get("role"), 64).strip()
        if has_invisible_characters(role):
            # A role names a participant: it goes to the model with its turn, and to the dashboard.
            raise InvalidInput(f"messages[{number}].role must not contain control or invisible characters: {role!r}.")
        content = message.get("content")
        if not isinstance(content, str) or len(content) > MAX_TURN_CHARS:
            raise InvalidInput(f"messages[{number}].content must be a string of at most {MAX_TURN_CHARS} characters.")
        problem = unstorable(content, f"messages[{number}].content")
        if problem is not None:
            raise InvalidInput(f"{problem}.")
        cleaned.append((role, content))
    _steps_check([role for role, _ in cleaned])
    counter = counter_for_model(graph.model)
    with transaction.atomic():
        graph_op_quota_require(by=by)
        graph = Graph.objects.select_for_update().get(pk=graph.pk)
        first = graph.next_turn_id
        Turn.objects.bulk_create(
            Turn(
                graph=graph,
                turn_id=first + index,
                role=role,
                content=content,
                token_count=wire_tokens(counter, {"role": role, "content": content}),
            )
            for index, (role, content) in enumerate(cleaned)
        )
        graph.next_turn_id = first + len(cleaned)
        graph.save(update_fields=["next_turn_id", "updated_at"])
        op = GraphOp.objects.create(
            graph=graph,
            kind=GraphOp.Kind.MEMORIZE,
            detail={"turn_ids": list(range(first, graph.next_turn_id))},
            created_by=by.user,
            token=by.token,
            acted_as=by.acted_as,
        )
        _enqueue(graph)
    return op


def graph_recall(*, graph: Graph, by: Principal) -> GraphOp:
    """Queue a recall for `by`, whatever the context's size, within the user's quota
    (QuotaExceeded, 429): the worker runs it as `by`."""
    with transaction.atomic():
        graph_op_quota_require(by=by)
        op = GraphOp.objects.create(
            graph=graph,
            kind=GraphOp.Kind.RECALL,
            rationale="asked for",
            created_by=by.user,
            token=by.token,
            acted_as=by.acted_as,
        )
        _enqueue(graph)
    return op


class LeaseLost(Exception):
    """Another worker took the graph over (this one's lease had run out)."""


def _lease(graph_id: int) -> datetime | None:
    """The graph's lease, taken if it is free: its end, which identifies the holder."""
    now = timezone.now()
    until = now + timedelta(seconds=settings.MEMSITE_GRAPH_LEASE_S)
    free = Q(lease_until__isnull=True) | Q(lease_until__lt=now)
    return until if Graph.objects.filter(free, pk=graph_id).update(lease_until=until) else None


def _lease_renew(graph: Graph) -> None:
    """Move the lease this worker holds (`graph.lease_until`) on, before a slow step."""
    until = timezone.now() + timedelta(seconds=settings.MEMSITE_GRAPH_LEASE_S)
    if not Graph.objects.filter(pk=graph.pk, lease_until=graph.lease_until).update(lease_until=until):
        raise LeaseLost
    graph.lease_until = until


@contextmanager
def _holding(graph: Graph) -> Iterator[Graph]:
    """A transaction with the graph's row locked, while this worker still holds the lease it
    took (`graph.lease_until`): LeaseLost, and nothing written, otherwise."""
    with transaction.atomic():
        locked = Graph.objects.select_for_update().get(pk=graph.pk)
        if locked.lease_until != graph.lease_until:
            raise LeaseLost
        yield locked


def graph_work(*, graph_id: int) -> int:
    """Run the graph's queued operations in order, one at a time; how many ran. Another worker
    holding the graph's lease runs them instead."""
    done = 0
    while GraphOp.objects.filter(graph_id=graph_id, status=GraphOp.Status.QUEUED).exists() and (
        lease := _lease(graph_id)
    ):
        graph = Graph(pk=graph_id, lease_until=lease)  # lease_until: this worker's, renewed as it goes
        try:
            while op := GraphOp.objects.filter(graph_id=graph_id, status=GraphOp.Status.QUEUED).order_by("id").first():
                graph = Graph.objects.get(pk=graph_id)
                graph.lease_until = lease
                try:
                    _run(graph, op)
                except LeaseLost:
                    raise
                except Exception as exc:  # a bug must end the op, not block the graph's queue
                    logger.exception("Operation %s on graph %s failed.", op.pk, graph_id)
                    _fail(graph, op, f"{type(exc).__name__}: {exc}")
                lease = graph.lease_until
                done += 1
        except LeaseLost:
            logger.warning("Work on graph %s stopped: another worker took the graph over.", graph_id)
            return done
        finally:
            # Released only if still ours. A queue that filled after the last look is seen by
            # the outer loop.
            Graph.objects.filter(pk=graph_id, lease_until=graph.lease_until).update(lease_until=None)
    return done


def _run(graph: Graph, op: GraphOp) -> None:
    """One queued operation, as whoever asked for it; failed if they can no longer act in the space."""
    by = principal_rebuilt(space=graph.space, user_id=op.created_by_id, token_id=op.token_id, acted_as=op.acted_as)
    if by is None:
        _fail(graph, op, ASKER_GONE)
    elif op.kind == GraphOp.Kind.MEMORIZE:
        _memorize(graph, op, by=by)
    else:
        _recall(graph, op, by=by)


def _fail(graph: Graph, op: GraphOp, error: str) -> None:
    """End an operation that broke as failed, with what is recorded of it kept."""
    with _holding(graph):
        GraphOp.objects.filter(pk=op.pk, status=GraphOp.Status.QUEUED).update(
            status=GraphOp.Status.FAILED, error=error[:2_000], ended_at=timezone.now()
        )


def graphs_sweep_stale() -> int:
    """Queue the work of graphs whose operations wait with no worker on them: the worker that
    held the graph stopped (its lease ran out), or the message that would have started one
    never reached the broker. A graph whose message the broker holds only waits its turn: sent
    again, it would wait twice. Run by beat; how many graphs it queued."""
    now = timezone.now()
    queued = 0
    graphs = list(Graph.objects.filter(_stale(now)).only("pk"))
    if not graphs:
        return queued
    with broker_checked():
        for graph in graphs:
            with transaction.atomic():
                # The lost lease is let go, so that the graph, queued again, is not taken for
                # stalled while it waits its turn; a worker still on it stops at its next write.
                if not Graph.objects.filter(_stale(now), pk=graph.pk).update(lease_until=None):
                    continue  # a worker took it meanwhile
                GraphOp.objects.filter(graph_id=graph.pk, status=GraphOp.Status.QUEUED).update(sent_at=None)
                _enqueue(graph)
            queued += 1
    return queued


def _stale(now: datetime) -> Q:
    """Graphs with queued operations whose worker stopped (its lease ran out), or with one
    queued MEMSITE_GRAPH_LEASE_S ago and never sent."""
    waiting = GraphOp.objects.filter(status=GraphOp.Status.QUEUED)
    unsent = waiting.filter(
        sent_at__isnull=True, created_at__lt=now - timedelta(seconds=settings.MEMSITE_GRAPH_LEASE_S)
    )
    stalled = Q(lease_until__lt=now, pk__in=waiting.values("graph_id"))
    return stalled | Q(lease_until__isnull=True, pk__in=unsent.values("graph_id"))


def _pairs(turns: Sequence[T], *, role: Callable[[T], str]) -> list[list[T]]:
    """Assistant turns, each with the results that follow it: the steps a memorize asks about."""
    pairs: list[list[T]] = []
    for turn in turns:
        if role(turn) == "assistant" or not pairs:
            pairs.append([turn])
        else:
            pairs[-1].append(turn)
    return pairs


def _graph_lines(graph: Graph, budget: int) -> str:
    """The active graph as text within `budget` tokens: the task first, then the newest nodes.
    The task stays even when an imported graph has flushed or folded it: it is what the work is."""
    counter = counter_for_model(graph.model)
    shown = GraphNode.objects.filter(Q(state=NodeState.ACTIVE) | Q(kind=NodeKind.TASK), graph=graph)
    nodes = sorted(shown.order_by("node_id"), key=lambda node: node.kind != NodeKind.TASK)
    edges = [f"{src} -> {dst}" for src, dst in GraphEdge.objects.filter(graph=graph).values_list("src", "dst")]
    lines = [f"[{node.node_id}] {node.kind}: {' '.join(notes_text(node.thought).split())[:300]}" for node in nodes]
    chosen: list[str] = []
    spent = counter.count("\n".join(edges[-50:]))
    for line in [lines[0], *reversed(lines[1:])] if lines else []:
        cost = counter.count(line)
        if spent + cost > budget:
            break
        chosen.append(line)
        spent += cost

    def render(kept: list[str]) -> str:
        ordered = sorted(kept, key=lambda line: int(line[1 : line.index("]")]))
        return "Nodes:\n" + "\n".join(ordered) + "\nEdges:\n" + "\n".join(edges[-50:])

    # The headings and line breaks cost tokens the lines counted one by one do not: drop the
    # oldest lines chosen until the whole text fits.
    text = render(chosen)
    while len(chosen) > 1 and counter.count(text) > budget:
        chosen.pop()
        text = render(chosen)
    return text


def _apply_patch(
    graph: Graph, patch: MemoryPatch, turn_ids: list[int], *, op: GraphOp, done: Sequence[dict]
) -> dict[str, int]:
    """Apply a valid patch atomically; the new nodes' ids by tmp_id. InvalidInput, and nothing
    written, when it no longer fits the graph. The op's record of its pairs (those `done`, then
    this one) is saved in the same transaction."""
    with _holding(graph) as locked:
        errors = patch_errors(_view(locked), patch)
        if errors:
            raise InvalidInput("; ".join(errors))
        ids = {node.tmp_id: locked.next_node_id + index for index, node in enumerate(patch.add_nodes)}
        GraphNode.objects.bulk_create(
            GraphNode(
                graph=locked,
                node_id=ids[node.tmp_id],
                kind=node.kind,
                thought=[note.model_dump() for note in node.thought],
                related_turn_ids=turn_ids,
            )
            for node in patch.add_nodes
        )
        GraphEdge.objects.bulk_create(
            GraphEdge(
                graph=locked,
                src=ids.get(edge.src) or int(edge.src),
                dst=ids.get(edge.dst) or int(edge.dst),
                rationale=edge.rationale,
            )
            for edge in patch.add_edges
        )
        locked.next_node_id += len(ids)
        locked.save(update_fields=["next_node_id", "updated_at"])
        entry = {"turn_ids": turn_ids, "patch": patch.model_dump(), "node_ids": ids}
        GraphOp.objects.filter(pk=op.pk).update(detail={**op.detail, "pairs": [*done, entry]})
    return ids


def _pairs_record(graph: Graph, op: GraphOp, pairs: list[dict]) -> None:
    with _holding(graph):
        GraphOp.objects.filter(pk=op.pk).update(detail={**op.detail, "pairs": pairs})


def _anchor(view: GraphView) -> int:
    """The node the offline reply hangs a new subtask from: the task, or, when an imported graph
    has flushed or folded it (no edge may reach it), the newest active node."""
    active_tasks = view.task_ids & view.active
    return min(active_tasks) if active_tasks else max(view.active, default=min(view.task_ids))


def _memorize(graph: Graph, op: GraphOp, *, by: Principal) -> None:
    turn_ids = op.detail.get("turn_ids", [])
    turns = list(Turn.objects.filter(graph=graph, turn_id__in=turn_ids).order_by("turn_id"))
    # Pairs already recorded (a worker stopped half-way through this op) are not asked again.
    results: list[dict] = list(op.detail.get("pairs", []))
    before = op.tokens_before
    if before is None:
        before = selectors.graph_context(graph=graph).tokens
        GraphOp.objects.filter(pk=op.pk).update(tokens_before=before)
    for pair in _pairs(turns, role=attrgetter("role"))[len(results) :]:
        _lease_renew(graph)
        notes = [{"role": turn.role, "content": turn.content[:2_000]} for turn in pair]
        view = _view(graph)
        subtasks = [node for node in view.active if view.kinds[node] == NodeKind.SUBTASK]
        given = {"notes": notes, "task": _anchor(view), "subtask": max(subtasks, default=None)}
        step = "\n".join(f"{note['role']}: {' '.join(note['content'].split())}" for note in notes)
        messages = [
            {"role": "system", "content": MEMORIZE_SYSTEM},
            {"role": "user", "content": data_block(_graph_lines(graph, settings.MEMSITE_GRAPH_PROMPT_TOKENS))},
            {"role": "user", "content": f"Newest step:\n{data_block(step)}"},
        ]
        entry: dict[str, Any] = {"turn_ids": [turn.turn_id for turn in pair]}
        try:
            patch = complete(
                purpose=Purpose.MEMORIZE,
                messages=messages,
                reading=Reading(query="", context=step, given=given),
                schema=schema_for(MemoryPatch, view),
                served=op,
                by=by,
            ).value
            entry["patch"] = patch.model_dump()
            entry["node_ids"] = _apply_patch(graph, patch, entry["turn_ids"], op=op, done=results)
        except (LLMError, InvalidInput) as error:
            entry["error"] = error.message
            _pairs_record(graph, op, [*results, entry])
        results.append(entry)
    rejected = [entry for entry in results if "error" in entry]
    after = selectors.graph_context(graph=graph)
    with _holding(graph):
        GraphOp.objects.filter(pk=op.pk).update(
            status=GraphOp.Status.REJECTED if rejected else GraphOp.Status.APPLIED,
            rationale=f"{len(results) - len(rejected)} of {len(results)} steps memorized",
            detail={**op.detail, "pairs": results},
            error="; ".join(entry["error"] for entry in rejected)[:2_000],
            tokens_before=before,
            tokens_after=after.tokens,
            ended_at=timezone.now(),
        )
    _recall_while_over(graph, after, asked=op, by=by)


def _recall_while_over(graph: Graph, context: GraphContext, *, asked: GraphOp, by: Principal) -> None:
    """Past the trigger, recall until under the target or out of attempts: so it fires once
    when the context grows too large, not at every step after. The recalls are the work of `by`,
    who `asked` for the memorize."""
    if context.tokens <= graph.trigger_tokens:
        return
    for _ in range(graph.max_recalls):
        op = GraphOp.objects.create(
            graph=graph,
            kind=GraphOp.Kind.RECALL,
            rationale="over the trigger",
            created_by_id=asked.created_by_id,
            token_id=asked.token_id,
            acted_as=asked.acted_as,
        )
        before = context.tokens
        context = _recall(graph, op, context, by=by)
        if context.tokens <= graph.target_tokens or context.tokens >= before:
            return  # under the target, or a recall that could not shrink it: another would not either


def _foldable(graph: Graph) -> list[tuple[int, str]]:
    """What the offline reply folds: the active steps but the newest two."""
    nodes = GraphNode.objects.filter(
        graph=graph, state=NodeState.ACTIVE, kind__in=[NodeKind.SUBTASK, NodeKind.EVIDENCE, NodeKind.SUMMARY]
    ).order_by("node_id")
    candidates = [(node.node_id, notes_text(node.thought)) for node in nodes]
    return candidates[: max(0, len(candidates) - 2)]


def _apply_recall(graph: Graph, op: FlushAndFoldOp, *, record: GraphOp, tokens_before: int) -> dict[str, Any]:
    """Apply a valid FlushAndFoldOp atomically: flushed nodes marked; each fold a summary node
    with the union of the folded nodes' turns, the crossing edges moved to it, the folded nodes
    marked. InvalidInput, and nothing written, when it no longer fits the graph. `record`, the
    GraphOp, is marked applied, with what it did, in the same transaction."""
    with _holding(graph) as locked:
        view = _view(locked)
        errors = recall_errors(view, op)
        if errors:
            raise InvalidInput("; ".join(errors))
        flushed = [flush.id for flush in op.flush_ops]
        GraphNode.objects.filter(graph=locked, node_id__in=flushed).update(state=NodeState.FLUSHED)
        rows = GraphEdge.objects.filter(graph=locked).order_by("id")
        edges = list(rows.values_list("src", "dst", "rationale"))
        summaries, left_out = [], []
        for fold in op.fold_ops:
            summary_id = locked.next_node_id
            locked.next_node_id += 1
            folded = set(fold.ids)
            turn_lists = GraphNode.objects.filter(graph=locked, node_id__in=folded).values_list(
                "related_turn_ids", flat=True
            )
            GraphNode.objects.create(
                graph=locked,
                node_id=summary_id,
                kind=NodeKind.SUMMARY,
                thought=[note.model_dump() for note in fold.notes],
                related_turn_ids=sorted({turn for turns in turn_lists for turn in turns}),
            )
            GraphNode.objects.filter(graph=locked, node_id__in=folded).update(
                state=NodeState.FOLDED, folded_into=summary_id
            )
            edges, dropped = folded_edges(edges, folded, summary_id)
            summaries.append(summary_id)
            left_out.extend(dropped)
        if op.fold_ops:
            GraphEdge.objects.filter(graph=locked).delete()
            GraphEdge.objects.bulk_create(
                GraphEdge(graph=locked, src=src, dst=dst, rationale=why) for src, dst, why in edges
            )
        locked.save(update_fields=["next_node_id", "updated_at"])
        applied = {"flushed": flushed, "summaries": summaries, "edges_left_out": left_out}
        proposed: list[FlushOp | FoldOp] = [*op.flush_ops, *op.fold_ops]
        rationales = [item.rationale for item in proposed if item.rationale]
        GraphOp.objects.filter(pk=record.pk).update(
            status=GraphOp.Status.APPLIED,
            detail={"operation": op.model_dump(), **applied},
            rationale="; ".join(rationales)[:2_000] or record.rationale,
            tokens_before=tokens_before,
            ended_at=timezone.now(),
        )
    return applied


def _recall(graph: Graph, op: GraphOp, context: GraphContext | None = None, *, by: Principal) -> GraphContext:
    context = context or selectors.graph_context(graph=graph)
    view = _view(graph)
    messages = [
        {"role": "system", "content": RECALL_SYSTEM},
        {"role": "user", "content": data_block(_graph_lines(graph, settings.MEMSITE_GRAPH_PROMPT_TOKENS))},
        {"role": "user", "content": f"The context takes {context.tokens} tokens; the target is {graph.target_tokens}."},
    ]
    _lease_renew(graph)
    try:
        reply = complete(
            purpose=Purpose.RECALL,
            messages=messages,
            reading=Reading(query="", context="", given=_foldable(graph)),
            schema=schema_for(FlushAndFoldOp, view),
            served=op,
            by=by,
        ).value
        _apply_recall(graph, reply, record=op, tokens_before=context.tokens)
    except (LLMError, InvalidInput) as error:
        with _holding(graph):
            GraphOp.objects.filter(pk=op.pk).update(
                status=GraphOp.Status.REJECTED,
                error=error.message,
                tokens_before=context.tokens,
                tokens_after=context.tokens,
                ended_at=timezone.now(),
            )
        return context
    context = selectors.graph_context(graph=graph)
    GraphOp.objects.filter(pk=op.pk).update(tokens_after=context.tokens)
    return context


def graph_snapshot_import(*, graph: Graph, document: Any) -> GraphOp:
    """Replace the graph's nodes and edges by a snapshot's; its turns stay."""
    nodes, edges = snapshot_read(document)
    with transaction.atomic():
        graph = Graph.objects.select_for_update().get(pk=graph.pk)
        GraphEdge.objects.filter(graph=graph).delete()
        GraphNode.objects.filter(graph=graph).delete()
        GraphNode.objects.bulk_create(GraphNode(graph=graph, **node) for node in nodes)
        GraphEdge.objects.bulk_create(GraphEdge(graph=graph, **edge) for edge in edges)
        task = next(node for node in nodes if node["kind"] == NodeKind.TASK)
        graph.task = notes_text(task["thought"])[:MAX_TASK_CHARS]
        graph.next_node_id = max(node["node_id"] for node in nodes) + 1
        graph.save(update_fields=["task", "next_node_id", "updated_at"])
        return GraphOp.objects.create(
            graph=graph,
            kind=GraphOp.Kind.IMPORT,
            status=GraphOp.Status.APPLIED,
            rationale="snapshot imported",
            detail={"nodes": len(nodes), "edges": len(edges)},
            ended_at=timezone.now(),
        )
