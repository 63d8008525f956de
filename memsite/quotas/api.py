"""The API of a user's usage: GET /api/usage/ (today's LLM spend and the work in flight,
against the daily budget and the caps). What the operations that start work say of their 429 is
memsite.schema's `quota_refusals`."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from memsite.quotas.selectors import user_usage
from memsite.request_types import AuthenticatedRequest
from memsite.spaces.principals import principal_of


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
    offline_llm_today = LLMSpendSerializer(
        source="offline_spend",
        help_text="The caller's user's calls to the offline provider in all their spaces, which no budget above "
        "counts, against their own cap (MEMSITE_OFFLINE_LLM_DAILY_CALLS).",
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
