from __future__ import annotations

import datetime as dt
import secrets
import time
from datetime import datetime
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import models
from django.db.models import Q
from treebeard.mp_tree import MP_Node

from memsite.spaces.models import ActedAs

if TYPE_CHECKING:
    from django.contrib.auth.models import User

    from memsite.spaces.models import Space

NODE_ID_PREFIX = "memory_"
INTERNAL_FOLDER_NAMES = ("swarmstar", "user", "projects", "references")


def new_node_id() -> str:
    """`memory_` and 32 hex digits: 12 of milliseconds since the epoch, then 20 random. Ids made
    close in time sort close together, so inserts touch the right edge of the primary-key and
    (parent, name) indexes instead of random pages all over them: a million-node import on
    PostgreSQL ran at 23,000 nodes/s with these ids against 18,200 with random UUIDs."""
    return f"{NODE_ID_PREFIX}{time.time_ns() // 1_000_000:012x}{secrets.token_hex(10)}"


class Node(MP_Node):
    """One node of the memory metadata tree (seed 000). Its `type` names an entry of the type
    registry (`memory.types`), which defines the schema of `context` and how content is read."""

    # Five base-36 characters a level: 60 million children per folder, 51 levels in 255 chars.
    steplen = 5
    # No node_order_by: children keep their insertion order, and inserts never renumber paths.

    # treebeard has no type information, so the Django plugin cannot tell Node is a model:
    # its fields name their types themselves.
    id: models.CharField[str, str] = models.CharField(
        primary_key=True, max_length=39, default=new_node_id, editable=False
    )
    # Denormalized from the path so that sibling names are unique in the database itself.
    parent: models.ForeignKey[Node | None, Node | None] = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.DO_NOTHING, related_name="+", db_index=False
    )
    # Whose memory this is. Children are always in their parent's space; node paths stay unique
    # across spaces, so subtree reads need no space filter. PROTECT: a space's tree is deleted
    # by its service, in batches, before the space.
    space: models.ForeignKey[Space, Space] = models.ForeignKey(
        "spaces.Space", on_delete=models.PROTECT, related_name="+"
    )
    type: models.CharField[str, str] = models.CharField(max_length=64)
    is_folder: models.BooleanField[bool, bool] = models.BooleanField()
    name: models.CharField[str, str] = models.CharField(max_length=255)
    description: models.TextField[str, str] = models.TextField(blank=True)
    # True while the description is one memsite wrote (seed 000: what LLMs route by); a person's
    # or a swarm node's own description is never overwritten.
    description_auto: models.BooleanField[bool, bool] = models.BooleanField(default=False)
    context = models.JSONField(default=dict, blank=True)
    created_by: models.ForeignKey[User | None, User | None] = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at: models.DateTimeField[datetime, datetime] = models.DateTimeField(auto_now_add=True)
    updated_at: models.DateTimeField[datetime, datetime] = models.DateTimeField(auto_now=True)
    version: models.PositiveIntegerField[int, int] = models.PositiveIntegerField(default=1)
    # A project file's permission bits, as its archive gave them (`memory.validation.file_mode`)
    # and its export gives them back; null for nodes that are not files (folders included).
    mode: models.PositiveSmallIntegerField[int | None, int | None] = models.PositiveSmallIntegerField(
        null=True, blank=True
    )
    # The day its content speaks of (a session's, a meeting's), as its writer gave it; null when
    # none was given, and the index reads one from its description or first lines
    # (`memory.logic.dates`).
    date: models.DateField[dt.date | None, dt.date | None] = models.DateField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["depth", "path"], name="memory_node_depth_path"),
        ]
        constraints = [
            models.UniqueConstraint(fields=["parent", "name"], name="memory_node_unique_sibling_name"),
            models.UniqueConstraint(
                fields=["space", "name"], condition=Q(parent__isnull=True), name="memory_node_unique_root_name"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def is_internal(self) -> bool:
        return self.type == "internal_folder"


class NodeContent(models.Model):
    """The bytes of a node that has content: a project file, or a document's UTF-8 text."""

    node = models.OneToOneField(Node, primary_key=True, on_delete=models.CASCADE, related_name="content")
    data = models.BinaryField()
    size = models.PositiveBigIntegerField()
    sha256 = models.CharField(max_length=64)

    def __str__(self) -> str:
        return f"content of {self.node_id} ({self.size} bytes)"


class NodeVersion(models.Model):
    """A text document as it was at a version: its name, description and text, so that its
    history can show what each write changed and a version can be restored. A write that
    changes the document (an update, a content write, a restore) fills in the row of the
    version it leaves with the document as it was, and starts a row for the version it makes;
    that newest row holds no copy (`data` is null), as the document itself holds it. The
    document's state at any version is then the newest row at or before it. Rows go with the
    document; at most VERSIONS_KEPT of a document are kept (`memory.services.versions`)."""

    # Indexed by the unique constraint, whose first column it is.
    node = models.ForeignKey(Node, on_delete=models.CASCADE, related_name="+", db_index=False)
    version = models.PositiveIntegerField()
    name = models.CharField(max_length=255, blank=True)
    description = models.TextField(blank=True)
    description_auto = models.BooleanField(default=False)
    data = models.BinaryField(null=True)  # the text as UTF-8; null in the newest row: the document's own

    class Meta:
        constraints = [models.UniqueConstraint(fields=["node", "version"], name="memory_nodeversion_unique")]

    def __str__(self) -> str:
        return f"{self.node_id} at version {self.version}"


class Passage(models.Model):
    """A piece of a node's text in the content index (`memory.index`): its name and description
    (`label`), or a piece of its content (a turn of a dialogue, else a paragraph; none longer
    than 1,000 characters), with character offsets into the text. Full-text search
    runs over `text` (an FTS5 table kept by triggers on SQLite, a generated tsvector column on
    PostgreSQL); `vector` is its sentence embedding, filled after the write commits."""

    class Kind(models.TextChoices):
        LABEL = "label", "name and description"
        CONTENT = "content", "content"

    node = models.ForeignKey(Node, on_delete=models.CASCADE, related_name="passages")
    seq = models.PositiveIntegerField()
    kind = models.CharField(max_length=8, choices=Kind.choices)
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()
    text = models.TextField()
    vector = models.BinaryField(null=True, blank=True)  # float32, L2-normalised
    embedded_at = models.DateTimeField(null=True, blank=True, db_index=True)
    # The day it speaks of: the last dated line's above it in the text, else its node's (given,
    # or read from the description or first lines); null when nothing dates it.
    date = models.DateField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["node", "seq"], name="memory_passage_unique_seq")]
        indexes = [
            models.Index(fields=["id"], condition=Q(vector__isnull=True), name="memory_passage_pending"),
            # A time window's passages (retrieve's `after` and `before`), and a scope's newest
            # date; passages nothing dates (most of a project's files) are left out of it.
            models.Index(fields=["date"], condition=Q(date__isnull=False), name="memory_passage_dated"),
        ]

    def __str__(self) -> str:
        return f"Passage {self.seq} of {self.node_id}"


