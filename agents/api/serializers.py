"""Serializers of the agents API: the shared representations (input fields: memsite.serializers)."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from agents import selectors
from agents.graph.snapshot import ACTIVE_BY_STATE
from agents.models import Graph, GraphNode, Role


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
    content = serializers.CharField(
        help_text="The text; of content parts, their text joined by blank lines."
    )
    content_parts = serializers.ListField(
        child=serializers.DictField(), help_text="The content as sent when it was a list of parts."
    )
    name = serializers.CharField()
    refusal = serializers.CharField()
    audio = serializers.DictField(
        help_text="An audio reply: {id, expires_at, transcript}; empty otherwise."
    )
    function_call = serializers.DictField(help_text="{name, arguments}; empty when none.")
    tool_calls = serializers.ListField(child=serializers.DictField())
    annotations = serializers.ListField(
        child=serializers.DictField(), help_text="Shown, never sent."
    )
    tool_call_id = serializers.CharField()
    tool_name = serializers.CharField()
    sender = serializers.CharField()
    pinned = serializers.BooleanField()
    importance = serializers.FloatField()
    references = serializers.ListField(child=serializers.IntegerField())
    token_count = serializers.IntegerField(help_text="Counted once, when written, with the agent's model.")
    token_encoding = serializers.CharField()
    tokens_approximate = serializers.BooleanField()
    created_at = serializers.DateTimeField()

    class Meta:
        ref_name = "AgentMessage"


@extend_schema_field(
    {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "object"}}]}
)
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


# -- brains (seed 002) -------------------------------------------------------------------------


class BrainRecordSerializer(serializers.Serializer):
    seq = serializers.IntegerField(help_text="Numbers the entries of one collection from 1; the newest has the largest.")
    text = serializers.CharField()
    data = serializers.JSONField(
        help_text="The entry as memory.json has it: an object (an episode's type, a chat line's role), "
        "or a string (self-instructions and the user's messages are kept as strings)."
    )
    created_at = serializers.DateTimeField()

    class Meta:
        ref_name = "BrainRecord"


class BrainExploredSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    key = serializers.CharField(help_text="The path or URL.")
    summary = serializers.CharField()
    at = serializers.DateTimeField(help_text="When it was last explored.")

    class Meta:
        ref_name = "BrainExplored"


class BrainNeuronRefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    key = serializers.CharField()
    kind = serializers.CharField()
    label = serializers.CharField()

    class Meta:
        ref_name = "BrainNeuronRef"


class BrainNeuronSerializer(BrainNeuronRefSerializer):
    strength = serializers.FloatField()
    last_used = serializers.DateTimeField()
    data = serializers.DictField()

    class Meta:
        ref_name = "BrainNeuron"


class BrainSynapseSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    source = BrainNeuronRefSerializer()
    target = BrainNeuronRefSerializer()
    weight = serializers.FloatField()
    last_used = serializers.DateTimeField()

    class Meta:
        ref_name = "BrainSynapse"


class BrainTickSummarySerializer(serializers.Serializer):
    number = serializers.IntegerField()
    status = serializers.CharField(help_text="running, done or failed.")
    action = serializers.CharField()
    started_at = serializers.DateTimeField()
    ended_at = serializers.DateTimeField(allow_null=True)

    class Meta:
        ref_name = "BrainTickSummary"


class BrainTickSerializer(BrainTickSummarySerializer):
    arguments = serializers.DictField()
    outcome = serializers.CharField()
    error = serializers.CharField()
    steps = serializers.ListField(child=serializers.DictField(), help_text="[{name, ms, detail}], in order.")
    emotions = serializers.DictField(child=serializers.FloatField(), help_text="As the tick left them.")
    hormones = serializers.DictField(child=serializers.FloatField(), help_text="As the tick left them.")

    class Meta:
        ref_name = "BrainTick"


class BrainGoalSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    text = serializers.CharField()
    status = serializers.CharField(help_text="active or done.")
    created_at = serializers.DateTimeField()
    done_at = serializers.DateTimeField(allow_null=True)

    class Meta:
        ref_name = "BrainGoal"


class BrainPlanSerializer(serializers.Serializer):
    steps = serializers.ListField(child=serializers.CharField())
    current = serializers.IntegerField(
        allow_null=True, help_text="The index of the step being worked on; null when there is none left."
    )
    current_step = serializers.CharField(allow_null=True)

    class Meta:
        ref_name = "BrainPlan"


class BrainTickingSerializer(serializers.Serializer):
    ticking = serializers.BooleanField(help_text="Whether a tick starts every interval.")
    interval_s = serializers.IntegerField()
    next_tick_at = serializers.DateTimeField(allow_null=True)
    tick_count = serializers.IntegerField(help_text="Ticks run since the brain was made.")
    running = BrainTickSummarySerializer(allow_null=True, help_text="The tick under way.")
    last = BrainTickSummarySerializer(allow_null=True, help_text="The newest tick that has ended.")
    idle = serializers.BooleanField(help_text="Not ticking, and no tick under way or asked for.")

    class Meta:
        ref_name = "BrainTicking"


class BrainCountsSerializer(serializers.Serializer):
    thoughts = serializers.IntegerField()
    inner_thoughts = serializers.IntegerField()
    episodes = serializers.IntegerField()
    facts = serializers.IntegerField()
    self_instructions = serializers.IntegerField()
    chat = serializers.IntegerField()
    logs = serializers.IntegerField()
    explored_paths = serializers.IntegerField()
    explored_urls = serializers.IntegerField()
    neurons = serializers.IntegerField()
    synapses = serializers.IntegerField()
    ticks = serializers.IntegerField(help_text="Tick runs kept.")
    goals = serializers.IntegerField()

    class Meta:
        ref_name = "BrainCounts"


class BrainSerializer(serializers.Serializer):
    """A `selectors.BrainState`."""

    agent = serializers.IntegerField(source="brain.agent_id")
    self_summary = serializers.CharField(source="brain.self_summary")
    plan = BrainPlanSerializer()
    goals = BrainGoalSerializer(many=True, help_text="Active first, then done; oldest first within each.")
    emotions = serializers.DictField(child=serializers.FloatField(), source="brain.emotions", help_text="0 to 1.")
    hormones = serializers.DictField(child=serializers.FloatField(), source="brain.hormones", help_text="0 to 1.")
    last_user_message = serializers.CharField(source="brain.last_user_message")
    last_error = serializers.CharField(source="brain.last_error")
    state = serializers.DictField(source="brain.extra_state", help_text="memory.json's other state keys.")
    counts = BrainCountsSerializer()
    ticking = BrainTickingSerializer()
    created_at = serializers.DateTimeField(source="brain.created_at", allow_null=True, help_text="Null until the first write.")
    updated_at = serializers.DateTimeField(source="brain.updated_at", allow_null=True)

    class Meta:
        ref_name = "Brain"


class BrainTickQueuedSerializer(serializers.Serializer):
    queued = serializers.BooleanField()
    after = serializers.IntegerField(
        help_text="The brain's tick count when the tick was queued: the tick is the first numbered after it, "
        "unless another tick holds the brain then (the queued one is skipped)."
    )
    ticking = BrainTickingSerializer()

    class Meta:
        ref_name = "BrainTickQueued"


class BrainChatExchangeSerializer(serializers.Serializer):
    """A `services.ChatExchange`."""

    user = BrainRecordSerializer(source="user_line")
    reply = BrainRecordSerializer(source="reply_line")
    goal = BrainGoalSerializer(allow_null=True, help_text="The goal `goal: ...` added.")

    class Meta:
        ref_name = "BrainChatExchange"


class BrainImportReportSerializer(serializers.Serializer):
    """A `services.ImportReport`, by memory.json's names (`thoughts`, `state.goals`, ...)."""

    imported = serializers.DictField(child=serializers.IntegerField(), help_text="Entries stored.")
    trimmed = serializers.DictField(
        child=serializers.IntegerField(), help_text="Left out to keep a cap: the oldest, the least used."
    )
    dropped = serializers.DictField(
        child=serializers.IntegerField(),
        help_text="Left out as unusable: empty or overlong keys; synapses with a missing end, a loop or a repeated pair.",
    )
    clipped = serializers.DictField(child=serializers.IntegerField(), help_text="Texts cut to their character cap.")
    kept_keys = serializers.ListField(
        child=serializers.CharField(),
        help_text="Top-level keys kept as they are and given back by an export (embeddings, fileContents, ...).",
    )
    added_self_neuron = serializers.BooleanField()

    class Meta:
        ref_name = "BrainImportReport"


