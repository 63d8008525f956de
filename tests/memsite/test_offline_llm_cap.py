"""The offline provider's calls cost nothing: no daily LLM budget counts them, and only a cap of
their own (MEMSITE_OFFLINE_LLM_DAILY_CALLS, a user's in every space, memsite's own in a space)
stops a loop that never ends. Where the spend is shown says so too."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from memory.models import Search
from memsite.llm.errors import LLMError, Reason
from memsite.llm.gateway import complete
from memsite.llm.models import LLMCall
from memsite.quotas import selectors
from memsite.quotas.checks import llm_budget_require
from memsite.quotas.logic import Budget, QuotaExceeded
from memsite.spaces.principals import token_principal
from memsite.spaces.selectors import space_default
from memsite.spaces.services import space_create, space_update, token_create
from tests.factories import UserFactory, acting, system
from tests.llm.factories import make_call
from tests.openapi import assert_documented

pytestmark = pytest.mark.django_db
MESSAGES = [{"role": "user", "content": "What is the port?"}]
QUESTIONS = {"questions": ["Which port does the API listen on?"]}
CAP_SPENT = "The daily cap on offline LLM calls is spent: 3 of 3 LLM calls today"


@pytest.fixture
def budgets(settings, offline_llm):
    """Daily budgets of 2 calls each, and a cap of 3 on the offline provider's calls."""
    settings.MEMSITE_LLM_DAILY_CALLS = 2
    settings.MEMSITE_SYSTEM_LLM_DAILY_CALLS = 2
    settings.MEMSITE_OFFLINE_LLM_DAILY_CALLS = 3
    settings.MEMSITE_SEARCH_TOOLS = False
    return settings


def offline_calls(count: int, *, by) -> None:
    for _ in range(count):
        complete(purpose="route", messages=MESSAGES, by=by)


def paid(by) -> dict[Budget, int]:
    """The calls each budget `by`'s work counts against reads today, but the offline cap."""
    return {spend.budget: spend.calls for spend in selectors.spends_today(by=by) if spend.budget is not Budget.OFFLINE}


def test_offline_calls_spend_no_budget_of_a_user_a_member_a_space_a_token_or_memsite(budgets):
    budgets.MEMSITE_OFFLINE_LLM_DAILY_CALLS = 20_000
    user, space = UserFactory(), space_default()
    space_update(space=space, llm_daily_calls=2, member_llm_daily_calls=2)
    token = token_create(member=user, space=space, name="node", llm_daily_calls=2).token
    offline_calls(5, by=token_principal(token))
    offline_calls(5, by=system(space))
    assert LLMCall.objects.filter(provider="offline").count() == 10
    assert paid(token_principal(token)) == {Budget.USER: 0, Budget.MEMBER: 0, Budget.SPACE: 0, Budget.TOKEN: 0}
    assert paid(system(space)) == {Budget.SYSTEM: 0, Budget.SPACE: 0}
    assert selectors.offline_spend_today(by=acting(user)).calls == 5
    llm_budget_require(by=token_principal(token))  # new work still starts
    llm_budget_require(by=system(space))


def refusal(by) -> str:
    """The message of the refusal of `by`'s next call."""
    with pytest.raises(LLMError) as refused:
        complete(purpose="route", messages=MESSAGES, by=by)
    assert refused.value.reason is Reason.BUDGET_SPENT and refused.value.call is None
    return refused.value.message


def test_a_call_counts_against_the_budgets_of_its_provider_alone(request, user, budgets):
    offline_calls(3, by=acting(user))  # the offline cap is spent
    request.getfixturevalue("served_llm")
    for _ in range(2):  # a model serves these: the offline cap holds up none
        complete(purpose="route", messages=MESSAGES, by=acting(user))
    assert refusal(acting(user)).startswith("The daily LLM budget is spent: 2 of 2 LLM calls")
    budgets.MEMSITE_LLM_PROVIDER = "offline"
    budgets.MEMSITE_OFFLINE_LLM_DAILY_CALLS = 4
    offline_calls(1, by=acting(user))  # the budget a model's calls spent holds up no offline call
    assert refusal(acting(user)).startswith("The daily cap on offline LLM calls is spent: 4 of 4 LLM calls")
    with pytest.raises(QuotaExceeded):  # new work may call either provider: every budget bounds it
        llm_budget_require(by=acting(user))


