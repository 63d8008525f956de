"""Agents and what their model calls are built from (seed 003): the agent with its instructions,
hidden context variables and token budgets; its conversation, one row per message with a token
count made once when written; and checkpoints of both.
Explained in docs/context.md."""

from django.db import models
from django.db.models import Q
from django.utils import timezone


class Strategy(models.TextChoices):
    FIFO = "fifo", "drop the oldest first"
    SLIDING_WINDOW = "sliding_window", "keep the last N turns"
    IMPORTANCE = "importance", "evict the lowest importance score first"
    SUMMARIZE = "summarize", "replace the oldest by a stored summary"


class Role(models.TextChoices):
    SYSTEM = "system", "system"
    DEVELOPER = "developer", "developer"
    USER = "user", "user"
    ASSISTANT = "assistant", "assistant"
    TOOL = "tool", "tool"
    FUNCTION = "function", "function"  # the result of a function_call, the chat API's older form


# Results answer the call of the message before them: assembly keeps or drops them together.
RESULT_ROLES = (Role.TOOL, Role.FUNCTION)


def _fraction(field: str) -> Q:
    return Q(**{f"{field}__gt": 0, f"{field}__lte": 1})


class Agent(models.Model):
    space = models.ForeignKey("spaces.Space", on_delete=models.CASCADE, related_name="+")
    name = models.CharField(max_length=200)
    model = models.CharField(max_length=128)
    # A string.Template (`$name`) rendered from `context_variables` into the system message.
    instructions = models.TextField(blank=True)
    # Only the variables the instructions name reach the model, and only where they name them.
    context_variables = models.JSONField(default=dict, blank=True)
    strategy = models.CharField(max_length=16, choices=Strategy.choices, default=Strategy.FIFO)
    window_turns = models.PositiveIntegerField(default=20)  # what `sliding_window` keeps

    reserved_output_tokens = models.PositiveIntegerField(default=4_096)
    turn_input_limit = models.PositiveIntegerField(null=True, blank=True)
    conversation_token_budget = models.PositiveBigIntegerField(null=True, blank=True)
    # Fractions of the window: warn above the first; past the trigger, cut back to the target.
    warning_threshold = models.FloatField(default=0.8)
    compaction_trigger = models.FloatField(default=0.9)
    compaction_target = models.FloatField(default=0.6)

    message_count = models.PositiveBigIntegerField(default=0)  # also the newest message's position
    conversation_tokens = models.PositiveBigIntegerField(default=0)  # every message ever written
    history_tokens = models.PositiveBigIntegerField(default=0)  # the unpinned ones
    # Tool calls of the latest assistant message still waiting for their results: [{id, name}].
    pending_tool_calls = models.JSONField(default=list, blank=True)

    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "agents_agent"
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["space", "name"], name="agents_agent_name_unique_in_space"),
            models.CheckConstraint(condition=Q(strategy__in=Strategy.values), name="agents_agent_strategy_valid"),
            models.CheckConstraint(condition=Q(window_turns__gte=1), name="agents_agent_window_turns_positive"),
            models.CheckConstraint(
                condition=Q(reserved_output_tokens__gte=1), name="agents_agent_reserved_output_positive"
            ),
            models.CheckConstraint(
                condition=Q(turn_input_limit__isnull=True) | Q(turn_input_limit__gte=1),
                name="agents_agent_turn_input_limit_positive",
            ),
            models.CheckConstraint(
                condition=Q(conversation_token_budget__isnull=True) | Q(conversation_token_budget__gte=1),
                name="agents_agent_conversation_budget_positive",
            ),
            models.CheckConstraint(condition=_fraction("warning_threshold"), name="agents_agent_warning_fraction"),
            models.CheckConstraint(condition=_fraction("compaction_trigger"), name="agents_agent_trigger_fraction"),
            models.CheckConstraint(condition=_fraction("compaction_target"), name="agents_agent_target_fraction"),
            models.CheckConstraint(
                condition=Q(compaction_target__lt=models.F("compaction_trigger")),
                name="agents_agent_target_below_trigger",
            ),
        ]

    def __str__(self) -> str:
        return self.name


