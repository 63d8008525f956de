"""The REST API of agents' brains (seed 002): the brain's state, its collections a page at a time
(a cursor over a key unique within the brain, newest first), and the operations on it (a tick
now, ticking on and off, chat, goals, memory.json). Explained in docs/brains.md."""

from typing import Any

from django.conf import settings
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
    inline_serializer,
)
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.brains import selectors as brain_selectors
from agents.brains import services
from agents.brains.api.serializers import (
    BrainChatExchangeSerializer,
    BrainExploredSerializer,
    BrainGoalSerializer,
    BrainImportReportSerializer,
    BrainNeuronSerializer,
    BrainRecordSerializer,
    BrainSerializer,
    BrainSynapseSerializer,
    BrainTickingSerializer,
    BrainTickQueuedSerializer,
    BrainTickSerializer,
)
from agents.brains.models import Explored, Neuron, Record, Synapse, TickRun
from agents.brains.selectors.brains import BrainCollection
from agents.brains.services.brains import GOAL_CHARS, goal_complete, goal_create
from agents.brains.services.ticks import MAX_INTERVAL_S
from agents.context.models import Agent
from agents.http import AGENT_ID, agent_of
from memsite.api import JSONParser, read_body
from memsite.limits import max_body_bytes, wait_slots
from memsite.pagination import OrderedPagination
from memsite.schema import page_parameters, quota_refusals, refusals
from memsite.serializers import StrictCharField, StrictInputSerializer, StrictIntegerField
from memsite.spaces.principals import principal_of

TAG = "brains"
GOAL_ID = OpenApiParameter("goal_id", OpenApiTypes.INT, OpenApiParameter.PATH, description="The goal's id.")
CHAT_FAILED = inline_serializer(
    "BrainChatFailed",
    fields={
        "detail": serializers.CharField(),
        "reason": serializers.CharField(help_text="Why the LLM call failed: timeout, rate_limited, ..."),
        "user_message": serializers.IntegerField(
            help_text="The position of the user's message, kept in the conversation."
        ),
    },
)


errors = refusals(
    {
        404: "No such agent, or no such goal of the agent.",
        409: "Conflict: the goal is already done, or the agent has as many active goals as it may.",
        411: "The document was sent without a Content-Length.",
        413: "The document is larger than MEMSITE_BRAIN_IMPORT_MAX_BYTES.",
        422: "The conversation has spent its token budget, or the message and what chat adds to the context "
        "do not fit the agent's window.",
        502: "The LLM could not answer; the user's message is kept in the conversation (user_message: its position).",
    },
    bodies={502: CHAT_FAILED},
)


# -- pages of a collection ---------------------------------------------------------------------


PAGE_PARAMETERS = page_parameters(OrderedPagination)
ENTRY_SERIALIZERS: dict[type, type[serializers.Serializer]] = {
    Record: BrainRecordSerializer,
    Explored: BrainExploredSerializer,
    Neuron: BrainNeuronSerializer,
    Synapse: BrainSynapseSerializer,
    TickRun: BrainTickSerializer,
}
# One page schema per kind of entry, shared by the collections that hold it.
PAGE_SERIALIZERS = {
    model: inline_serializer(
        f"{entry.Meta.ref_name}Page",  # type: ignore[attr-defined]  # each entry's serializer names itself
        fields={
            "next": serializers.URLField(allow_null=True, help_text="The next, older page; null on the last."),
            "previous": serializers.URLField(allow_null=True, help_text="The newer page; null on the first."),
            "results": entry(many=True),
        },
    )
    for model, entry in ENTRY_SERIALIZERS.items()
}


class BrainCollectionApi(APIView):
    """A page of one collection; `collection` is given by `for_collection`."""

    collection: BrainCollection

    def get(self, request: Request, agent_id: int) -> Response:
        agent = agent_of(request, agent_id)
        paginator = OrderedPagination(self.collection.ordering)
        rows = brain_selectors.brain_collection_list(agent=agent, name=self.collection.name)
        page = paginator.paginate_queryset(rows, request, view=self)
        output = ENTRY_SERIALIZERS[self.collection.model]
        return paginator.get_paginated_response(output(page, many=True).data)

    @classmethod
    def for_collection(cls, collection: BrainCollection) -> Any:
        name = "".join(part.capitalize() for part in collection.name.split("-"))
        view: type[BrainCollectionApi] = type(
            f"Brain{name}Api", (cls,), {"collection": collection, "__doc__": cls.__doc__}
        )
        schema = extend_schema(
            tags=[TAG],
            operation_id=f"agent_brain_{collection.name.replace('-', '_')}",
            summary=f"The agent's {collection.label}, newest first, a page at a time",
            description=f"Newest first by {collection.key}; follow `next` for older entries. "
            "Pages are cursors, so they stay put while the brain grows.",
            parameters=[AGENT_ID, *PAGE_PARAMETERS],
            responses={200: PAGE_SERIALIZERS[collection.model], **errors(400, 404)},
        )
        return extend_schema_view(get=schema)(view).as_view()