@pytest.mark.parametrize("served", [False, True], ids=["offline", "served"])
def test_a_call_reads_the_spend_of_its_own_providers_calls_alone(request, user, budgets, served):
    if served:
        request.getfixturevalue("served_llm")
    by = acting(user)
    with CaptureQueriesContext(connection) as queries:
        complete(purpose="route", messages=MESSAGES, by=by)
    spends = [query["sql"] for query in queries if query["sql"].startswith('SELECT COUNT("llm_llmcall"."id")')]
    assert len(spends) == 1, spends  # the user's budget, or the offline cap: not both
    assert len(queries) == 3  # the space as it is now, that spend, the ledger row


def test_the_offline_cap_refuses_a_users_calls_and_new_work_once_spent(api, user, budgets):
    offline_calls(2, by=acting(user))
    offline_calls(1, by=acting(user, space_create(user=user, slug="elsewhere", name="Elsewhere")))  # one cap
    with pytest.raises(LLMError) as refused:
        complete(purpose="route", messages=MESSAGES, by=acting(user))
    assert refused.value.reason is Reason.BUDGET_SPENT and refused.value.call is None
    assert refused.value.message.startswith(CAP_SPENT)
    assert LLMCall.objects.filter(user=user).count() == 3  # nothing recorded for the refused call
    started = api.post(reverse("memory-api:search-start"), QUESTIONS, format="json")
    assert started.status_code == 429, started.content
    body = started.json()
    assert body["quota"] == "offline_daily_llm_cap" and (body["calls"], body["calls_limit"]) == (3, 3)
    assert body["detail"].startswith(CAP_SPENT) and int(started["Retry-After"]) >= 1
    assert_documented(started, "/api/searches/", "post")
    assert not Search.objects.exists()
    # Another user's offline calls, and memsite's own in the space, are counted apart.
    offline_calls(1, by=acting(UserFactory()))
    offline_calls(1, by=system(space_default()))


def test_memsites_own_offline_calls_have_the_cap_in_each_space(user, budgets):
    space, other = space_default(), space_create(user=user, slug="other", name="Other")
    offline_calls(3, by=system(space))
    with pytest.raises(LLMError) as refused:
        complete(purpose="describe", messages=MESSAGES, by=system(space))
    assert refused.value.reason is Reason.BUDGET_SPENT and refused.value.message.startswith(CAP_SPENT)
    with pytest.raises(QuotaExceeded) as refused_work:
        llm_budget_require(by=system(space))
    assert refused_work.value.status == 429 and refused_work.value.data["quota"] == "offline_daily_llm_cap"
    # Another space's upkeep, and a member's own work in this space, are counted apart.
    offline_calls(3, by=system(other))
    offline_calls(3, by=acting(user, space))
    assert LLMCall.objects.filter(acted_as=LLMCall.ActedAs.SYSTEM, space=space).count() == 3


def test_usage_counts_the_offline_calls_apart(api, user, budgets):
    offline_calls(2, by=acting(user))
    make_call(by=acting(user), prompt_tokens=10, completion_tokens=2)  # a call a model served
    offline_calls(1, by=acting(UserFactory()))
    offline_calls(1, by=system(space_default()))
    response = api.get(reverse("api-usage"))
    assert response.status_code == 200, response.content
    body = response.json()
    offline = body["offline_llm_today"]
    assert (offline["calls"], offline["calls_limit"], offline["tokens_limit"], offline["spent"]) == (2, 3, None, False)
    assert (body["llm_today"]["calls"], body["llm_today"]["tokens"]) == (1, 12)
    assert_documented(response, "/api/usage/", "get")
    offline_calls(1, by=acting(user))
    assert api.get(reverse("api-usage")).json()["offline_llm_today"]["spent"] is True


def test_the_ledger_page_shows_the_offline_calls_against_their_cap(client, user, budgets):
    offline_calls(2, by=acting(user))
    client.force_login(user)
    page = client.get(reverse("llm:ledger")).content.decode()
    row = '<tr class="llm-usage-offline"><th>offline calls today, which no budget counts'
    assert f'{row}</th><td class="num">2</td><td class="num">3</td>' in page
    assert 'in all your spaces</th><td class="num">0</td><td class="num">2</td>' in page  # the budget: none spent
    offline_calls(1, by=acting(user))
    page = client.get(reverse("llm:ledger")).content.decode()
    assert f'{row} &mdash; <strong>capped</strong></th><td class="num">3</td><td class="num">3</td>' in page
    assert "the daily budget is spent" not in page