class Message(models.Model):
    """One message of an agent's conversation. Written once and never changed: the assembler
    copies what it sends. A tool result always directly follows the assistant message that
    called the tool (or another result of that call), so a message and the tool results after
    it form one unit, kept or dropped together."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="messages")
    position = models.PositiveBigIntegerField()  # 1, 2, ... per agent
    role = models.CharField(max_length=16, choices=Role.choices)
    # The text: the content sent as a string, or its text parts joined by blank lines.
    content = models.TextField(blank=True)
    # The content as sent when it was a list of parts (text, image_url, input_audio, file, refusal).
    content_parts = models.JSONField(default=list, blank=True)
    name = models.CharField(max_length=128, blank=True)  # the participant's, or the function's
    refusal = models.TextField(blank=True)
    # An audio reply: {id, expires_at, transcript}. Only the id is sent back; the audio's data
    # is not kept.
    audio = models.JSONField(default=dict, blank=True)
    function_call = models.JSONField(default=dict, blank=True)  # {name, arguments}
    # [{id, type: function, function: {name, arguments}}], or for a custom tool
    # {id, type: custom, custom: {name, input}}
    tool_calls = models.JSONField(default=list, blank=True)
    annotations = models.JSONField(default=list, blank=True)  # url citations, shown, never sent
    tool_call_id = models.CharField(max_length=128, blank=True)
    tool_name = models.CharField(max_length=128, blank=True)
    sender = models.CharField(max_length=200, blank=True)
    pinned = models.BooleanField(default=False)  # never dropped from the context
    importance = models.FloatField(default=0.5)
    references = models.JSONField(default=list, blank=True)  # positions of earlier messages it builds on
    # A chat line's keys beyond role, content and time, as memory.json's chatHistory keeps them:
    # a chat reply's citations and provider, or an imported entry written back as the file had
    # it (docs/memory-json.md). Shown, never sent.
    data = models.JSONField(default=dict, blank=True)

    # What the message costs in a request, counted once by the agent's model's encoding.
    token_count = models.PositiveIntegerField()
    token_encoding = models.CharField(max_length=64)
    tokens_approximate = models.BooleanField()
    # Tokens of the agent's unpinned messages before this one: where the message starts in the
    # history that compaction cuts.
    history_offset = models.PositiveBigIntegerField()
    # Not auto_now_add: a checkpoint restores it exactly.
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        db_table = "agents_message"
        ordering = ["agent", "position"]
        constraints = [
            # Its index serves reading the newest messages first.
            models.UniqueConstraint(fields=["agent", "position"], name="agents_message_position_unique"),
            models.CheckConstraint(condition=Q(position__gte=1), name="agents_message_position_positive"),
            models.CheckConstraint(condition=Q(role__in=Role.values), name="agents_message_role_valid"),
            models.CheckConstraint(
                condition=Q(importance__gte=0, importance__lte=1), name="agents_message_importance_fraction"
            ),
            models.CheckConstraint(
                condition=(Q(role=Role.TOOL) & ~Q(tool_call_id=""))
                | (~Q(role=Role.TOOL) & Q(tool_call_id="", tool_name="")),
                name="agents_message_tool_result_fields",
            ),
            models.CheckConstraint(
                condition=~Q(pinned=True, role__in=RESULT_ROLES),
                name="agents_message_tool_result_not_pinned",
            ),
        ]
        indexes = [
            models.Index(
                fields=["agent", "history_offset"], condition=Q(pinned=False), name="agents_message_offset_idx"
            ),
            models.Index(fields=["agent", "position"], condition=Q(pinned=True), name="agents_message_pinned_idx"),
            models.Index(fields=["agent", "position"], condition=Q(role=Role.USER), name="agents_message_turn_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.role} message {self.position} of agent {self.agent_id}"


class Checkpoint(models.Model):
    """An agent's state and whole conversation as one JSON document
    (`agents.context.services.checkpoints`), restorable exactly."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="checkpoints")
    version = models.PositiveIntegerField()  # 1, 2, ... per agent
    message_count = models.PositiveBigIntegerField()
    document = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "agents_checkpoint"
        ordering = ["agent", "version"]
        constraints = [
            models.UniqueConstraint(fields=["agent", "version"], name="agents_checkpoint_version_unique"),
            models.CheckConstraint(condition=Q(version__gte=1), name="agents_checkpoint_version_positive"),
        ]

    def __str__(self) -> str:
        return f"Checkpoint {self.version} of agent {self.agent_id}"


class SummaryStatus(models.TextChoices):
    PENDING = "pending"
    DONE = "done"
    FAILED = "failed"


class Summary(models.Model):
    """What the LLM wrote to stand in for an agent's unpinned messages from `since` to
    `through` (the summarize strategy). Written by a Celery task and reused by every assembly
    that cuts the history at the same place. Each extends the newest earlier summary (`base`)
    with the messages after it: a summary of a summary, `level` deep.

    Messages are only ever appended, so a summary stays true until a checkpoint restore or a
    memory.json import replaces the conversation and deletes the agent's summaries."""

    Status = SummaryStatus

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="summaries")
    through = models.PositiveBigIntegerField()  # the position of the last message it stands for
    since = models.PositiveBigIntegerField(default=1)  # older messages were beyond its reach
    # Where its messages sit in the unpinned history, in tokens (as Message.history_offset):
    # from the start of message `since` to the end of message `through`.
    history_start = models.PositiveBigIntegerField(default=0)
    history_end = models.PositiveBigIntegerField(default=0)
    base = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    level = models.PositiveIntegerField(default=1)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.PENDING)
    content = models.TextField(blank=True)
    # The summary as a system message, counted once by the agent's model's encoding.
    token_count = models.PositiveIntegerField(default=0)
    token_encoding = models.CharField(max_length=64, blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "summaries"
        db_table = "agents_summary"
        ordering = ["agent", "through"]
        constraints = [
            models.UniqueConstraint(fields=["agent", "through"], name="agents_summary_through_unique"),
            models.CheckConstraint(
                condition=Q(since__gte=1, through__gte=models.F("since")), name="agents_summary_span_valid"
            ),
            models.CheckConstraint(condition=Q(status__in=SummaryStatus.values), name="agents_summary_status_valid"),
        ]

    def __str__(self) -> str:
        return f"Summary of messages {self.since}-{self.through} of agent {self.agent_id}"
