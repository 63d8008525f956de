"""The REST API of agents, their conversations, context assembly and checkpoints: one view
per operation. Views only translate HTTP: reads go to `agents.context.selectors` and writes
(and context assembly, which may queue a summary) to `agents.context.services`, refusals come
back as `ServiceError`s."""

from typing import Any

from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    extend_schema,
    extend_schema_field,
    inline_serializer,
)
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.context import selectors, services
from agents.context.api.serializers import (
    AgentSerializer,
    CheckpointSerializer,
    ContextSerializer,
    MessageSerializer,
)
from agents.context.logic.message_fields import (
    MAX_ANNOTATIONS,
    MAX_CONTENT_CHARS,
    MAX_CONTENT_PARTS,
    MAX_NAME_CHARS,
    MAX_TOOL_CALLS,
)
from agents.context.models import Role, Strategy
from agents.context.services.agents import MAX_MODEL_CHARS, MAX_WINDOW_TURNS
from agents.context.services.messages import MAX_REFERENCES
from agents.http import AGENT_ID, agent_of
from memsite.api import BoundedJSONParser, json_body_limit
from memsite.limits import max_body_bytes
from memsite.pagination import OrderedPagination
from memsite.schema import page_parameters, refusals
from memsite.serializers import (
    BoundedListField,
    StrictBooleanField,
    StrictCharField,
    StrictFloatField,
    StrictInputSerializer,
    StrictIntegerField,
)
from memsite.spaces.principals import principal_of

TAG = "agents"
CHECKPOINT_ID = OpenApiParameter(
    "checkpoint_id", OpenApiTypes.INT, OpenApiParameter.PATH, description="The checkpoint's id."
)
BUDGET_EXCEEDED = inline_serializer(
    "TokenBudgetExceeded",
    fields={
        "detail": serializers.CharField(),
        "reason": serializers.ChoiceField(
            choices=["pinned", "conversation_budget"],
            help_text="pinned: the instructions and pinned messages alone do not fit the window; "
            "conversation_budget: the conversation has spent its token budget.",
        ),
        "model": serializers.CharField(),
        "context_window": serializers.IntegerField(),
        "reserved_output_tokens": serializers.IntegerField(),
        "turn_input_limit": serializers.IntegerField(allow_null=True),
        "window": serializers.IntegerField(),
        "needed": serializers.IntegerField(required=False, help_text="pinned: the tokens the pinned part needs."),
        "pinned_messages": serializers.IntegerField(required=False),
        "conversation_tokens": serializers.IntegerField(required=False),
        "conversation_token_budget": serializers.IntegerField(required=False),
    },
)


errors = refusals(
    {
        404: "No such agent or checkpoint.",
        409: "Conflict: another agent has the name, or a message was appended at the same time.",
        422: "Token budget exceeded; the body has the numbers.",
    },
    bodies={422: BUDGET_EXCEEDED},
)


class AgentSettingsSerializer(StrictInputSerializer):
    """The settings both creating and updating take; which are required is the view's choice."""

    name = StrictCharField(max_length=200)
    model = StrictCharField(
        max_length=MAX_MODEL_CHARS, help_text="The model the agent calls; tokens are counted with it."
    )
    instructions = StrictCharField(
        required=False,
        allow_blank=True,
        trim_whitespace=False,
        help_text="The system message, a template: $name or ${name} is replaced by that context variable; "
        "$$ is a dollar sign.",
    )
    context_variables = serializers.DictField(
        required=False, help_text="Values for the instructions; the model sees only what the instructions name."
    )
    strategy = serializers.ChoiceField(choices=Strategy.choices, required=False)
    window_turns = StrictIntegerField(required=False, help_text="The turns sliding_window keeps.")
    reserved_output_tokens = StrictIntegerField(required=False, help_text="Kept free in the window for the reply.")
    turn_input_limit = StrictIntegerField(
        required=False, allow_null=True, help_text="At most this many input tokens per call."
    )
    conversation_token_budget = StrictIntegerField(
        required=False,
        allow_null=True,
        help_text="Once the conversation's messages total this many tokens, assembly answers 422.",
    )
    warning_threshold = StrictFloatField(required=False, help_text="A fraction of the window; default 0.8.")
    compaction_trigger = StrictFloatField(required=False, help_text="A fraction of the window; default 0.9.")
    compaction_target = StrictFloatField(
        required=False, help_text="A fraction of the window below the trigger; default 0.6."
    )