# -- reasoning graphs (seed 004) ---------------------------------------------------------------


class GraphNodeCountsSerializer(serializers.Serializer):
    active = serializers.IntegerField()
    folded = serializers.IntegerField(help_text="Folded into a summary node.")
    flushed = serializers.IntegerField(help_text="Out of the context; their notes stand for their turns.")

    class Meta:
        ref_name = "GraphNodeCounts"


class GraphSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    task = serializers.CharField()
    agent = serializers.IntegerField(source="agent_id", allow_null=True)
    model = serializers.CharField(help_text="Whose encoding counts the context.")
    trigger_tokens = serializers.IntegerField(help_text="Past this many tokens in the context, recall runs.")
    target_tokens = serializers.IntegerField(help_text="Recall runs until the context is under this.")
    max_recalls = serializers.IntegerField(help_text="Recalls at most, each time the context passes the trigger.")
    protected_head = serializers.IntegerField(help_text="The first turns, always sent as they were.")
    protected_tail = serializers.IntegerField(help_text="The last turns, always sent as they were.")
    nodes = serializers.SerializerMethodField(help_text="Nodes by state.")
    turns = serializers.SerializerMethodField(help_text="Turns stored.")
    next_node_id = serializers.IntegerField()
    next_turn_id = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()

    class Meta:
        ref_name = "Graph"

    @extend_schema_field(GraphNodeCountsSerializer)
    def get_nodes(self, graph: Graph) -> dict[str, int]:
        return selectors.graph_node_counts(graph=graph)

    def get_turns(self, graph: Graph) -> int:
        return selectors.graph_turn_count(graph=graph)


