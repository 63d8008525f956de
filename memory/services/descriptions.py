"""Descriptions memsite writes (seed 000: the description is what an LLM routes by), as its own
upkeep in each space: charged to the space's system budget, not to whoever made the node.
Explained in docs/memory.md."""

import logging
from collections.abc import Collection
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from memory.index.writes import chunks, content_text, index_nodes
from memory.models import Node, NodeContent, PendingDescription
from memory.selectors import node_content_slice
from memory.validation import validate_description
from memsite.llm.config import llm_config
from memsite.llm.errors import LLMError, Reason
from memsite.llm.gateway import complete
from memsite.llm.prompt import Prompt
from memsite.llm.purposes import Purpose
from memsite.llm.quoting import DATA_RULE, data_block
from memsite.queue import in_turn, publish_on_commit, run_alone, sweep
from memsite.quotas.selectors import spends_today
from memsite.spaces.principals import system_principal
from memsite.spaces.selectors import space_get
from memsite.text.reading import Reading

logger = logging.getLogger(__name__)

DESCRIBED_TYPES = ("document", "project_file_bytes")
DESCRIPTION_CHARS = 300
CONTENT_BYTES = 8_000  # shown to the model: a text's start says what it is; more costs tokens
TASK_NODES = 20  # one task's share (an LLM call each); it queues the next for the rest
MAX_ATTEMPTS = 3  # failed calls before a node is given up on: a broken server is not called for ever
LOCK = "memory:descriptions:writing"
DESCRIBE_SYSTEM = (
    f"Describe a memory node in one line of at most {DESCRIPTION_CHARS} characters, so that it can "
    "be found later: what it holds, with its key terms, names and dates. Reply with the "
    f"description alone. {DATA_RULE}"
)


def descriptions_queue(node_ids: Collection[str]) -> int:
    """In the write's transaction: queue these nodes for a description, those that can have one
    and have none of their own. Returns how many were queued."""
    from memory.tasks import descriptions_write

    queued = 0
    for chunk in chunks(list(dict.fromkeys(node_ids))):
        wanted = Node.objects.filter(pk__in=chunk, type__in=DESCRIBED_TYPES).filter(
            Q(description="") | Q(description_auto=True)
        )
        rows = [PendingDescription(node_id=node_id) for node_id in wanted.values_list("pk", flat=True)]
        PendingDescription.objects.bulk_create(rows, ignore_conflicts=True)
        queued += len(rows)
    if queued:
        publish_on_commit(descriptions_write)
    return queued


def descriptions_sweep() -> None:
    """Beat's way back for nodes whose task was lost, and for those set aside while their
    space's budget was spent, once it has room again."""
    from memory.tasks import descriptions_write

    _budgets_back()
    sweep(PendingDescription.objects.filter(waiting_for_budget=False), descriptions_write)


def _budgets_back() -> None:
    """Put the nodes set aside for a spent budget back in the queue, in their old places, once
    their space's budgets have room: the day ended, or the owner raised one. The budgets are
    those the describe calls count against, of the provider that serves them."""
    provider = llm_config().provider
    set_aside = PendingDescription.objects.filter(waiting_for_budget=True)
    for space_id in set_aside.values_list("node__space_id", flat=True).distinct():
        space = space_get(space_id=space_id)
        if space is None:
            continue  # deleted, its nodes and their queue rows with it
        if not any(spend.spent for spend in spends_today(by=system_principal(space), provider=provider)):
            _spaces_nodes(set_aside, space_id).update(waiting_for_budget=False)


def _spaces_nodes(pending: QuerySet, space_id: int) -> QuerySet:
    """The nodes of the space, whose descriptions its system budget pays for."""
    return pending.filter(node__space_id=space_id)


def descriptions_write_pending(*, limit: int = TASK_NODES) -> int:
    """A task's work: describe waiting nodes, each space's in turn and each space's oldest
    first, one task at a time (the others return at once: the running one takes what was
    queued meanwhile). Returns how many nodes left the queue."""
    from memory.tasks import descriptions_write

    def share() -> tuple[int, bool]:
        ready = PendingDescription.objects.filter(waiting_for_budget=False)
        turns = in_turn(ready, by="node__space_id", order=("queued_at", "node_id"), each=limit)
        node_ids = list(turns.values_list("node_id", flat=True)[:limit])
        done = sum(node_describe(node_id=node_id) for node_id in node_ids)
        # More may wait. A run that moved nothing (a server down) leaves them to beat's sweep
        # rather than run again at once.
        return done, len(node_ids) == limit and done > 0

    return run_alone(lock=LOCK, timeout_s=settings.MEMSITE_UPKEEP_LOCK_S, task=descriptions_write, share=share)