class PendingDescription(models.Model):
    """A node waiting for the description memsite writes (`memory.services.descriptions`):
    written in the transaction of the write that left it without one, deleted once described
    or found to have nothing to describe. Beat's sweep finds those whose task was lost, and
    takes back those set aside while their payer's daily LLM budget was spent."""

    node = models.OneToOneField(Node, primary_key=True, on_delete=models.CASCADE, related_name="+")
    queued_at = models.DateTimeField(auto_now_add=True)
    attempts = models.PositiveSmallIntegerField(default=0)  # calls that failed
    # Out of the queue until the budget its call counts against has room again: tried now, it
    # would only be refused, and would stand in the way of other users' and spaces' nodes.
    waiting_for_budget = models.BooleanField(default=False)

    def __str__(self) -> str:
        return f"Description pending for {self.node_id}"


# How deep the tree can go: the path column holds this many levels of `steplen` characters.
MAX_DEPTH = Node._meta.get_field("path").max_length // Node.steplen


class Search(models.Model):
    """A search of the tree for answers to questions (seed 001), run step by step by a worker.
    `state` is the walk's whole state (`memory.search.state.WalkState`), saved after every step
    together with the step itself, so a search can resume from its last step."""

    class Status(models.TextChoices):
        QUEUED = "queued", "queued"
        RUNNING = "running", "running"
        WAITING = "waiting", "waiting for the user"
        DONE = "done", "done"
        FAILED = "failed", "failed"
        CANCELLED = "cancelled", "cancelled"

    class Output(models.TextChoices):
        ANSWER = "answer", "answer"
        NODE = "node", "node"

    class Fallback(models.TextChoices):
        ASK_USER = "ask_user", "ask the user"
        NONE = "none", "none"

    ACTIVE = (Status.QUEUED, Status.RUNNING, Status.WAITING)

    space = models.ForeignKey("spaces.Space", on_delete=models.CASCADE, related_name="+")
    # A sub-search answers questions that arose in its parent, sharing the parent's budget.
    parent = models.ForeignKey("self", null=True, blank=True, on_delete=models.CASCADE, related_name="children")
    depth = models.PositiveSmallIntegerField(default=0)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    # The token that asked for it, if one did: its LLM calls count against the token's budget too.
    token = models.ForeignKey("spaces.ApiToken", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    # memsite's own search, or a user's: one whose user is gone then ends, not runs as memsite.
    acted_as = models.CharField(max_length=8, choices=ActedAs.choices, default=ActedAs.USER)
    questions = models.JSONField()
    context = models.TextField(blank=True)
    # Where the walk starts; null for the top of the tree (all roots).
    start_node = models.ForeignKey(Node, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    output = models.CharField(max_length=8, choices=Output.choices, default=Output.ANSWER)
    fallback = models.CharField(max_length=8, choices=Fallback.choices, default=Fallback.NONE)
    max_llm_calls = models.PositiveIntegerField()
    max_tokens = models.PositiveIntegerField()
    timeout_s = models.PositiveIntegerField()

    status = models.CharField(max_length=12, choices=Status.choices, default=Status.QUEUED)
    state = models.JSONField(default=dict)
    steps_taken = models.PositiveIntegerField(default=0)  # also the optimistic lock on `state`
    llm_calls = models.PositiveIntegerField(default=0)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    cost_usd = models.DecimalField(max_digits=14, decimal_places=8, default=0)
    # Why it ended: "answered", "exhausted", "budget:max_llm_calls", "cancelled", "error: ..."
    ended_because = models.CharField(max_length=255, blank=True)
    result = models.JSONField(null=True, blank=True)

    cancel_requested = models.BooleanField(default=False)
    requeues = models.PositiveSmallIntegerField(default=0)
    # When the broker took its last message: a queued search with one waits its turn there, and
    # only one without (the broker was away, the process died before publishing) is sent again.
    sent_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "searches"
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["status", "heartbeat_at"], name="memory_search_status_idx"),
            models.Index(fields=["space", "-created_at"], name="memory_search_space_recent"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=["queued", "running", "waiting", "done", "failed", "cancelled"]),
                name="memory_search_status_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"Search {self.pk} ({self.status})"

    @property
    def is_active(self) -> bool:
        return self.status in self.ACTIVE

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class SearchStep(models.Model):
    """One step of a search's walk, written before the next begins: what happened where, and
    the LLM call it made, if any (the call's row holds what the LLM was shown and replied)."""

    class Kind(models.TextChoices):
        ROUTE = "route", "route"
        READ = "read", "read"
        BACKTRACK = "backtrack", "backtrack"
        TOOLS = "tools", "choose a tool"
        TOOL = "tool", "tool call"
        SUBSEARCH = "subsearch", "sub-search"
        HANDBACK = "handback", "sub-search answer"
        RESTART = "restart", "restart"
        ASK_USER = "ask_user", "ask the user"
        USER_ANSWER = "user_answer", "user answer"
        FINISH = "finish", "finish"

    search = models.ForeignKey(Search, on_delete=models.CASCADE, related_name="steps")
    number = models.PositiveIntegerField()
    kind = models.CharField(max_length=12, choices=Kind.choices)
    node = models.ForeignKey(Node, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    node_name = models.CharField(max_length=255, blank=True)  # kept when the node is deleted
    summary = models.TextField(blank=True)
    detail = models.JSONField(default=dict, blank=True)
    llm_call = models.ForeignKey("llm.LLMCall", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["search", "number"]
        constraints = [models.UniqueConstraint(fields=["search", "number"], name="memory_search_step_unique")]

    def __str__(self) -> str:
        return f"Step {self.number} of search {self.search_id}: {self.kind}"


class SearchQuestion(models.Model):
    """Questions a search could not answer from the tree, put to the user (fallback ask_user).
    The search waits; the user's answer completes it and is saved in the `user` folder."""

    class Status(models.TextChoices):
        PENDING = "pending", "pending"
        ANSWERED = "answered", "answered"
        CLOSED = "closed", "closed"  # the search ended another way

    search = models.OneToOneField(Search, on_delete=models.CASCADE, related_name="user_question")
    questions = models.JSONField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    answer = models.TextField(blank=True)
    answered_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    answered_at = models.DateTimeField(null=True, blank=True)
    document = models.ForeignKey(Node, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["status", "created_at"], name="memory_question_status_idx")]

    def __str__(self) -> str:
        return f"Question of search {self.search_id} ({self.status})"


class ToolCall(models.Model):
    """A tool of a memory type's tool tree, called during a search. `key` hashes the tool id and
    its canonical arguments: calling it again returns this row (its result or the node it made)
    instead of running it twice."""

    key = models.CharField(max_length=64, unique=True)
    tool = models.CharField(max_length=64)
    arguments = models.JSONField()
    result = models.TextField(blank=True)
    nodes = models.JSONField(default=list, blank=True)  # ids of the nodes an exploratory tool found
    found = models.BooleanField(default=True)  # False: it found nothing, so there is nothing to read
    node = models.ForeignKey(Node, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    search = models.ForeignKey(Search, null=True, blank=True, on_delete=models.SET_NULL, related_name="tool_calls")
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.tool}({self.key[:12]})"


class NodeEvent(models.Model):
    """One write to a node: what it was, who made it (and with which token, if one), in which
    space, the node's version before and after (none before a create, none after a delete),
    and for a restore the version it brought back. `node_id` is the node's id as text, not a
    foreign key, so that a node's history outlives the node; its space says whose history it
    is once the node is gone."""

    class Action(models.TextChoices):
        CREATE = "create", "created"
        UPDATE = "update", "updated"
        CONTENT = "content", "content written"
        MOVE = "move", "moved"
        DELETE = "delete", "deleted"
        RESTORE = "restore", "restored"

    node_id = models.CharField(max_length=39)
    space = models.ForeignKey("spaces.Space", on_delete=models.CASCADE, related_name="+")
    action = models.CharField(max_length=8, choices=Action.choices)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    token = models.ForeignKey("spaces.ApiToken", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    version_before = models.PositiveIntegerField(null=True, blank=True)
    version_after = models.PositiveIntegerField(null=True, blank=True)
    restored_from = models.PositiveIntegerField(null=True, blank=True)  # the version a restore brought back
    at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["node_id", "id"], name="memory_nodeevent_node")]

    def __str__(self) -> str:
        return f"{self.get_action_display()} {self.node_id}"
