"""The API of a user's usage: GET /api/usage/ (today's LLM spend and the work in flight,
against the daily budget and the caps), and what the operations that start work say of their
429 in the OpenAPI schema."""

from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from memsite.quotas.selectors import user_usage
from memsite.request_types import AuthenticatedRequest
from memsite.spaces.principals import principal_of

QUOTA_REFUSED = inline_serializer(
    "QuotaRefused",
    fields={
        "detail": serializers.CharField(),
        "quota": serializers.CharField(
            required=False,
            help_text="The cap reached (its setting, e.g. MEMSITE_QUOTA_SEARCHES), or the budget spent: "
            "daily_llm_budget (the user's, in all their spaces), member_daily_llm_budget (the one the space's "
            "owner set for each member), space_daily_llm_budget, token_daily_llm_budget or "
            "system_daily_llm_budget (memsite's own upkeep in the space).",
        ),
        "cap": serializers.IntegerField(required=False),
        "in_flight": serializers.IntegerField(required=False, help_text="The user's work of that kind now."),
        "calls": serializers.IntegerField(required=False, help_text="LLM calls charged to the user today."),
        "calls_limit": serializers.IntegerField(required=False, allow_null=True, help_text="Null: not bounded."),
        "tokens": serializers.IntegerField(required=False, help_text="Tokens charged to the user today."),
        "tokens_limit": serializers.IntegerField(required=False, allow_null=True, help_text="Null: not bounded."),
        "resets_at": serializers.DateTimeField(required=False, help_text="When the day's budget starts afresh."),
    },
)


def quota_refusals(*, also: str = "") -> dict[int, OpenApiResponse]:
    """The 429 of an operation that starts LLM work, for its `extend_schema(responses=...)`;
    `also` names the operation's other reasons for a 429."""
    return {
        429: OpenApiResponse(
            QUOTA_REFUSED,
            description="Past MEMSITE_API_RATE, past one of the user's caps on work in flight, or with the "
            f"user's daily LLM budget spent{', ' + also if also else ''}; nothing was started. The body says "
            "which, with the numbers, and Retry-After when to try again.",
        )
    }


class LLMSpendSerializer(serializers.Serializer):
    calls = serializers.IntegerField(help_text="LLM calls charged since the day began.")
    calls_limit = serializers.IntegerField(allow_null=True, help_text="Null: not bounded.")
    tokens = serializers.IntegerField(help_text="Prompt and completion tokens of those calls.")
    tokens_limit = serializers.IntegerField(allow_null=True, help_text="Null: not bounded.")
    spent = serializers.BooleanField(help_text="Whether new LLM work is refused until resets_at.")
    resets_at = serializers.DateTimeField()


class InFlightSerializer(serializers.Serializer):
    count = serializers.IntegerField()
    cap = serializers.IntegerField()


class UsageSerializer(serializers.Serializer):
    llm_today = LLMSpendSerializer(
        source="spend",
        help_text="The caller's user's spend in all their spaces, against the site's daily budget for a user "
        "(MEMSITE_LLM_DAILY_CALLS, MEMSITE_LLM_DAILY_TOKENS).",
    )
    member_llm_today = LLMSpendSerializer(
        source="member_spend",
        help_text="The caller's user's spend in this space, against the budget its owner set for each member "
        "(member_llm_daily_calls, member_llm_daily_tokens; null limits when none is set).",
    )
    space_llm_today = LLMSpendSerializer(
        source="space_spend", help_text="The whole space's, against its own budget if its owner set one."
    )
    token_llm_today = LLMSpendSerializer(
        source="token_spend",
        allow_null=True,
        help_text="The calling token's work, against the token's own budget; null for a session.",
    )
    searches = InFlightSerializer(help_text="Searches queued or running (MEMSITE_QUOTA_SEARCHES).")
    ticks = InFlightSerializer(help_text="Ticks queued or running (MEMSITE_QUOTA_TICKS).")
    ticking_agents = InFlightSerializer(help_text="Agents ticking on the user's schedule.")
    graph_ops = InFlightSerializer(help_text="Memorize and recall operations queued or running.")


class UsageApi(APIView):
    OutputSerializer = UsageSerializer

    @extend_schema(
        tags=["usage"],
        operation_id="usage_get",
        summary="The caller's LLM spend today and background work in flight in the space, against the limits",
        description="The work started in the space by the caller's user (token or session), whatever started it: "
        "the API, the dashboard or a schedule the user set; and the whole space's spend if it has a budget.",
        responses={200: UsageSerializer},
    )
    def get(self, request: AuthenticatedRequest) -> Response:
        usage = user_usage(by=principal_of(request))
        return Response(self.OutputSerializer(usage).data)