# -- the brain's state -------------------------------------------------------------------------


class BrainApi(APIView):
    OutputSerializer = BrainSerializer

    @extend_schema(
        tags=[TAG],
        operation_id="agent_brain",
        summary="The agent's brain: its state, plan, goals, emotions, hormones, counts and ticking",
        description="An agent whose brain has not been written yet reads as an empty brain at rest "
        "(created_at null). The collections themselves are listed by /brain/<collection>/.",
        parameters=[AGENT_ID],
        responses={200: BrainSerializer, **errors(404)},
    )
    def get(self, request: Request, agent_id: int) -> Response:
        state = brain_selectors.brain_state(agent=agent_of(request, agent_id))
        return Response(self.OutputSerializer(state).data)


def _ticking(agent: Agent) -> brain_selectors.BrainTicking:
    brain, _ = brain_selectors.brain_or_empty(agent=agent)
    return brain_selectors.brain_ticking(brain=brain)


# -- ticks -------------------------------------------------------------------------------------


class TickApi(APIView):
    OutputSerializer = BrainTickQueuedSerializer

    @extend_schema(
        tags=[TAG],
        operation_id="agent_tick",
        summary="Queue one tick of the agent's brain now",
        description="Whether or not the agent ticks. A worker runs it: follow it in /brain/ticks/. "
        "A tick already under way keeps the brain, and the queued one is then skipped; a tick queued and "
        "not yet begun stands for this one (nothing more is queued).",
        parameters=[AGENT_ID],
        request=None,
        responses={202: BrainTickQueuedSerializer, **errors(404, 503), **quota_refusals()},
    )
    def post(self, request: Request, agent_id: int) -> Response:
        agent = agent_of(request, agent_id)
        services.tick_request(agent=agent, by=principal_of(request))
        ticking = _ticking(agent)
        queued = {"queued": True, "after": ticking.tick_count, "ticking": ticking}
        return Response(self.OutputSerializer(queued).data, status=status.HTTP_202_ACCEPTED)


class TickingStartApi(APIView):
    class InputSerializer(StrictInputSerializer):
        interval_s = StrictIntegerField(
            min_value=1,
            max_value=MAX_INTERVAL_S,
            help_text="Seconds from the start of one tick to the next; at least MEMSITE_TICK_MIN_INTERVAL_S "
            "(10 by default: beat's period), or 400.",
        )

        class Meta:
            ref_name = "BrainTickingStart"

    OutputSerializer = BrainTickingSerializer

    @extend_schema(
        tags=[TAG],
        operation_id="agent_ticking_start",
        summary="Tick the agent every interval_s seconds",
        description="The first tick is due at once; if the agent ticks already, the new interval "
        "applies from its next tick at the latest.",
        parameters=[AGENT_ID],
        request=InputSerializer,
        responses={200: BrainTickingSerializer, **errors(400, 404, 503), **quota_refusals()},
    )
    def post(self, request: Request, agent_id: int) -> Response:
        agent = agent_of(request, agent_id)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        services.ticking_start(agent=agent, by=principal_of(request), **serializer.validated_data)
        return Response(self.OutputSerializer(_ticking(agent)).data)


class TickingPauseApi(APIView):
    OutputSerializer = BrainTickingSerializer

    @extend_schema(
        tags=[TAG],
        operation_id="agent_ticking_pause",
        summary="Stop ticking the agent",
        description="A tick under way ends normally.",
        parameters=[AGENT_ID],
        request=None,
        responses={200: BrainTickingSerializer, **errors(404)},
    )
    def post(self, request: Request, agent_id: int) -> Response:
        agent = agent_of(request, agent_id)
        services.ticking_pause(agent=agent)
        return Response(self.OutputSerializer(_ticking(agent)).data)


# -- chat and goals ----------------------------------------------------------------------------