@dataclass(frozen=True)
class _Seen:
    """What a describe read of a node, outside any transaction."""

    name: str
    space_id: int
    sha256: str | None  # of the content read; None for no content row
    text: str | None  # None when there is nothing to describe


def node_describe(*, node_id: str) -> bool:
    """Describe one queued node (the LLM call runs outside any transaction, holding no lock).
    Returns whether it left the queue: described, found to have nothing to describe, or set
    aside with its space's other nodes until the space's budget has room."""
    seen = _read(node_id)
    if seen is None:
        return True  # deleted, its queue row with it
    if seen.text is None:
        return _settle(node_id, seen.sha256, None)
    space = space_get(space_id=seen.space_id)
    if space is None:
        return True  # deleted, its nodes and their queue rows with it
    try:
        prompt = describe_prompt(seen.name, seen.text)
        completion = complete(
            purpose=Purpose.DESCRIBE, messages=prompt.messages, reading=prompt.reading, by=system_principal(space)
        )
    except LLMError as exc:
        return _failed(node_id, seen, exc)
    return _settle(node_id, seen.sha256, one_line(str(completion.value)))


def describe_prompt(name: str, text: str) -> Prompt:
    """The node's name and content, quoted as data; the task last, where nothing in the
    content can pass for it."""
    messages = [
        {"role": "system", "content": DESCRIBE_SYSTEM},
        {"role": "user", "content": data_block(f"Node: {name}\nContent:\n{text}")},
        {"role": "user", "content": "Task: describe this node, so that it can be found later."},
    ]
    return Prompt(messages, Reading(query="", context=f"Node: {name}\n{text}"))


def one_line(reply: str) -> str:
    """A reply as a description: one line, no NUL, cut at a word to DESCRIPTION_CHARS."""
    text = " ".join(reply.replace("\x00", "").split()).strip("\"'")
    if len(text) <= DESCRIPTION_CHARS:
        return text
    return text[: DESCRIPTION_CHARS - 1].rsplit(" ", 1)[0] + "\u2026"


def _read(node_id: str) -> _Seen | None:
    node = (
        Node.objects.filter(pk=node_id)
        .values_list("name", "type", "description", "description_auto", "space_id")
        .first()
    )
    if node is None:
        return None  # deleted: its queue row went with it
    name, type_name, description, auto, space_id = node
    piece = node_content_slice(node_id=node_id, start=0, length=CONTENT_BYTES)
    sha256 = piece.sha256 if piece is not None else None
    own = bool(description) and not auto
    if type_name not in DESCRIBED_TYPES or own or piece is None:
        return _Seen(name, space_id, sha256, None)
    return _Seen(name, space_id, sha256, _text_of(bytes(piece.data)))


def _text_of(data: bytes) -> str | None:
    """Content as text, as the content index reads it; None for binary or blank content."""
    text = content_text(data)
    return text if text and text.strip() else None


@transaction.atomic
def _settle(node_id: str, sha256: str | None, description: str | None) -> bool:
    """Under the node's row lock: leave the queue, and write `description` if the node still
    has none of its own. A node whose content changed since it was read stays queued for the
    new content (False)."""
    node = Node.objects.select_for_update().filter(pk=node_id).first()
    if node is None:
        return True  # deleted, its queue row with it
    if NodeContent.objects.filter(node_id=node_id).values_list("sha256", flat=True).first() != sha256:
        return False
    PendingDescription.objects.filter(node_id=node_id).delete()
    if not description or (node.description and not node.description_auto):
        return True
    # The version is not bumped, nor updated_at: a client holding If-Match on the node would
    # get a 409 for a change it did not make, and the description follows from the content
    # that version already has.
    Node.objects.filter(pk=node_id).update(description=validate_description(description), description_auto=True)
    index_nodes([node_id], labels_only=True)
    return True


def _failed(node_id: str, seen: _Seen, error: LLMError) -> bool:
    """A spent budget sets the node aside, with every node of its space (their calls would be
    refused too), until beat's sweep finds room in it; another failure counts,
    and the node is given up on after MAX_ATTEMPTS. Returns whether the node left the queue."""
    pending = PendingDescription.objects.filter(node_id=node_id)
    if error.reason is Reason.BUDGET_SPENT:
        _spaces_nodes(PendingDescription.objects.all(), seen.space_id).update(waiting_for_budget=True)
        return True
    attempts = (pending.values_list("attempts", flat=True).first() or 0) + 1
    if attempts >= MAX_ATTEMPTS:
        logger.warning("No description for %s after %d failed calls: %s", node_id, attempts, error.message)
        pending.delete()
        return True
    pending.update(attempts=attempts, queued_at=timezone.now())
    return False