class GraphNodeSerializer(serializers.Serializer):
    node_id = serializers.IntegerField(help_text="Numbers the graph's nodes from 1 (the task).")
    kind = serializers.CharField(help_text="task, subtask, evidence or summary.")
    thought = serializers.JSONField(help_text="A string, or notes: [{role, content}].")
    related_turn_ids = serializers.ListField(child=serializers.IntegerField(), help_text="The turns it stands for.")
    state = serializers.CharField(help_text="active, folded (into a summary) or flushed.")
    active = serializers.SerializerMethodField(help_text="The state as the seed's snapshot says it.")
    folded_into = serializers.IntegerField(allow_null=True, help_text="Folded nodes: the summary's node_id.")
    created_at = serializers.DateTimeField()

    class Meta:
        ref_name = "GraphNode"

    @extend_schema_field({"oneOf": [{"type": "boolean"}, {"type": "string", "enum": ["Flushed"]}]})
    def get_active(self, node: GraphNode) -> bool | str:
        return ACTIVE_BY_STATE[node.state]


class GraphNodeDetailSerializer(GraphNodeSerializer):
    """A node with seed 004's index queries by relationship: one layer nearer the task is a
    parent, one layer further a child, whichever way the edge points."""

    children = serializers.SerializerMethodField()
    parents = serializers.SerializerMethodField()
    path_to_root = serializers.SerializerMethodField(help_text="From the node up to the task, both included.")

    class Meta:
        ref_name = "GraphNodeDetail"

    @extend_schema_field(serializers.ListField(child=serializers.IntegerField()))
    def get_children(self, node: GraphNode) -> list[int]:
        return selectors.graph_children(graph=node.graph, node_id=node.node_id)

    @extend_schema_field(serializers.ListField(child=serializers.IntegerField()))
    def get_parents(self, node: GraphNode) -> list[int]:
        return selectors.graph_parents(graph=node.graph, node_id=node.node_id)

    @extend_schema_field(serializers.ListField(child=serializers.IntegerField()))
    def get_path_to_root(self, node: GraphNode) -> list[int]:
        return selectors.graph_path_to_root(graph=node.graph, node_id=node.node_id)


class GraphLeavesSerializer(serializers.Serializer):
    node_ids = serializers.ListField(child=serializers.IntegerField(), help_text="Active nodes with no active child.")

    class Meta:
        ref_name = "GraphLeaves"


class GraphOpSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    graph = serializers.IntegerField(source="graph_id")
    kind = serializers.CharField(help_text="create, memorize, recall or import.")
    status = serializers.CharField(help_text="queued, applied, rejected or failed.")
    rationale = serializers.CharField()
    error = serializers.CharField(help_text="Why it was rejected or failed; empty otherwise.")
    data = serializers.DictField(
        source="detail",
        help_text="What it was and what it did. memorize: turn_ids, and per step (an assistant turn and its "
        "result) its patch and node_ids or its error; recall: the operation, flushed, summaries, edges_left_out; "
        "import: the nodes and edges imported.",
    )
    tokens_before = serializers.IntegerField(allow_null=True, help_text="The context's tokens before it ran.")
    tokens_after = serializers.IntegerField(allow_null=True)
    created_at = serializers.DateTimeField()
    ended_at = serializers.DateTimeField(allow_null=True, help_text="Null while queued.")

    class Meta:
        ref_name = "GraphOp"


class GraphContextMessageSerializer(serializers.Serializer):
    role = serializers.CharField()
    content = serializers.CharField()

    class Meta:
        ref_name = "GraphContextMessage"


class GraphStandInSerializer(serializers.Serializer):
    node_id = serializers.IntegerField(help_text="A summary, or a flushed step whose notes are sent.")
    turn_ids = serializers.ListField(child=serializers.IntegerField(), help_text="The turns its message replaces.")
    tokens = serializers.IntegerField()

    class Meta:
        ref_name = "GraphStandIn"


class GraphContextSerializer(serializers.Serializer):
    """A `GraphContext` with its graph's budget: {"graph": ..., "context": ...}."""

    messages = GraphContextMessageSerializer(many=True, source="context.messages")
    tokens = serializers.IntegerField(source="context.tokens", help_text="The messages' tokens, counted as sent.")
    raw_turns = serializers.ListField(
        child=serializers.IntegerField(), source="context.raw_turns", help_text="The turns sent as they were."
    )
    stand_ins = GraphStandInSerializer(
        many=True, source="context.stand_ins", help_text="The messages sent in place of turns, in order."
    )
    model = serializers.CharField(source="graph.model")
    trigger_tokens = serializers.IntegerField(source="graph.trigger_tokens")
    target_tokens = serializers.IntegerField(source="graph.target_tokens")

    class Meta:
        ref_name = "GraphContext"