class AgentCreateApi(APIView):
    class InputSerializer(AgentSettingsSerializer):
        class Meta:
            ref_name = "AgentCreate"

    OutputSerializer = AgentSerializer

    @extend_schema(
        tags=[TAG],
        operation_id="agent_create",
        summary="Create an agent",
        request=InputSerializer,
        responses={201: AgentSerializer, **errors(400, 409)},
    )
    def post(self, request: Request) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        agent = services.agent_create(space=principal_of(request).space, **serializer.validated_data)
        response = Response(self.OutputSerializer(agent).data, status=status.HTTP_201_CREATED)
        response["Location"] = reverse("agents-api:agent-detail", args=[agent.pk])
        return response


# One URL, two operations: each method is one operation with its own serializers.
class AgentDetailApi(APIView):
    class UpdateInputSerializer(AgentSettingsSerializer):
        class Meta:
            ref_name = "AgentUpdate"

        def __init__(self, *args: Any, **kwargs: Any):
            super().__init__(*args, **kwargs)
            for field in self.fields.values():
                field.required = False

    OutputSerializer = AgentSerializer

    @extend_schema(
        tags=[TAG],
        operation_id="agent_read",
        summary="Read an agent",
        parameters=[AGENT_ID],
        responses={200: AgentSerializer, **errors(404)},
    )
    def get(self, request: Request, agent_id: int) -> Response:
        return Response(self.OutputSerializer(agent_of(request, agent_id)).data)

    @extend_schema(
        tags=[TAG],
        operation_id="agent_update",
        summary="Change an agent's settings",
        description="Send only the settings to change; null clears turn_input_limit or conversation_token_budget.",
        parameters=[AGENT_ID],
        request=UpdateInputSerializer,
        responses={200: AgentSerializer, **errors(400, 404, 409)},
    )
    def patch(self, request: Request, agent_id: int) -> Response:
        agent = agent_of(request, agent_id)
        serializer = self.UpdateInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        agent = services.agent_update(agent=agent, changes=serializer.validated_data)
        return Response(self.OutputSerializer(agent).data)


def _objects(field: str, limit: int, what: str, **options: Any) -> BoundedListField:
    """A list of at most `limit` objects, checked key by key by the service."""
    return BoundedListField(
        child=serializers.DictField(),
        max_length=limit,
        error_messages={"max_length": f"{field} must be a list of at most {limit} {what}."},
        **options,
    )


@extend_schema_field(
    {
        "oneOf": [
            {"type": "string", "maxLength": MAX_CONTENT_CHARS},
            {"type": "array", "maxItems": MAX_CONTENT_PARTS, "items": {"type": "object"}},
        ],
        "nullable": True,
    }
)
class MessageContentField(serializers.Field):
    """Text, or a list of content parts (checked part by part by the service), or null."""

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        self.text = StrictCharField(allow_blank=True, trim_whitespace=False, max_length=MAX_CONTENT_CHARS)
        self.parts = _objects("content", MAX_CONTENT_PARTS, "content parts")

    def to_internal_value(self, data: Any) -> str | list[dict]:
        field = self.parts if isinstance(data, list) else self.text
        return field.run_validation(data)


MESSAGE_PAGE = inline_serializer(
    "AgentMessagePage",
    fields={
        "next": serializers.URLField(allow_null=True, help_text="The next, older page; null on the last."),
        "previous": serializers.URLField(allow_null=True, help_text="The newer page; null on the first."),
        "results": MessageSerializer(many=True),
    },
)