class ChatApi(APIView):
    class InputSerializer(StrictInputSerializer):
        text = StrictCharField(
            trim_whitespace=False, help_text="What the user says. `goal: ...` adds a goal instead of asking the LLM."
        )

        class Meta:
            ref_name = "BrainChatSend"

    OutputSerializer = BrainChatExchangeSerializer

    @extend_schema(
        tags=[TAG],
        operation_id="agent_chat",
        summary="Say something to the agent and get its reply",
        description="Both lines are messages appended to the agent's conversation (the one "
        "/api/agents/{id}/messages/ lists and appends to), and the reply's prompt is the agent's "
        "assembled context (as /api/agents/{id}/context/ gives it), so it knows every message there. "
        "The user's message is written first and kept if the LLM fails (502). The reply is an LLM call "
        "made while the request waits: when as many requests wait as the server allows "
        "(MEMSITE_WAIT_SLOTS), 429 with Retry-After, and nothing is written.",
        parameters=[AGENT_ID],
        request=InputSerializer,
        responses={
            201: BrainChatExchangeSerializer,
            **errors(400, 404, 409, 422, 502),
            **quota_refusals(also="or as many requests wait for an LLM as the server lets wait (MEMSITE_WAIT_SLOTS)"),
        },
    )
    def post(self, request: Request, agent_id: int) -> Response:
        agent = agent_of(request, agent_id)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        with wait_slots().hold_or_busy():
            exchange = services.chat_send(agent=agent, by=principal_of(request), **serializer.validated_data)
        return Response(self.OutputSerializer(exchange).data, status=status.HTTP_201_CREATED)


class GoalCreateApi(APIView):
    class InputSerializer(StrictInputSerializer):
        text = StrictCharField(max_length=GOAL_CHARS)

        class Meta:
            ref_name = "BrainGoalCreate"

    OutputSerializer = BrainGoalSerializer

    @extend_schema(
        tags=[TAG],
        operation_id="agent_goal_create",
        summary="Give the agent a goal",
        description="At the cap the oldest done goal makes room; with every goal active, 409.",
        parameters=[AGENT_ID],
        request=InputSerializer,
        responses={201: BrainGoalSerializer, **errors(400, 404, 409)},
    )
    def post(self, request: Request, agent_id: int) -> Response:
        agent = agent_of(request, agent_id)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        goal = goal_create(agent=agent, **serializer.validated_data)
        return Response(self.OutputSerializer(goal).data, status=status.HTTP_201_CREATED)


class GoalCompleteApi(APIView):
    OutputSerializer = BrainGoalSerializer

    @extend_schema(
        tags=[TAG],
        operation_id="agent_goal_complete",
        summary="Mark one of the agent's goals done",
        parameters=[AGENT_ID, GOAL_ID],
        request=None,
        responses={200: BrainGoalSerializer, **errors(404, 409)},
    )
    def post(self, request: Request, agent_id: int, goal_id: int) -> Response:
        agent = agent_of(request, agent_id)
        goal = goal_complete(agent=agent, goal_id=goal_id)
        return Response(self.OutputSerializer(goal).data)


# -- memory.json -------------------------------------------------------------------------------


# One URL, two operations: each method is one operation with its own serializers.
@max_body_bytes(lambda: settings.MEMSITE_BRAIN_IMPORT_MAX_BYTES)
class MemoryJsonApi(APIView):
    parser_classes = [JSONParser]  # what the schema shows; the body is read by read_body
    ImportOutputSerializer = BrainImportReportSerializer

    @extend_schema(
        tags=[TAG],
        operation_id="agent_memory_export",
        summary="Download the agent's brain as memory.json",
        description="Seed 002's file: lists oldest first, keyed collections in the order their entries "
        "were made, state under `state`. Read in one transaction, so no tick shows half done.",
        parameters=[AGENT_ID],
        responses={(200, "application/json"): OpenApiResponse(OpenApiTypes.OBJECT), **errors(404)},
    )
    def get(self, request: Request, agent_id: int) -> Response:
        agent = agent_of(request, agent_id)
        document = services.brain_export(agent=agent)
        filename = f"agent-{agent.pk}-memory.json"
        return Response(document, headers={"Content-Disposition": f'attachment; filename="{filename}"'})

    @extend_schema(
        tags=[TAG],
        operation_id="agent_memory_import",
        summary="Replace the agent's brain with a memory.json",
        description="The whole brain, as seed 002's load: every collection and state field the file has is "
        "replaced (ticking and tick runs stay). The document is checked in full first; a refused one "
        "changes nothing. Entries over a cap, or unusable, are left out and reported. "
        "At most MEMSITE_BRAIN_IMPORT_MAX_BYTES.",
        parameters=[AGENT_ID],
        request=OpenApiTypes.OBJECT,
        responses={200: BrainImportReportSerializer, **errors(400, 404, 411, 413)},
    )
    def put(self, request: Request, agent_id: int) -> Response:
        agent = agent_of(request, agent_id)
        report = services.brain_import(
            agent=agent, document=read_body(request, what="memory.json", limit=settings.MEMSITE_BRAIN_IMPORT_MAX_BYTES)
        )
        return Response(self.ImportOutputSerializer(report).data)
