"""Serializers of the agents API: the shared representations (input fields: memsite.serializers)."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from agents.context.models import Role, Summary
from memsite.llm.serializers import ProviderField


class PendingToolCallSerializer(serializers.Serializer):
    id = serializers.CharField()
    name = serializers.CharField()

    class Meta:
        ref_name = "AgentPendingToolCall"


class AgentSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    model = serializers.CharField()
    instructions = serializers.CharField(help_text="A template: $name is replaced by that context variable.")
    context_variables = serializers.DictField(
        help_text="Values the instructions may name; the model sees only the ones they name."
    )
    strategy = serializers.CharField()
    window_turns = serializers.IntegerField(help_text="The turns sliding_window keeps.")
    reserved_output_tokens = serializers.IntegerField()
    turn_input_limit = serializers.IntegerField(allow_null=True)
    conversation_token_budget = serializers.IntegerField(allow_null=True)
    warning_threshold = serializers.FloatField()
    compaction_trigger = serializers.FloatField()
    compaction_target = serializers.FloatField()
    message_count = serializers.IntegerField(help_text="Also the newest message's position.")
    conversation_tokens = serializers.IntegerField(help_text="Tokens of every message written.")
    pending_tool_calls = PendingToolCallSerializer(many=True, help_text="Calls waiting for their results.")
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()

    class Meta:
        ref_name = "Agent"


class MessageSerializer(serializers.Serializer):
    position = serializers.IntegerField()
    role = serializers.ChoiceField(choices=Role.choices)
    content = serializers.CharField(help_text="The text; of content parts, their text joined by blank lines.")
    content_parts = serializers.ListField(
        child=serializers.DictField(), help_text="The content as sent when it was a list of parts."
    )
    name = serializers.CharField()
    refusal = serializers.CharField()
    audio = serializers.DictField(help_text="An audio reply: {id, expires_at, transcript}; empty otherwise.")
    function_call = serializers.DictField(help_text="{name, arguments}; empty when none.")
    tool_calls = serializers.ListField(child=serializers.DictField())
    annotations = serializers.ListField(child=serializers.DictField(), help_text="Shown, never sent.")
    tool_call_id = serializers.CharField()
    tool_name = serializers.CharField()
    sender = serializers.CharField()
    pinned = serializers.BooleanField()
    importance = serializers.FloatField()
    references = serializers.ListField(child=serializers.IntegerField())
    data = serializers.DictField(  # type: ignore[assignment]  # DRF pops declared fields off the class
        help_text="A chat line's keys beyond role, content and time, as memory.json's chatHistory keeps them: "
        "a chat reply's citations and provider; shown, never sent."
    )
    token_count = serializers.IntegerField(help_text="Counted once, when written, with the agent's model.")
    token_encoding = serializers.CharField()
    tokens_approximate = serializers.BooleanField()
    created_at = serializers.DateTimeField()

    class Meta:
        ref_name = "AgentMessage"


@extend_schema_field({"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "object"}}]})
class WireContentField(serializers.JSONField):
    """Text, or the content parts it was sent as."""


class ContextMessageSerializer(serializers.Serializer):
    """A message as the chat API takes it."""

    role = serializers.ChoiceField(choices=Role.choices)
    content = WireContentField()
    name = serializers.CharField(required=False)
    refusal = serializers.CharField(required=False)
    audio = serializers.DictField(required=False, help_text="{id}: an earlier audio reply.")
    function_call = serializers.DictField(required=False)
    tool_calls = serializers.ListField(child=serializers.DictField(), required=False)
    tool_call_id = serializers.CharField(required=False)

    class Meta:
        ref_name = "AgentContextMessage"


class IncludedSerializer(serializers.Serializer):
    tier = serializers.CharField()
    tokens = serializers.IntegerField()
    position = serializers.IntegerField(allow_null=True, help_text="Stored messages only.")

    class Meta:
        ref_name = "AgentContextIncluded"


class DroppedSerializer(serializers.Serializer):
    tier = serializers.CharField()
    reason = serializers.CharField()
    detail = serializers.CharField()
    tokens = serializers.IntegerField()
    count = serializers.IntegerField(help_text="Messages, or items of a tier.")
    first_position = serializers.IntegerField(allow_null=True)
    last_position = serializers.IntegerField(allow_null=True)
    item = serializers.IntegerField(allow_null=True, help_text="Working or long-term memory: the item's number.")

    class Meta:
        ref_name = "AgentContextDropped"


class SummaryUsedSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    since = serializers.IntegerField(help_text="The first message position it stands for.")
    through = serializers.IntegerField(help_text="The last message position it stands for.")
    level = serializers.IntegerField(help_text="Summaries folded into it, itself included.")
    tokens = serializers.IntegerField()
    truncated = serializers.BooleanField(help_text="Cut to the room the strategy keeps for it.")
    provider = ProviderField(model=Summary, source="id")

    class Meta:
        ref_name = "AgentContextSummary"


class ContextReportSerializer(serializers.Serializer):
    model = serializers.CharField()
    strategy = serializers.CharField()
    encoding = serializers.CharField()
    exact = serializers.BooleanField(help_text="Whether every count was made with this model's own encoding.")
    context_window = serializers.IntegerField()
    reserved_output_tokens = serializers.IntegerField()
    turn_input_limit = serializers.IntegerField(allow_null=True)
    window = serializers.IntegerField(help_text="The context window less reserved output, capped by the turn limit.")
    total = serializers.IntegerField()
    free = serializers.IntegerField()
    tiers = serializers.DictField(child=serializers.IntegerField(), help_text="Tokens per tier; they sum to total.")
    warning_at = serializers.IntegerField()
    trigger_at = serializers.IntegerField()
    target_at = serializers.IntegerField()
    compacted = serializers.BooleanField()
    warnings = serializers.ListField(child=serializers.CharField())
    conversation_tokens = serializers.IntegerField()
    conversation_token_budget = serializers.IntegerField(allow_null=True)
    stored_messages = serializers.IntegerField()
    included = IncludedSerializer(many=True, help_text="One entry per message, in order.")
    dropped = DroppedSerializer(many=True)
    summary = SummaryUsedSerializer(allow_null=True, help_text="summarize: the stored summary sent.")
    summary_wanted = serializers.IntegerField(
        allow_null=True,
        help_text="summarize: the position a summary should reach for this cut, when no written one "
        "does; it is queued, and the cut messages are dropped until it is written.",
    )

    class Meta:
        ref_name = "AgentContextReport"


class ContextSerializer(serializers.Serializer):
    messages = ContextMessageSerializer(many=True)
    report = ContextReportSerializer()

    class Meta:
        ref_name = "AgentContext"


class CheckpointSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    agent = serializers.IntegerField(source="agent_id")
    version = serializers.IntegerField()
    message_count = serializers.IntegerField()
    created_at = serializers.DateTimeField()

    class Meta:
        ref_name = "AgentCheckpoint"
