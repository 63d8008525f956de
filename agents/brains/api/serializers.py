"""Serializers of the brains API: the shared representations (input fields: memsite.serializers)."""

from rest_framework import serializers

from agents.brains.models import TickRun
from agents.context.api.serializers import MessageSerializer
from memsite.llm.serializers import ProviderField, ProviderListSerializer


class BrainRecordSerializer(serializers.Serializer):
    seq = serializers.IntegerField(
        help_text="Numbers the entries of one collection from 1; the newest has the largest."
    )
    text = serializers.CharField()
    data = serializers.JSONField(  # type: ignore[assignment]  # DRF pops declared fields off the class
        help_text="The entry as memory.json has it: an object (an episode's type, what and where), "
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
    label = serializers.CharField()  # type: ignore[assignment]  # DRF pops declared fields off the class

    class Meta:
        ref_name = "BrainNeuronRef"


class BrainNeuronSerializer(BrainNeuronRefSerializer):
    strength = serializers.FloatField()
    last_used = serializers.DateTimeField()
    data = serializers.DictField()  # type: ignore[assignment]  # DRF pops declared fields off the class

    class Meta:
        ref_name = "BrainNeuron"


class BrainSynapseSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    source = BrainNeuronRefSerializer()  # type: ignore[assignment]  # DRF pops declared fields off the class
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
    provider = ProviderField(model=TickRun)

    class Meta:
        ref_name = "BrainTick"
        list_serializer_class = ProviderListSerializer


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
        allow_null=True,
        help_text="The index of the step being worked on; null when there is none left.",
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
    created_at = serializers.DateTimeField(
        source="brain.created_at", allow_null=True, help_text="Null until the first write."
    )
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


class BrainCitationSerializer(serializers.Serializer):
    """An `agents.brains.logic.recall.MemoryItem.citation`."""

    id = serializers.CharField(help_text="As the prompt gave it: `fact:<seq>`, `episode:<seq>` or `node:<node id>`.")
    kind = serializers.ChoiceField(choices=["fact", "episode", "node"])
    ref = serializers.CharField(help_text="The fact's or episode's seq, or the node's id (a passage of its text).")
    label = serializers.CharField(  # type: ignore[assignment]  # DRF pops declared fields off the class
        help_text="The node's path, or `fact 3`, `episode 7`."
    )

    class Meta:
        ref_name = "BrainCitation"


class BrainChatExchangeSerializer(serializers.Serializer):
    """A `services.ChatExchange`."""

    user = MessageSerializer(source="user_message", help_text="The user's message, appended to the conversation.")
    reply = MessageSerializer(source="reply_message", help_text="The agent's reply, the message after it.")
    goal = BrainGoalSerializer(allow_null=True, help_text="The goal `goal: ...` added.")
    citations = BrainCitationSerializer(
        many=True,
        help_text="What the reply draws on, among the facts, episodes and memory passages its prompt gave "
        "(the reply's `data` keeps them too).",
    )
    provider = serializers.CharField(
        allow_null=True,
        help_text="The LLM provider that wrote the reply: `offline` for the heuristics that run with no model; "
        "null when no LLM call did (`goal: ...`).",
    )

    class Meta:
        ref_name = "BrainChatExchange"


class BrainImportReportSerializer(serializers.Serializer):
    """A `services.ImportReport`, by memory.json's names (`thoughts`, `state.goals`, ...)."""

    imported = serializers.DictField(child=serializers.IntegerField(), help_text="Entries stored.")
    trimmed = serializers.DictField(
        child=serializers.IntegerField(),
        help_text="Left out to keep a cap: the oldest, the least used.",
    )
    dropped = serializers.DictField(
        child=serializers.IntegerField(),
        help_text="Left out as unusable: empty or overlong keys; "
        "synapses with a missing end, a loop or a repeated pair.",
    )
    clipped = serializers.DictField(child=serializers.IntegerField(), help_text="Texts cut to their character cap.")
    kept_keys = serializers.ListField(
        child=serializers.CharField(),
        help_text="Top-level keys kept as they are and given back by an export (embeddings, fileContents, ...).",
    )
    added_self_neuron = serializers.BooleanField()

    class Meta:
        ref_name = "BrainImportReport"
