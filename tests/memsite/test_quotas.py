"""Fair background work: the rules (memsite.quotas.logic), the daily LLM budget in the gateway,
and where the spend is shown (GET /api/usage/, the /llm/ page)."""

from datetime import UTC, datetime, timedelta

import pytest
from django.urls import reverse

from memsite.llm.errors import LLMError, Reason
from memsite.llm.gateway import complete
from memsite.llm.models import LLMCall
from memsite.quotas.logic import QuotaExceeded, Spend, budget_refusal, day_bounds, in_flight_refusal
from memsite.spaces.models import Space
from memsite.spaces.selectors import space_default
from memsite.spaces.services import space_update
from tests.factories import UserFactory
from tests.llm.factories import days_ago, make_call
from tests.openapi import assert_documented

NOW = datetime(2025, 5, 6, 15, 30, tzinfo=UTC)
MESSAGES = [{"role": "user", "content": "What is the port?"}]


def spend(calls: int, tokens: int) -> Spend:
    return Spend(
        calls=calls, tokens=tokens, calls_limit=10, tokens_limit=1_000, resets_at=datetime(2025, 5, 7, tzinfo=UTC)
    )


# -- the rules ---------------------------------------------------------------------------------


def test_work_under_its_cap_is_let_through_and_at_the_cap_refused_with_the_numbers():
    assert in_flight_refusal(what="searches", in_flight=7, cap=8, setting="MEMSITE_QUOTA_SEARCHES") is None
    refusal = in_flight_refusal(what="searches", in_flight=8, cap=8, setting="MEMSITE_QUOTA_SEARCHES")
    assert isinstance(refusal, QuotaExceeded) and refusal.status == 429
    assert "8 searches in flight; the cap is 8 (MEMSITE_QUOTA_SEARCHES)" in refusal.message
    assert refusal.data == {"quota": "MEMSITE_QUOTA_SEARCHES", "cap": 8, "in_flight": 8}
    assert refusal.retry_after_s >= 1


def test_a_day_runs_from_midnight_to_midnight():
    assert day_bounds(NOW) == (datetime(2025, 5, 6, tzinfo=UTC), datetime(2025, 5, 7, tzinfo=UTC))


@pytest.mark.parametrize(("calls", "tokens", "spent"), [(9, 999, False), (10, 0, True), (0, 1_000, True)])
def test_the_budget_is_spent_at_either_limit(calls, tokens, spent):
    assert spend(calls, tokens).spent is spent
    assert (budget_refusal(spend(calls, tokens), now=NOW) is not None) is spent


def test_a_spent_budget_says_the_spend_and_waits_until_the_day_ends():
    refusal = budget_refusal(spend(10, 20), now=NOW)
    assert "10 of 10 LLM calls and 20 of 1,000 tokens today" in refusal.message
    assert "resets at 2025-05-07T00:00:00+00:00" in refusal.message
    assert refusal.data["quota"] == "daily_llm_budget" and refusal.data["resets_at"] == "2025-05-07T00:00:00+00:00"
    assert refusal.retry_after_s == 8 * 3600 + 30 * 60 + 1


# -- the gateway -------------------------------------------------------------------------------


@pytest.fixture
def budget(settings, offline_llm):
    settings.MEMSITE_LLM_DAILY_CALLS = 3
    settings.MEMSITE_LLM_DAILY_TOKENS = 1_000_000
    return settings


@pytest.mark.django_db
def test_calls_are_charged_to_the_user_and_refused_once_the_day_is_spent(budget):
    user, here = UserFactory(), space_default().pk
    make_call(user_id=user.pk, created_at=days_ago(1))  # yesterday's do not count
    for _ in range(3):
        call = complete(purpose="route", messages=MESSAGES, user_id=user.pk, space_id=here).call
        assert (call.user_id, call.space_id) == (user.pk, here)
    with pytest.raises(LLMError) as refused:
        complete(purpose="route", messages=MESSAGES, user_id=user.pk, space_id=here)
    assert refused.value.reason is Reason.BUDGET_SPENT and refused.value.call is None
    assert refused.value.message.startswith("The daily LLM budget is spent: 3 of 3 LLM calls")
    assert LLMCall.objects.filter(user=user).count() == 4  # nothing recorded for the refused call
    # Another user's day, the same user's in another space, and the system's own calls are not this one's.
    assert complete(purpose="route", messages=MESSAGES, user_id=UserFactory().pk, space_id=here).call.user_id
    elsewhere = Space.objects.create(slug="elsewhere", name="Elsewhere").pk
    assert complete(purpose="route", messages=MESSAGES, user_id=user.pk, space_id=elsewhere).call.space_id == elsewhere
    assert complete(purpose="route", messages=MESSAGES, space_id=here).call.user_id is None


