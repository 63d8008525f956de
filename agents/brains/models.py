"""An agent's brain (seed 002): the state a reflection loop fills, kept as rows rather than one
JSON document, so that a tick writes only what it changed. Every collection has a cap
(`agents.brains.logic.caps`). Explained in docs/brains.md."""

from django.conf import settings
from django.db import models
from django.db.models import Q

from agents.context.models import Agent


class RecordKind(models.TextChoices):
    THOUGHT = "thought", "thoughts"
    INNER_THOUGHT = "inner_thought", "inner thoughts"
    EPISODE = "episode", "episodes"
    FACT = "fact", "semantic facts"
    SELF_INSTRUCTION = "self_instruction", "self-instructions"
    LOG = "log", "logs"
    USER_MESSAGE = "user_message", "the user model's last messages"


class Brain(models.Model):
    agent = models.OneToOneField(Agent, on_delete=models.CASCADE, primary_key=True, related_name="brain")

    self_summary = models.TextField(blank=True)
    plan = models.JSONField(default=list, blank=True)  # the steps, as text
    plan_step = models.PositiveSmallIntegerField(default=0)  # index of the current step
    emotions = models.JSONField(default=dict, blank=True)  # joy, frustration, interest, confusion: 0..1
    hormones = models.JSONField(default=dict, blank=True)  # dopamine, cortisol, serotonin: 0..1
    last_user_message = models.TextField(blank=True)
    last_error = models.TextField(blank=True)
    # memory.json's other state keys (lastDir, totalReads, ...), kept so an export gives them back.
    extra_state = models.JSONField(default=dict, blank=True)
    extra_user_model = models.JSONField(default=dict, blank=True)

    # Sizes of the keyed collections, kept here so that a cap costs no count.
    path_count = models.PositiveIntegerField(default=0)
    url_count = models.PositiveIntegerField(default=0)
    neuron_count = models.PositiveIntegerField(default=0)
    synapse_count = models.PositiveIntegerField(default=0)
    # The last `seq` of each list collection, by kind, so that an append looks nothing up and
    # the newest entries of every collection are read in one query.
    record_seqs = models.JSONField(default=dict, blank=True)
    # The seq below the oldest entry of each list collection (the last one trimmed; 0 when none
    # was), so that a list holds the seqs above its floor up to its last: its span and count need
    # no query, and a trim reads only the seqs just past the cap. A trim from 0 also stepped over
    # the index entries of every earlier trim, and the planners misjudged the open range:
    # PostgreSQL chose a hash join over the whole table.
    record_floors = models.JSONField(default=dict, blank=True)

    # Ticking: beat starts the brains whose tick is due; the lease keeps ticks from overlapping.
    ticking = models.BooleanField(default=False)
    tick_interval_s = models.PositiveIntegerField(default=60)
    next_tick_at = models.DateTimeField(null=True, blank=True)
    tick_count = models.PositiveBigIntegerField(default=0)
    lease_until = models.DateTimeField(null=True, blank=True)
    # Whose work the ticks are (memsite.quotas counts them and the ledger charges them): the
    # user who set the agent ticking, and the one whose tick is queued and not yet begun (one
    # at a time: a brain ticks one tick at a time, so a second request while one waits adds
    # nothing). Empty for the system's own ticks and for rows older than these fields.
    ticking_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    tick_queued_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The tokens through which they asked, if any: each token's own budget counts its ticks.
    ticking_token = models.ForeignKey(
        "spaces.ApiToken", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    tick_queued_token = models.ForeignKey(
        "spaces.ApiToken", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    tick_queued_at = models.DateTimeField(null=True, blank=True)

    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "agents_brain"
        indexes = [
            models.Index(fields=["next_tick_at"], condition=Q(ticking=True), name="agents_brain_due_idx"),
        ]
        constraints = [
            models.CheckConstraint(condition=Q(tick_interval_s__gte=1), name="agents_brain_interval_positive"),
        ]

    def __str__(self) -> str:
        return f"Brain of agent {self.agent_id}"


class BrainExtra(models.Model):
    """memory.json's top-level keys a brain does not use (embeddings, fileContents, others), as
    the file had them, so that an export gives them back. A row of its own, read only by exports:
    embeddings alone may be megabytes, which every tick would load with the brain's row."""

    brain = models.OneToOneField(Brain, on_delete=models.CASCADE, primary_key=True, related_name="extra")
    document = models.JSONField(default=dict, blank=True)

    class Meta:
        db_table = "agents_brainextra"

    def __str__(self) -> str:
        return f"memory.json keys of brain {self.brain_id}"


class Record(models.Model):
    """One entry of a list collection: a thought, an episode, a log line... `seq` numbers a
    brain's entries of one kind from 1; `data` holds the entry's other fields as memory.json
    has them (an episode's type, what and where). Chat lines are messages of the agent's
    conversation (`agents.context.models.Message`)."""

    brain = models.ForeignKey(Brain, on_delete=models.CASCADE, related_name="records")
    kind = models.CharField(max_length=16, choices=RecordKind.choices)
    seq = models.PositiveBigIntegerField()
    text = models.TextField()
    data = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField()

    class Meta:
        db_table = "agents_record"
        constraints = [
            # Its index serves the newest first, and the trim of the oldest.
            models.UniqueConstraint(fields=["brain", "kind", "seq"], name="agents_record_seq_unique"),
            models.CheckConstraint(condition=Q(kind__in=RecordKind.values), name="agents_record_kind_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.seq} of brain {self.brain_id}"


class Goal(models.Model):
    class Status(models.TextChoices):
        ACTIVE = "active"
        DONE = "done"

    brain = models.ForeignKey(Brain, on_delete=models.CASCADE, related_name="goals")
    text = models.CharField(max_length=500)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.ACTIVE)
    data = models.JSONField(default=dict, blank=True)  # memory.json's other fields of the goal
    created_at = models.DateTimeField()
    done_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "agents_goal"
        ordering = ["brain", "created_at", "id"]
        indexes = [models.Index(fields=["brain", "status", "created_at"], name="agents_goal_status_idx")]
        constraints = [
            models.CheckConstraint(condition=Q(status__in=["active", "done"]), name="agents_goal_status_valid"),
        ]

    def __str__(self) -> str:
        return self.text


class Explored(models.Model):
    """A path of the memory tree or a URL the agent has read, with when and what it found."""

    class Kind(models.TextChoices):
        PATH = "path"
        URL = "url"

    brain = models.ForeignKey(Brain, on_delete=models.CASCADE, related_name="explored")
    kind = models.CharField(max_length=4, choices=Kind.choices)
    key = models.CharField(max_length=512)  # within a unique index's limit in any encoding
    summary = models.TextField(blank=True)
    at = models.DateTimeField()
    # A folder of the memory tree, listed: a tick looks in the folders listed lately for what
    # to explore next, until it finds nothing left in one (`BrainWrite.folders_spent`).
    # memory.json does not say, so imported paths are not folders.
    folder = models.BooleanField(default=False, db_default=False)  # imports insert rows without it
    # The entry as memory.json had it, where the columns alone would not give it back (other
    # keys, a time written as epoch milliseconds); empty otherwise.
    data = models.JSONField(default=dict, blank=True)

    class Meta:
        db_table = "agents_explored"
        constraints = [
            models.UniqueConstraint(fields=["brain", "kind", "key"], name="agents_explored_key_unique"),
            models.CheckConstraint(condition=Q(kind__in=["path", "url"]), name="agents_explored_kind_valid"),
            models.CheckConstraint(condition=Q(folder=False) | Q(kind="path"), name="agents_explored_folder_is_path"),
        ]
        indexes = [
            models.Index(fields=["brain", "kind", "at"], name="agents_explored_at_idx"),
            models.Index(fields=["brain", "at", "id"], condition=Q(folder=True), name="agents_explored_folder_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.key}"


class Neuron(models.Model):
    """A concept, path or URL in the agent's associative memory. `self` is always there."""

    brain = models.ForeignKey(Brain, on_delete=models.CASCADE, related_name="neurons")
    key = models.CharField(max_length=520)  # "self", "path:/...", "url:https://...", "concept:word"
    kind = models.CharField(max_length=8)  # self, path, url, concept
    label = models.CharField(max_length=512)
    strength = models.FloatField(default=1.0)
    last_used = models.DateTimeField()
    data = models.JSONField(default=dict, blank=True)

    class Meta:
        db_table = "agents_neuron"
        constraints = [models.UniqueConstraint(fields=["brain", "key"], name="agents_neuron_key_unique")]
        indexes = [
            models.Index(fields=["brain", "last_used"], name="agents_neuron_used_idx"),
            models.Index(fields=["brain", "-strength"], name="agents_neuron_strength_idx"),
        ]

    def __str__(self) -> str:
        return self.key


class Synapse(models.Model):
    brain = models.ForeignKey(Brain, on_delete=models.CASCADE, related_name="synapses")
    source = models.ForeignKey(Neuron, on_delete=models.CASCADE, related_name="+")
    target = models.ForeignKey(Neuron, on_delete=models.CASCADE, related_name="+")
    weight = models.FloatField(default=0.1)
    last_used = models.DateTimeField()
    data = models.JSONField(default=dict, blank=True)  # as Explored.data

    class Meta:
        db_table = "agents_synapse"
        constraints = [
            models.UniqueConstraint(fields=["source", "target"], name="agents_synapse_pair_unique"),
            models.CheckConstraint(condition=~Q(source=models.F("target")), name="agents_synapse_not_a_loop"),
        ]
        indexes = [
            models.Index(fields=["brain", "last_used"], name="agents_synapse_used_idx"),
            models.Index(fields=["target"], name="agents_synapse_target_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.source_id} -> {self.target_id}"


class TickRun(models.Model):
    """One tick of the reflection loop: its steps, its LLM calls (ledger rows serve it), what
    it did, and the emotions and hormones it left, for the charts."""

    class Status(models.TextChoices):
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    brain = models.ForeignKey(Brain, on_delete=models.CASCADE, related_name="ticks")
    number = models.PositiveBigIntegerField()
    # Whose work the tick is (see Brain.tick_queued_by), and through which token; its LLM calls
    # are charged to them.
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    token = models.ForeignKey("spaces.ApiToken", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.RUNNING)
    action = models.CharField(max_length=32, blank=True)
    arguments = models.JSONField(default=dict, blank=True)
    outcome = models.TextField(blank=True)
    error = models.TextField(blank=True)
    steps = models.JSONField(default=list, blank=True)  # [{name, ms, detail}]
    emotions = models.JSONField(default=dict, blank=True)
    hormones = models.JSONField(default=dict, blank=True)
    started_at = models.DateTimeField(auto_now_add=True)
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "agents_tickrun"
        ordering = ["brain", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["brain", "number"], name="agents_tick_number_unique"),
            models.CheckConstraint(
                condition=Q(status__in=["running", "done", "failed"]), name="agents_tick_status_valid"
            ),
        ]
        # The runs `ticks_sweep_stale` looks at, a few among all the runs kept.
        indexes = [models.Index(fields=["brain"], condition=Q(status="running"), name="agents_tick_running_idx")]

    def __str__(self) -> str:
        return f"Tick {self.number} of brain {self.brain_id}"
