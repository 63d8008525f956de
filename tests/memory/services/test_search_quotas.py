"""A user's searches are capped, and charged to their daily LLM budget: the API and the
dashboard alike answer 429 with the numbers, and change nothing; a search that meets the
budget mid-way ends like its other budget ends."""

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from memory import services
from memory.models import Search, SearchStep
from memory.services.demo import demo_memory_seed
from memory.services.searches import ASKER_GONE
from memsite.llm.models import LLMCall
from memsite.spaces.logic import key_digest
from memsite.spaces.models import ApiToken
from memsite.spaces.principals import token_principal
from tests.factories import UserFactory, acting, asker_gone, system, token_for
from tests.fake_openai import Reply
from tests.ledger import assert_every_call_has_a_principal
from tests.llm.factories import days_ago, make_call
from tests.openapi import assert_documented

pytestmark = pytest.mark.django_db
QUESTIONS = {"questions": ["Which port does the API listen on?"]}


@pytest.fixture(autouse=True)
def quotas(settings, offline_llm):
    settings.MEMSITE_QUOTA_SEARCHES = 2
    settings.MEMSITE_LLM_DAILY_CALLS = 5
    settings.MEMSITE_SEARCH_TOOLS = False
    return settings


def start(api: APIClient):
    return api.post(reverse("memory-api:search-start"), QUESTIONS, format="json")


def api_for(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_for(user)}")
    return client


def test_searches_past_the_cap_are_429_and_nothing_is_made(api, user):
    assert [start(api).status_code for _ in range(2)] == [202, 202]
    refused = start(api)
    assert refused.status_code == 429, refused.content
    body = refused.json()
    assert "You have 2 searches in flight; the cap is 2 (MEMSITE_QUOTA_SEARCHES)" in body["detail"]
    assert (body["cap"], body["in_flight"]) == (2, 2)
    assert int(refused["Retry-After"]) >= 1
    assert Search.objects.filter(created_by=user).count() == 2
    assert_documented(refused, "/api/searches/", "post")
    # Another user's searches are theirs; an ended search makes room again.
    assert start(api_for(UserFactory())).status_code == 202
    Search.objects.filter(created_by=user).update(status=Search.Status.DONE)
    assert start(api).status_code == 202


def test_the_dashboard_is_under_the_same_cap(client, user):
    client.force_login(user)
    data = {"questions": "Which port?", "output": "answer", "fallback": "none"}
    assert [client.post(reverse("memory:search_start"), data).status_code for _ in range(2)] == [302, 302]
    refused = client.post(reverse("memory:search_start"), data)
    assert refused.status_code == 429
    assert "the cap is 2 (MEMSITE_QUOTA_SEARCHES)" in refused.content.decode()
    assert Search.objects.filter(created_by=user).count() == 2


def test_a_spent_budget_refuses_new_searches_until_the_day_ends(api, user):
    for _ in range(5):
        make_call(by=acting(user))
    refused = start(api)
    assert refused.status_code == 429
    body = refused.json()
    assert body["quota"] == "daily_llm_budget" and (body["calls"], body["calls_limit"]) == (5, 5)
    assert "resets at" in body["detail"] and int(refused["Retry-After"]) <= 24 * 3600 + 1
    assert not Search.objects.exists()
    LLMCall.objects.update(created_at=days_ago(1))  # yesterday's spend
    assert start(api).status_code == 202


def test_a_search_charges_its_user_and_ends_when_the_budget_runs_out_mid_way(user, settings, served_llm):
    settings.MEMSITE_LLM_DAILY_CALLS = 1  # the walk to the answer takes two (route, read)
    demo_memory_seed(by=acting(user))
    served_llm.script(Reply.json({"choice": 1, "reason": "The API's errors are there."}))  # a model routes
    search = services.search_start(by=acting(user), questions=["Which HTTP status code means a conflict?"])
    services.search_run(search_id=search.pk)
    search.refresh_from_db()
    calls = LLMCall.objects.filter(user=user)
    assert search.ended_because == "budget:daily_llm" and search.status == Search.Status.DONE
    assert calls.count() == 1 and search.llm_calls == 1
    finish = SearchStep.objects.filter(search=search).order_by("number").last()
    assert finish.summary.startswith("The daily_llm budget ran out. The daily LLM budget is spent: 1 of 1 LLM calls")
    assert_every_call_has_a_principal()


@pytest.mark.parametrize("how", ["removed", "deleted", "reader", "revoked"])
def test_a_search_whose_asker_can_no_longer_act_ends_with_nothing_spent(user, how):
    demo_memory_seed(by=system())
    by = token_principal(ApiToken.objects.get(digest=key_digest(token_for(user)))) if how == "revoked" else acting(user)
    search = services.search_start(by=by, questions=["Which HTTP status code means a conflict?"])
    asker_gone(user, how)

    services.search_run(search_id=search.pk)

    search.refresh_from_db()
    assert search.status == Search.Status.FAILED and search.ended_because == ASKER_GONE
    assert not LLMCall.objects.exists()  # never run as anyone else
