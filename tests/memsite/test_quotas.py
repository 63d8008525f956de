"""Fair background work: the rules (memsite.quotas.logic), the daily LLM budget in the gateway,
and where the spend is shown (GET /api/usage/, the /llm/ page)."""

import ast
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from django.urls import reverse

from memsite.llm.errors import LLMError, Reason
from memsite.llm.gateway import complete
from memsite.llm.models import LLMCall
from memsite.quotas import selectors
from memsite.quotas.checks import llm_budget_require
from memsite.quotas.logic import QuotaExceeded, Spend, budget_refusal, day_bounds, in_flight_refusal
from memsite.spaces.models import Space
from memsite.spaces.selectors import space_default
from memsite.spaces.services import space_create, space_delete, space_update
from tests.factories import UserFactory, acting, system
from tests.llm.factories import days_ago, make_call
from tests.openapi import assert_documented

ROOT = Path(__file__).resolve().parents[2]
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


def test_work_in_flight_is_counted_by_the_apps_that_do_it_and_quotas_import_none():
    counters = {kind: counter.__module__ for kind, counter in selectors._counters.items()}
    assert counters == {
        "searches": "memory.selectors.searches",
        "ticks": "agents.brains.selectors.quotas",
        "ticking_agents": "agents.brains.selectors.quotas",
        "graph_ops": "agents.graphs.selectors.graphs",
    }
    for path in (ROOT / "memsite" / "quotas").glob("*.py"):
        imported = [
            node.module if isinstance(node, ast.ImportFrom) else alias.name
            for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, (ast.Import, ast.ImportFrom))
            for alias in node.names
        ]
        assert not [name for name in imported if name and name.split(".")[0] in ("agents", "memory")], path
    with pytest.raises(ValueError, match="No cap on work of kind 'naps'"):
        selectors.register_in_flight("naps", lambda *, by: 0)


# -- the gateway -------------------------------------------------------------------------------


@pytest.fixture
def budget(settings, served_llm):
    """Small daily budgets, and a model that serves the calls they count."""
    settings.MEMSITE_LLM_DAILY_CALLS = 3
    settings.MEMSITE_LLM_DAILY_TOKENS = 1_000_000
    return settings


@pytest.mark.django_db
def test_calls_are_charged_to_the_user_and_refused_once_the_day_is_spent(budget):
    user, here = UserFactory(), space_default()
    make_call(by=acting(user), created_at=days_ago(1))  # yesterday's do not count
    for _ in range(3):
        call = complete(purpose="route", messages=MESSAGES, by=acting(user)).call
        assert (call.user_id, call.space_id, call.acted_as) == (user.pk, here.pk, LLMCall.ActedAs.USER)
    with pytest.raises(LLMError) as refused:
        complete(purpose="route", messages=MESSAGES, by=acting(user))
    assert refused.value.reason is Reason.BUDGET_SPENT and refused.value.call is None
    assert refused.value.message.startswith("The daily LLM budget is spent: 3 of 3 LLM calls")
    assert LLMCall.objects.filter(user=user).count() == 4  # nothing recorded for the refused call
    # Another user's day and memsite's own calls are not this one's.
    assert complete(purpose="route", messages=MESSAGES, by=acting(UserFactory())).call.user_id
    own = complete(purpose="route", messages=MESSAGES, by=system(here)).call
    assert (own.user_id, own.acted_as) == (None, LLMCall.ActedAs.SYSTEM)


@pytest.mark.django_db
def test_a_users_budget_is_one_in_all_their_spaces_however_many_they_make(budget):
    user = UserFactory()
    spaces = [space_create(user=user, slug=f"mine-{number}", name=f"Mine {number}") for number in range(3)]
    for space in spaces:
        complete(purpose="route", messages=MESSAGES, by=acting(user, space))
    for space in [*spaces, space_default(), space_create(user=user, slug="one-more", name="One more")]:
        with pytest.raises(LLMError, match="The daily LLM budget is spent: 3 of 3 LLM calls"):
            complete(purpose="route", messages=MESSAGES, by=acting(user, space))
    assert LLMCall.objects.filter(user=user).count() == 3


@pytest.mark.django_db
def test_deleting_a_space_and_making_it_again_starts_no_new_allowance(budget):
    user = UserFactory()
    space = space_create(user=user, slug="again", name="Again")
    for _ in range(3):
        complete(purpose="route", messages=MESSAGES, by=acting(user, space))
    space_delete(space=space, confirm=space.slug)
    assert LLMCall.objects.filter(user=user, space__isnull=True).count() == 3  # kept, with no space
    remade = space_create(user=user, slug="again", name="Again")
    with pytest.raises(LLMError, match="The daily LLM budget is spent: 3 of 3 LLM calls"):
        complete(purpose="route", messages=MESSAGES, by=acting(user, remade))
    with pytest.raises(QuotaExceeded) as refused:
        llm_budget_require(by=acting(user, remade))
    assert refused.value.data["quota"] == "daily_llm_budget" and refused.value.data["calls"] == 3


