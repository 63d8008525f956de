"""The REST API of searches (seed 001) and of the questions searches put to the user: one view
per operation. Views only translate HTTP: reads go to `memory.selectors`, writes to
`memory.services`, refusals come back as `ServiceError`s with their status.
Explained in docs/memory.md."""

from typing import Any

from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from memory import selectors, services
from memory.api.serializers import SearchQuestionSerializer, SearchSpentSerializer, node_id_field
from memory.models import Search, SearchStep
from memory.selectors.searches import MAX_WAIT_S
from memory.services.searches import (
    BUDGET_CAPS,
    MAX_ANSWER_CHARS,
    MAX_CONTEXT_CHARS,
    MAX_QUESTION_CHARS,
    MAX_QUESTIONS,
)
from memsite.api import BoundedJSONParser, json_body_limit
from memsite.limits import max_body_bytes
from memsite.llm.serializers import ProviderField
from memsite.pagination import CheckedCursorPagination
from memsite.schema import page_parameters, quota_refusals, refusals
from memsite.serializers import (
    BoundedListField,
    StrictCharField,
    StrictInputSerializer,
    StrictIntegerField,
)
from memsite.spaces.principals import principal_of

TAG = "searches"

SEARCH_ID = OpenApiParameter("search_id", OpenApiTypes.INT, OpenApiParameter.PATH, description="The search's id.")
QUESTION_ID = OpenApiParameter(
    "question_id", OpenApiTypes.INT, OpenApiParameter.PATH, description="The user question's id."
)


errors = refusals(
    {
        403: "Refused: the answer would be written in /user/, and the token writes elsewhere.",
        404: "No such search, question or start node.",
        409: "Conflict: the search has already ended, or the question is no longer pending.",
    }
)


# -- representations ---------------------------------------------------------------------------


class SearchBudgetsSerializer(serializers.Serializer):
    max_llm_calls = serializers.IntegerField(help_text="LLM calls the search may make, sub-searches included.")
    max_tokens = serializers.IntegerField(help_text="Prompt plus completion tokens it may spend.")
    timeout_s = serializers.IntegerField(help_text="Seconds it may run.")

    class Meta:
        ref_name = "SearchBudgets"


class SearchCitationSerializer(serializers.Serializer):
    node = serializers.CharField()
    start = serializers.IntegerField(help_text="Character offset in the node's text.")
    end = serializers.IntegerField()
    # Citations written before they were dated have none.
    date = serializers.DateField(
        allow_null=True, default=None, help_text="The day the cited passage speaks of (as a hit's `date`), if known."
    )

    class Meta:
        ref_name = "SearchCitation"


class SearchAnswerSerializer(serializers.Serializer):
    question = serializers.CharField()
    answer = serializers.CharField(help_text="Empty when nothing was found.")
    node_ids = serializers.ListField(child=serializers.CharField(), help_text="The nodes the answer came from.")
    # Results written before citations were kept have none.
    citations = SearchCitationSerializer(
        many=True, default=list, help_text="Where the answer came from: character ranges of the nodes' text."
    )
    complete = serializers.BooleanField()

    class Meta:
        ref_name = "SearchAnswer"


class SearchFoundPassageSerializer(serializers.Serializer):
    start = serializers.IntegerField()
    end = serializers.IntegerField()
    snippet = serializers.CharField()

    class Meta:
        ref_name = "SearchFoundPassage"


class SearchFoundNodeSerializer(serializers.Serializer):
    id = serializers.CharField()
    name = serializers.CharField()
    path = serializers.CharField()
    # Results written before the index's fallback came only from the reading.
    found_by = serializers.ChoiceField(
        choices=["reading", "index"],
        default="reading",
        help_text="reading: the walk read it as an answer; index: it holds the index's best passages, "
        "added after the reading's nodes when a question was left open.",
    )
    passages = SearchFoundPassageSerializer(
        many=True,
        default=list,
        help_text="The passages its answers were cited from (reading), or that ranked best (index).",
    )

    class Meta:
        ref_name = "SearchFoundNode"


class SearchResultSerializer(serializers.Serializer):
    answers = SearchAnswerSerializer(many=True)
    nodes = SearchFoundNodeSerializer(many=True, help_text="Nodes that are themselves answers (output=node).")
    open_questions = serializers.ListField(child=serializers.CharField())
    ended_because = serializers.CharField()

    class Meta:
        ref_name = "SearchResult"


class SearchSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=Search.Status.choices)
    url = serializers.SerializerMethodField(help_text="This search in the API.")
    trace_url = serializers.SerializerMethodField(help_text="The live trace in the dashboard.")
    questions = serializers.ListField(child=serializers.CharField())
    # A field, not the Field attribute of that name: DRF's metaclass takes it off the class.
    context: dict[str, Any] = serializers.CharField()  # type: ignore[assignment]
    start_node = serializers.CharField(source="start_node_id", allow_null=True)
    output = serializers.ChoiceField(choices=Search.Output.choices)
    fallback = serializers.ChoiceField(choices=Search.Fallback.choices)
    budgets = SearchBudgetsSerializer(source="*")
    spent = SearchSpentSerializer(source="*")
    steps = serializers.IntegerField(source="steps_taken", help_text="Steps recorded so far.")
    ended_because = serializers.CharField(help_text="Empty while the search runs.")
    result = SearchResultSerializer(allow_null=True, help_text="Null until the search ends.")
    # A field, not the Field attribute of that name: DRF's metaclass takes it off the class.
    parent = serializers.IntegerField(source="parent_id", allow_null=True, help_text="Set on sub-searches.")  # type: ignore[assignment]
    children = serializers.SerializerMethodField(help_text="Ids of its sub-searches.")
    user_question = serializers.SerializerMethodField(
        help_text="The id of the question it waits for the user to answer, if any."
    )
    created_by = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    provider = ProviderField(model=Search)

    class Meta:
        ref_name = "Search"

    def _absolute(self, path: str) -> str:
        request = self.context.get("request")
        return request.build_absolute_uri(path) if request is not None else path

    def get_url(self, search: Search) -> str:
        return self._absolute(reverse("memory-api:search-detail", args=[search.pk]))

    def get_trace_url(self, search: Search) -> str:
        return self._absolute(reverse("memory:search_detail", args=[search.pk]))

    def get_children(self, search: Search) -> list[int]:
        return list(selectors.search_children(search=search).values_list("pk", flat=True))

    def get_user_question(self, search: Search) -> int | None:
        question = selectors.search_question_pending(search=search)
        return question.pk if question is not None else None

    def get_created_by(self, search: Search) -> str | None:
        return search.created_by.username if search.created_by is not None else None


class LLMCallCostSerializer(serializers.Serializer):
    """What a step's LLM call cost; its messages are on the dashboard, not in the API."""

    id = serializers.IntegerField()
    purpose = serializers.CharField()
    model = serializers.CharField()
    status = serializers.CharField()
    prompt_tokens = serializers.IntegerField()
    completion_tokens = serializers.IntegerField()
    latency_ms = serializers.IntegerField()
    cost_usd = serializers.FloatField()

    class Meta:
        ref_name = "SearchStepLLMCall"


class SearchStepSerializer(serializers.Serializer):
    number = serializers.IntegerField(help_text="1, 2, ...: pass the last one seen as ?after=.")
    kind = serializers.ChoiceField(choices=SearchStep.Kind.choices)
    node = serializers.CharField(source="node_id", allow_null=True)
    node_name = serializers.CharField(help_text="Kept when the node is deleted.")
    summary = serializers.CharField()
    detail = serializers.DictField()
    llm_call = LLMCallCostSerializer(allow_null=True)
    created_at = serializers.DateTimeField()

    class Meta:
        ref_name = "SearchStep"


class SearchStepPageSerializer(serializers.Serializer):
    next = serializers.URLField(allow_null=True, help_text="The next page, or null on the last one.")
    previous = serializers.URLField(allow_null=True)
    results = SearchStepSerializer(many=True)

    class Meta:
        ref_name = "SearchStepPage"


class SearchQuestionPageSerializer(serializers.Serializer):
    next = serializers.URLField(allow_null=True, help_text="The next (older) page, or null on the last one.")
    previous = serializers.URLField(allow_null=True)
    results = SearchQuestionSerializer(many=True)

    class Meta:
        ref_name = "SearchQuestionPage"


# -- plumbing ----------------------------------------------------------------------------------


class SearchStepsPagination(CheckedCursorPagination):
    """Steps in the order they were taken, a cursor page at a time."""

    ordering: str | tuple[str, ...] = "number"


