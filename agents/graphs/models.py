"""Reasoning graphs (seed 004, MemoBrain): a task, the subtasks and evidence an agent's steps
produced, and the summaries that fold them; the raw turns those nodes stand for; and an audit
row for every operation.
Explained in docs/graphs.md."""

from django.conf import settings
from django.db import models
from django.db.models import Q

from agents.context.models import Agent
from memsite.spaces.models import ActedAs


class NodeKind(models.TextChoices):
    TASK = "task"
    SUBTASK = "subtask"
    EVIDENCE = "evidence"
    SUMMARY = "summary"


class NodeState(models.TextChoices):
    ACTIVE = "active"
    FOLDED = "folded"  # folded into a summary node
    FLUSHED = "flushed"  # removed from the context; its notes stand for its turns


class Graph(models.Model):
    space = models.ForeignKey("spaces.Space", on_delete=models.CASCADE, related_name="+")
    task = models.TextField()
    agent = models.ForeignKey(Agent, null=True, blank=True, on_delete=models.SET_NULL, related_name="graphs")
    model = models.CharField(max_length=128)  # whose encoding counts the context, and whose window
    # Context budget: past the trigger, recall runs until the context is under the target or
    # `max_recalls` attempts are spent; the first and last turns are always sent as they were.
    trigger_tokens = models.PositiveIntegerField()
    target_tokens = models.PositiveIntegerField()
    max_recalls = models.PositiveSmallIntegerField(default=3)
    protected_head = models.PositiveSmallIntegerField(default=2)
    protected_tail = models.PositiveSmallIntegerField(default=4)
    # The next ids to hand out: node ids and turn ids are sequential within a graph.
    next_node_id = models.PositiveIntegerField(default=1)
    next_turn_id = models.PositiveIntegerField(default=0)
    # Memorize and recall run one at a time per graph: a worker holds this lease meanwhile.
    lease_until = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "agents_graph"
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(target_tokens__lt=models.F("trigger_tokens")), name="agents_graph_target_below_trigger"
            ),
        ]

    def __str__(self) -> str:
        return self.task[:80]


class GraphNode(models.Model):
    graph = models.ForeignKey(Graph, on_delete=models.CASCADE, related_name="nodes")
    node_id = models.PositiveIntegerField()
    kind = models.CharField(max_length=8, choices=NodeKind.choices)
    # A string, or notes: [{"role", "content"}].
    thought = models.JSONField()
    related_turn_ids = models.JSONField(default=list, blank=True)
    state = models.CharField(max_length=8, choices=NodeState.choices, default=NodeState.ACTIVE)
    folded_into = models.PositiveIntegerField(null=True, blank=True)  # the summary's node_id
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "agents_graphnode"
        ordering = ["graph", "node_id"]
        constraints = [
            models.UniqueConstraint(fields=["graph", "node_id"], name="agents_graphnode_id_unique"),
            models.CheckConstraint(condition=Q(kind__in=NodeKind.values), name="agents_graphnode_kind_valid"),
            models.CheckConstraint(condition=Q(state__in=NodeState.values), name="agents_graphnode_state_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.node_id} of graph {self.graph_id}"


class GraphEdge(models.Model):
    graph = models.ForeignKey(Graph, on_delete=models.CASCADE, related_name="edges")
    src = models.PositiveIntegerField()  # node ids within the graph
    dst = models.PositiveIntegerField()
    # null as a snapshot says it (MemoBrain writes an edge's missing rationale as null, and shows it
    # as "None"), apart from the empty string.
    rationale = models.TextField(blank=True, null=True)  # noqa: DJ001

    class Meta:
        db_table = "agents_graphedge"
        ordering = ["graph", "id"]  # the order of the list: a snapshot's, then each new edge's

    def __str__(self) -> str:
        return f"{self.src} -> {self.dst}"


class Turn(models.Model):
    """One raw message of the agent's trajectory, as memorize received it."""

    graph = models.ForeignKey(Graph, on_delete=models.CASCADE, related_name="turns")
    turn_id = models.PositiveIntegerField()  # 0, 1, ... within the graph; never reused
    role = models.CharField(max_length=64)
    content = models.TextField()
    token_count = models.PositiveIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "agents_turn"
        ordering = ["graph", "turn_id"]
        constraints = [models.UniqueConstraint(fields=["graph", "turn_id"], name="agents_turn_id_unique")]

    def __str__(self) -> str:
        return f"turn {self.turn_id} of graph {self.graph_id}"


class GraphOp(models.Model):
    """The audit trail: every operation on a graph, applied or refused, with its rationale and
    the context's tokens before and after."""

    class Kind(models.TextChoices):
        CREATE = "create"
        MEMORIZE = "memorize"
        RECALL = "recall"
        IMPORT = "import"

    class Status(models.TextChoices):
        QUEUED = "queued"
        APPLIED = "applied"
        REJECTED = "rejected"
        FAILED = "failed"

    graph = models.ForeignKey(Graph, on_delete=models.CASCADE, related_name="ops")
    kind = models.CharField(max_length=8, choices=Kind.choices)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.QUEUED)
    # Who asked for it (a recall past the trigger: who asked for the memorize); its LLM calls
    # are charged to them. Empty for the system's own work and for rows older than the field.
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The token that asked, if one did: its own budget counts the operation's LLM calls too.
    token = models.ForeignKey("spaces.ApiToken", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    # memsite's own operation, or a user's: one whose user is gone then fails, not runs as memsite.
    acted_as = models.CharField(max_length=8, choices=ActedAs.choices, default=ActedAs.USER)
    rationale = models.TextField(blank=True)
    detail = models.JSONField(default=dict, blank=True)  # the patch or operation, and what it did
    error = models.TextField(blank=True)
    tokens_before = models.PositiveIntegerField(null=True, blank=True)
    tokens_after = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # When the broker took the graph's work for it: a queued operation with one waits its turn
    # there, and only one without (the broker was away, the process died) is sent again.
    sent_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "agents_graphop"
        ordering = ["graph", "id"]
        # The operations `graphs_sweep_stale` looks at, a few among the whole audit trail.
        indexes = [models.Index(fields=["created_at"], condition=Q(status="queued"), name="agents_graphop_queued_idx")]

    def __str__(self) -> str:
        return f"{self.kind} on graph {self.graph_id} ({self.status})"