@pytest.mark.django_db
def test_a_space_owner_lowers_a_members_budget_and_bounds_the_whole_spaces(budget):
    user, space = UserFactory(), space_default()
    space_update(space=space, member_llm_daily_calls=1)
    complete(purpose="route", messages=MESSAGES, user_id=user.pk, space_id=space.pk)
    with pytest.raises(LLMError, match="The daily LLM budget is spent: 1 of 1 LLM calls"):
        complete(purpose="route", messages=MESSAGES, user_id=user.pk, space_id=space.pk)
    space_update(space=space, member_llm_daily_calls=None, llm_daily_tokens=1)  # 1 token: spent already
    with pytest.raises(LLMError, match="The space's daily LLM budget is spent: [0-9,]+ of 1 tokens"):
        complete(purpose="route", messages=MESSAGES, space_id=space.pk)  # the system's work too
    assert LLMCall.objects.count() == 1


@pytest.mark.django_db
def test_tokens_spend_the_budget_too(budget):
    budget.MEMSITE_LLM_DAILY_TOKENS = 500
    user = UserFactory()
    make_call(user_id=user.pk, prompt_tokens=400, completion_tokens=100)
    with pytest.raises(LLMError) as refused:
        complete(purpose="route", messages=MESSAGES, user_id=user.pk, space_id=space_default().pk)
    assert refused.value.reason is Reason.BUDGET_SPENT and "500 of 500 tokens" in refused.value.message


# -- where the spend is shown ------------------------------------------------------------------


@pytest.mark.django_db
def test_usage_says_the_spend_today_and_the_work_in_flight(api, user, budget):
    make_call(user_id=user.pk, prompt_tokens=100, completion_tokens=20)
    make_call(user_id=user.pk, prompt_tokens=1, completion_tokens=1, created_at=days_ago(1))
    make_call(user_id=UserFactory().pk)
    response = api.get(reverse("api-usage"))
    assert response.status_code == 200, response.content
    body = response.json()
    today = body["llm_today"]
    assert (today["calls"], today["calls_limit"], today["tokens"], today["spent"]) == (1, 3, 120, False)
    assert datetime.fromisoformat(today["resets_at"]) - datetime.now(UTC) <= timedelta(days=1)
    assert body["searches"] == {"count": 0, "cap": budget.MEMSITE_QUOTA_SEARCHES}
    assert set(body) == {
        "llm_today",
        "space_llm_today",
        "token_llm_today",
        "searches",
        "ticks",
        "ticking_agents",
        "graph_ops",
    }
    assert body["token_llm_today"]["calls_limit"] is None  # the token has no budget of its own
    whole = body["space_llm_today"]  # every member's; the space has no budget of its own
    assert (whole["calls"], whole["calls_limit"], whole["tokens_limit"], whole["spent"]) == (2, None, None, False)
    assert_documented(response, "/api/usage/", "get")


@pytest.mark.django_db
def test_the_ledger_page_shows_the_readers_spend_against_the_budget(client, user, budget):
    for _ in range(3):
        make_call(user_id=user.pk, prompt_tokens=1_000, completion_tokens=234)
    client.force_login(user)
    page = client.get(reverse("llm:ledger")).content.decode()
    assert 'LLM calls today</th><td class="num">3</td><td class="num">3</td>' in page
    assert 'tokens today</th><td class="num">3702</td><td class="num">1000000</td>' in page
    assert "the daily budget is spent" in page