class QuestionsPagination(SearchStepsPagination):
    """Pending questions newest first, a cursor page at a time (the model's own order)."""

    ordering = ("-created_at", "-id")


# -- searches ----------------------------------------------------------------------------------


@max_body_bytes(json_body_limit)
class SearchStartApi(APIView):
    parser_classes = [BoundedJSONParser]

    class InputSerializer(StrictInputSerializer):
        class BudgetsSerializer(StrictInputSerializer):
            max_llm_calls = StrictIntegerField(required=False, min_value=1, max_value=BUDGET_CAPS["max_llm_calls"])
            max_tokens = StrictIntegerField(required=False, min_value=1, max_value=BUDGET_CAPS["max_tokens"])
            timeout_s = StrictIntegerField(required=False, min_value=1, max_value=BUDGET_CAPS["timeout_s"])

            class Meta:
                ref_name = "SearchBudgetsInput"

        questions = BoundedListField(
            child=StrictCharField(max_length=MAX_QUESTION_CHARS),
            allow_empty=False,
            min_length=1,  # the same rule as allow_empty, for the schema (minItems)
            max_length=MAX_QUESTIONS,
            help_text=f"1 to {MAX_QUESTIONS} questions; duplicates are dropped.",
        )
        # A field, not the Field attribute of that name: DRF's metaclass takes it off the class.
        context = StrictCharField(  # type: ignore[assignment]
            required=False,
            default="",
            allow_blank=True,
            max_length=MAX_CONTEXT_CHARS,
            help_text="What the asker is doing, shown to the router and the reader.",
        )
        start_node = node_id_field(
            required=False,
            allow_null=True,
            default=None,
            help_text="The node to start the walk at; null or absent for the top of the tree.",
        )
        output = serializers.ChoiceField(
            choices=Search.Output.choices,
            default=Search.Output.ANSWER,
            help_text="answer: answers in words; node: the nodes that are the answer.",
        )
        fallback = serializers.ChoiceField(
            choices=Search.Fallback.choices,
            default=Search.Fallback.NONE,
            help_text="ask_user: put unanswered questions to the user and wait; none: end with what was found.",
        )
        budgets = BudgetsSerializer(required=False, help_text="Each absent budget takes the server's default.")

        class Meta:
            ref_name = "SearchStart"

    class FilterSerializer(serializers.Serializer):
        wait = serializers.IntegerField(
            required=False,
            default=0,
            min_value=0,
            max_value=MAX_WAIT_S,
            help_text=f"Seconds (0 to {MAX_WAIT_S}) to wait for the search to end before answering.",
        )

        class Meta:
            ref_name = "SearchStartQuery"

    OutputSerializer = SearchSerializer

    @extend_schema(
        tags=[TAG],
        operation_id="search_start",
        summary="Start a search for answers to questions",
        description="Answers 202 with the queued search at once. With `?wait=N` it answers when "
        "the search ends (200, with its result) or after N seconds (202, still running); poll "
        "`url` for the rest. When the server is already waiting for as many searches as it "
        "may (MEMSITE_WAIT_SLOTS), it answers 202 at once, as without `wait`.",
        parameters=[FilterSerializer],
        request=InputSerializer,
        responses={
            200: OpenApiResponse(SearchSerializer, description="The search ended within `wait`."),
            202: OpenApiResponse(SearchSerializer, description="Queued or still running."),
            **errors(400, 404, 503),
            **quota_refusals(),
        },
    )
    def post(self, request: Request) -> Response:
        # The query first: a bad `wait` must not leave a search running that nobody waits for.
        query = self.FilterSerializer(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        start_node = data["start_node"]
        principal = principal_of(request)
        space = principal.space
        search = services.search_start(
            by=principal,
            questions=data["questions"],
            context=data["context"],
            start_node=selectors.node_get(space=space, node_id=start_node) if start_node is not None else None,
            output=data["output"],
            fallback=data["fallback"],
            **data.get("budgets", {}),
        )
        # search_start has committed, so a worker may already be running it.
        search = selectors.search_wait(
            search=selectors.search_get(space=space, search_id=search.pk), seconds=query.validated_data["wait"]
        )
        code = status.HTTP_202_ACCEPTED if search.is_active else status.HTTP_200_OK
        response = Response(self.OutputSerializer(search, context={"request": request}).data, status=code)
        response["Location"] = reverse("memory-api:search-detail", args=[search.pk])
        return response


class SearchDetailApi(APIView):
    OutputSerializer = SearchSerializer

    @extend_schema(
        tags=[TAG],
        operation_id="search_read",
        summary="A search: status, budgets, spend and, once ended, its result",
        parameters=[SEARCH_ID],
        responses={200: SearchSerializer, **errors(404)},
    )
    def get(self, request: Request, search_id: int) -> Response:
        search = selectors.search_get(space=principal_of(request).space, search_id=search_id)
        return Response(self.OutputSerializer(search, context={"request": request}).data)


class SearchStepsApi(APIView):
    class FilterSerializer(serializers.Serializer):
        after = serializers.IntegerField(
            required=False, min_value=0, help_text="Only steps with a greater number: the last one you saw."
        )

        class Meta:
            ref_name = "SearchStepsQuery"

    OutputSerializer = SearchStepSerializer

    @extend_schema(
        tags=[TAG],
        operation_id="search_steps",
        summary="The steps of a search in order, a page at a time",
        description="Each step with what its LLM call cost; the messages are on the trace page.",
        parameters=[SEARCH_ID, FilterSerializer, *page_parameters(SearchStepsPagination)],
        responses={200: SearchStepPageSerializer, **errors(400, 404)},
    )
    def get(self, request: Request, search_id: int) -> Response:
        search = selectors.search_get(space=principal_of(request).space, search_id=search_id)
        query = self.FilterSerializer(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        paginator = SearchStepsPagination()
        steps = selectors.search_steps(search=search, after=query.validated_data.get("after"))
        page = paginator.paginate_queryset(steps, request, view=self)
        return paginator.get_paginated_response(self.OutputSerializer(page, many=True).data)


class SearchCancelApi(APIView):
    OutputSerializer = SearchSerializer

    @extend_schema(
        tags=[TAG],
        operation_id="search_cancel",
        summary="Cancel a search",
        description="A queued or waiting search ends at once; a running one at its next step.",
        parameters=[SEARCH_ID],
        request=None,
        responses={202: SearchSerializer, **errors(404, 409)},
    )
    def post(self, request: Request, search_id: int) -> Response:
        space = principal_of(request).space
        search = services.search_cancel(
            search=selectors.search_get(space=space, search_id=search_id), user=request.user
        )
        search = selectors.search_get(space=space, search_id=search.pk)
        return Response(
            self.OutputSerializer(search, context={"request": request}).data, status=status.HTTP_202_ACCEPTED
        )


# -- the user's questions ----------------------------------------------------------------------


class QuestionListApi(APIView):
    OutputSerializer = SearchQuestionSerializer

    @extend_schema(
        tags=[TAG],
        operation_id="question_list",
        summary="Questions searches are waiting for the user to answer, newest first, a page at a time",
        parameters=page_parameters(QuestionsPagination),
        responses={200: SearchQuestionPageSerializer, **errors(400)},
    )
    def get(self, request: Request) -> Response:
        # Only the search's id is shown: no need to load each search's row.
        questions = selectors.search_questions_pending(space=principal_of(request).space).select_related(None)
        paginator = QuestionsPagination()
        page = paginator.paginate_queryset(questions, request, view=self)
        return paginator.get_paginated_response(self.OutputSerializer(page, many=True).data)


@max_body_bytes(json_body_limit)
class QuestionAnswerApi(APIView):
    parser_classes = [BoundedJSONParser]

    class InputSerializer(StrictInputSerializer):
        answer = StrictCharField(max_length=MAX_ANSWER_CHARS, help_text="Completes the waiting search.")

        class Meta:
            ref_name = "SearchQuestionAnswer"

    OutputSerializer = SearchQuestionSerializer

    @extend_schema(
        tags=[TAG],
        operation_id="question_answer",
        summary="Answer a search's question",
        description="The waiting search ends with this answer, which is also kept as a document in the `user` folder.",
        parameters=[QUESTION_ID],
        request=InputSerializer,
        responses={200: SearchQuestionSerializer, **errors(400, 403, 404, 409)},
    )
    def post(self, request: Request, question_id: int) -> Response:
        principal = principal_of(request)
        question = selectors.search_question_get(space=principal.space, question_id=question_id)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        question = services.search_question_answer(
            question=question, answer=serializer.validated_data["answer"], by=principal
        )
        return Response(self.OutputSerializer(question).data)