# A message's text and its tool calls, 100,000 characters each, escaped as JSON may escape them
# (six bytes a character), and its other fields: more than a form's 1 MiB.
@max_body_bytes(json_body_limit)
class MessagesApi(APIView):
    class InputSerializer(StrictInputSerializer):
        """A message as the chat API takes it or returns it (`ChatCompletionMessage.model_dump()`
        included), and memsite's own fields: sender, pinned, importance, references."""

        role = serializers.ChoiceField(choices=Role.choices)
        content = MessageContentField(
            required=False,
            default="",
            allow_null=True,
            help_text="Text, or content parts: [{type: text, text}], and for user messages "
            "image_url, input_audio and file parts; refusal parts for assistant messages.",
        )
        name = StrictCharField(
            required=False,
            allow_null=True,
            max_length=MAX_NAME_CHARS,
            help_text="The participant's name; function messages: the function whose call they answer.",
        )
        refusal = StrictCharField(
            required=False,
            allow_null=True,
            allow_blank=True,
            trim_whitespace=False,
            max_length=MAX_CONTENT_CHARS,
            help_text="Assistant messages: what the model refused with.",
        )
        audio = serializers.DictField(
            required=False,
            allow_null=True,
            help_text="An assistant's audio reply: {id, data, expires_at, transcript} or {id}; "
            "the data is not kept, and only the id is sent back.",
        )
        function_call = serializers.DictField(
            required=False,
            allow_null=True,
            help_text="Assistant messages, the older form: {name, arguments}.",
        )
        tool_calls = _objects(
            "tool_calls",
            MAX_TOOL_CALLS,
            "calls",
            required=False,
            allow_null=True,
            help_text='Assistant messages: [{id, type: "function", function: {name, arguments}}], '
            'arguments as JSON text, or [{id, type: "custom", custom: {name, input}}]. Each call '
            "must be answered by a tool message before anything else.",
        )
        annotations = _objects(
            "annotations",
            MAX_ANNOTATIONS,
            "annotations",
            required=False,
            allow_null=True,
            help_text="An assistant reply's url_citation annotations: kept and shown, never sent to the model.",
        )
        tool_call_id = StrictCharField(required=False, help_text="Tool messages: the call this answers.")
        tool_name = StrictCharField(required=False, help_text="Tool messages: taken from the call when left out.")
        sender = StrictCharField(required=False, allow_blank=True, help_text="Who wrote it, such as an agent's name.")
        pinned = StrictBooleanField(
            required=False, help_text="Never dropped from the context. Not for tool calls or results."
        )
        importance = StrictFloatField(required=False, help_text="0 to 1; default 0.5.")
        references = BoundedListField(
            child=StrictIntegerField(),
            required=False,
            max_length=MAX_REFERENCES,
            error_messages={"max_length": f"references must be a list of at most {MAX_REFERENCES} message positions."},
            help_text="Positions of earlier messages this builds on.",
        )

        class Meta:
            ref_name = "AgentMessageAppend"

    OutputSerializer = MessageSerializer
    parser_classes = [BoundedJSONParser]  # JSON only: a form's fields hold no more than 1 MiB

    @extend_schema(
        tags=[TAG],
        operation_id="agent_message_list",
        summary="The agent's conversation, newest first, a page at a time",
        description="Every message of the conversation: those appended here and the lines of the agent's chat "
        "(POST /api/agents/{id}/chat/ appends both the user's line and the reply), one thread.",
        parameters=[AGENT_ID, *page_parameters(OrderedPagination)],
        responses={200: MESSAGE_PAGE, **errors(400, 404)},
    )
    def get(self, request: Request, agent_id: int) -> Response:
        agent = agent_of(request, agent_id)
        paginator = OrderedPagination("-position")
        page = paginator.paginate_queryset(selectors.message_list(agent=agent), request, view=self)
        return paginator.get_paginated_response(MessageSerializer(page, many=True).data)

    @extend_schema(
        tags=[TAG],
        operation_id="agent_message_append",
        summary="Append a message to an agent's conversation",
        description="A message as the Chat Completions API takes it, or as it returns one (the "
        "SDK's `message.model_dump()`, an OpenAI Swarm history entry): null fields are left out; "
        "an unknown field, in the message or in one of its objects, is a 400 that names it.",
        parameters=[AGENT_ID],
        request=InputSerializer,
        responses={201: MessageSerializer, **errors(400, 404, 409)},
    )
    def post(self, request: Request, agent_id: int) -> Response:
        agent = agent_of(request, agent_id)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        message = services.message_append(agent=agent, **serializer.validated_data)
        return Response(self.OutputSerializer(message).data, status=status.HTTP_201_CREATED)