@pytest.mark.django_db
def test_a_space_owner_lowers_a_members_budget_there_and_bounds_the_whole_spaces(budget):
    user, space = UserFactory(), space_default()
    elsewhere = space_create(user=user, slug="elsewhere", name="Elsewhere")
    space_update(space=space, member_llm_daily_calls=1)
    complete(purpose="route", messages=MESSAGES, by=acting(user, space))
    with pytest.raises(LLMError, match="The member's daily LLM budget in the space is spent: 1 of 1 LLM calls"):
        complete(purpose="route", messages=MESSAGES, by=acting(user, space))
    complete(purpose="route", messages=MESSAGES, by=acting(user, elsewhere))  # the site's budget has room
    space_update(space=space, member_llm_daily_calls=None, llm_daily_tokens=1)  # 1 token: spent already
    with pytest.raises(LLMError, match="The space's daily LLM budget is spent: [0-9,]+ of 1 tokens"):
        complete(purpose="route", messages=MESSAGES, by=system(space))  # memsite's own work too
    assert LLMCall.objects.count() == 2


@pytest.mark.django_db
def test_memsites_own_work_has_a_budget_of_its_own_in_each_space(budget):
    budget.MEMSITE_SYSTEM_LLM_DAILY_CALLS = 2
    user, space = UserFactory(), space_default()
    other = Space.objects.create(slug="other", name="Other")
    for _ in range(2):
        complete(purpose="describe", messages=MESSAGES, by=system(space))
    with pytest.raises(LLMError, match="memsite's own daily LLM budget in this space is spent: 2 of 2 LLM calls"):
        complete(purpose="describe", messages=MESSAGES, by=system(space))
    # Another space's upkeep, and the members' own work, are counted apart.
    complete(purpose="describe", messages=MESSAGES, by=system(other))
    complete(purpose="route", messages=MESSAGES, by=acting(user, space))
    with pytest.raises(QuotaExceeded) as refused:
        llm_budget_require(by=system(space))
    assert refused.value.data["quota"] == "system_daily_llm_budget"


@pytest.mark.django_db
def test_tokens_spend_the_budget_too(budget):
    budget.MEMSITE_LLM_DAILY_TOKENS = 500
    user = UserFactory()
    make_call(by=acting(user), prompt_tokens=400, completion_tokens=100)
    with pytest.raises(LLMError) as refused:
        complete(purpose="route", messages=MESSAGES, by=acting(user))
    assert refused.value.reason is Reason.BUDGET_SPENT and "500 of 500 tokens" in refused.value.message


# -- where the spend is shown ------------------------------------------------------------------


@pytest.mark.django_db
def test_usage_says_the_spend_today_and_the_work_in_flight(api, user, budget):
    make_call(by=acting(user), prompt_tokens=100, completion_tokens=20)
    make_call(by=acting(user), prompt_tokens=1, completion_tokens=1, created_at=days_ago(1))
    make_call(by=acting(UserFactory()))
    elsewhere = space_create(user=user, slug="elsewhere", name="Elsewhere")
    make_call(by=acting(user, elsewhere), prompt_tokens=10, completion_tokens=0)  # counted: one budget
    response = api.get(reverse("api-usage"))
    assert response.status_code == 200, response.content
    body = response.json()
    today = body["llm_today"]
    assert (today["calls"], today["calls_limit"], today["tokens"], today["spent"]) == (2, 3, 130, False)
    here = body["member_llm_today"]  # the user's in this space, which bounds nothing more here
    assert (here["calls"], here["tokens"], here["calls_limit"], here["tokens_limit"]) == (1, 120, None, None)
    assert datetime.fromisoformat(today["resets_at"]) - datetime.now(UTC) <= timedelta(days=1)
    assert body["searches"] == {"count": 0, "cap": budget.MEMSITE_QUOTA_SEARCHES}
    assert set(body) == {
        "llm_today",
        "member_llm_today",
        "space_llm_today",
        "token_llm_today",
        "searches",
        "ticks",
        "ticking_agents",
        "graph_ops",
        "offline_llm_today",
    }
    assert body["token_llm_today"]["calls_limit"] is None  # the token has no budget of its own
    whole = body["space_llm_today"]  # every member's; the space has no budget of its own
    assert (whole["calls"], whole["calls_limit"], whole["tokens_limit"], whole["spent"]) == (2, None, None, False)
    assert_documented(response, "/api/usage/", "get")


@pytest.mark.django_db
def test_the_ledger_page_shows_the_readers_spend_against_the_budget(client, user, budget):
    for _ in range(3):
        make_call(by=acting(user), prompt_tokens=1_000, completion_tokens=234)
    client.force_login(user)
    page = client.get(reverse("llm:ledger")).content.decode()
    assert 'LLM calls a model served today, in all your spaces</th><td class="num">3</td><td class="num">3</td>' in page
    assert 'tokens today, in all your spaces</th><td class="num">3702</td><td class="num">1000000</td>' in page
    assert "the daily budget is spent" in page
    assert "in this space" not in page  # the owner set no budget of each member's here
    space_update(space=space_default(), member_llm_daily_calls=3)
    page = client.get(reverse("llm:ledger")).content.decode()
    assert '<td class="num">3 · 3702</td><td class="num">3 · —</td>' in page