class AgentContextApi(APIView):
    class FilterSerializer(serializers.Serializer):
        model = serializers.CharField(
            required=False, max_length=MAX_MODEL_CHARS, help_text="Default: the agent's model."
        )
        strategy = serializers.ChoiceField(
            choices=Strategy.choices, required=False, help_text="Default: the agent's strategy."
        )
        turns = serializers.IntegerField(
            required=False,
            min_value=1,
            max_value=MAX_WINDOW_TURNS,
            help_text="sliding_window: the turns to keep; default: the agent's window_turns.",
        )

        class Meta:
            ref_name = "AgentContextQuery"

    OutputSerializer = ContextSerializer

    @extend_schema(
        tags=[TAG],
        operation_id="agent_context",
        summary="The messages for the agent's next model call, and how they were chosen",
        description="Assembled within the model's context window less the reserved output: the "
        "instructions, pinned messages and what the strategy keeps of the conversation. Nothing "
        "stored changes. 422 when the instructions and pinned messages alone do not fit, or the "
        "conversation has spent its token budget. With the summarize strategy, a cut that no "
        "written summary covers queues one (report.summary_wanted) for later calls.",
        parameters=[AGENT_ID, FilterSerializer],
        responses={200: ContextSerializer, **errors(400, 404, 422)},
    )
    def get(self, request: Request, agent_id: int) -> Response:
        agent = agent_of(request, agent_id)
        query = self.FilterSerializer(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        assembled = services.context_build(agent=agent, **query.validated_data)
        return Response(self.OutputSerializer(assembled).data)


class CheckpointCreateApi(APIView):
    OutputSerializer = CheckpointSerializer

    @extend_schema(
        tags=[TAG],
        operation_id="agent_checkpoint_create",
        summary="Save the agent's settings and whole conversation as a checkpoint",
        parameters=[AGENT_ID],
        request=None,
        responses={201: CheckpointSerializer, **errors(404)},
    )
    def post(self, request: Request, agent_id: int) -> Response:
        checkpoint = services.checkpoint_create(agent=agent_of(request, agent_id))
        return Response(self.OutputSerializer(checkpoint).data, status=status.HTTP_201_CREATED)


class CheckpointRestoreApi(APIView):
    OutputSerializer = AgentSerializer

    @extend_schema(
        tags=[TAG],
        operation_id="agent_checkpoint_restore",
        summary="Put the agent back as it was at a checkpoint",
        description="Settings (not the name), counters and every message, exactly; later "
        "messages are removed. Other checkpoints stay.",
        parameters=[AGENT_ID, CHECKPOINT_ID],
        request=None,
        responses={200: AgentSerializer, **errors(400, 404)},
    )
    def post(self, request: Request, agent_id: int, checkpoint_id: int) -> Response:
        agent = agent_of(request, agent_id)
        checkpoint = selectors.checkpoint_get(agent=agent, checkpoint_id=checkpoint_id)
        agent = services.checkpoint_restore(agent=agent, checkpoint=checkpoint)
        return Response(self.OutputSerializer(agent).data)
