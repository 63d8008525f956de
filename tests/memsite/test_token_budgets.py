"""A token's own daily LLM budget: the work a token asks for (searches, ticks, graph operations,
chats) is charged to it as well as to its member, and refused once its budget is spent, while
the member's other tokens work on. Set when the token is made or later, never above the budget
of the token that sets it. The tokens a token mints share its budget: minting keys resets none."""

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from agents.brains import services as brain_services
from agents.brains.models import TickRun
from agents.graphs import services as graph_services
from agents.graphs.models import GraphOp
from memory import services as memory_services
from memory.models import Search
from memory.services.demo import demo_memory_seed
from memsite.llm.errors import LLMError, Reason
from memsite.llm.gateway import complete
from memsite.llm.models import LLMCall
from memsite.spaces.models import ApiToken
from memsite.spaces.principals import token_principal
from memsite.spaces.services import token_create
from tests.factories import AgentFactory, GraphFactory, UserFactory, acting, default_space
from tests.llm.factories import make_call
from tests.openapi import assert_documented

pytestmark = pytest.mark.django_db
MESSAGES = [{"role": "user", "content": "What is the port?"}]
QUESTIONS = {"questions": ["Which port does the API listen on?"]}


@pytest.fixture(autouse=True)
def budgets(settings, offline_llm):
    settings.MEMSITE_LLM_DAILY_CALLS = 100
    settings.MEMSITE_SEARCH_TOOLS = False
    return settings


def made(user, **options) -> tuple[ApiToken, APIClient]:
    new = token_create(member=user, space=default_space(), name="node", **options)
    return new.token, key_client(new.key)


def key_client(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def manager(user, **options) -> tuple[ApiToken, APIClient]:
    """A token of `user`, an owner, that manages the space: it makes tokens."""
    return made(user, role="owner", manage=True, **options)


def minted(client: APIClient, count: int, **body) -> list[tuple[ApiToken, APIClient]]:
    """`count` tokens made through the API by the token of `client`."""
    tokens = []
    for number in range(count):
        response = client.post(tokens_url(), {"name": f"minted {number}", **body}, format="json")
        assert response.status_code == 201, response.content
        tokens.append((ApiToken.objects.get(pk=response.json()["id"]), key_client(response.json()["key"])))
    return tokens


def calls_until_refused(tokens: list[ApiToken]) -> int:
    """LLM calls made through the gateway for the work of `tokens`, in turn, until one is
    refused for a spent budget. A model must serve them (`served_llm`): the offline provider's
    calls spend no budget."""
    made_calls = 0
    while made_calls < 100:
        token = tokens[made_calls % len(tokens)]
        try:
            complete(purpose="route", messages=MESSAGES, by=token_principal(token))
        except LLMError as refused:
            assert refused.reason is Reason.BUDGET_SPENT
            return made_calls
        made_calls += 1
    return made_calls


def tokens_url(token: ApiToken | None = None) -> str:
    base = reverse("spaces-api:token-list", args=["default"])
    return base if token is None else reverse("spaces-api:token", args=["default", token.pk])


def test_the_gateway_refuses_a_tokens_work_once_its_own_budget_is_spent(user, served_llm):
    token, _ = made(user, llm_daily_calls=2)
    for _ in range(2):
        call = complete(purpose="route", messages=MESSAGES, by=token_principal(token)).call
        assert call.token_id == token.pk
    with pytest.raises(LLMError) as refused:
        complete(purpose="route", messages=MESSAGES, by=token_principal(token))
    assert refused.value.reason is Reason.BUDGET_SPENT
    assert refused.value.message.startswith("The token's daily LLM budget is spent: 2 of 2 LLM calls")
    # The member's other work, and another token of theirs, still run.
    other, _ = made(user)
    assert complete(purpose="route", messages=MESSAGES, by=token_principal(other)).call
    assert complete(purpose="route", messages=MESSAGES, by=acting(user)).call
    assert LLMCall.objects.filter(token=token).count() == 2


def test_a_token_past_its_budget_starts_no_search_and_says_whose_budget(user):
    token, client = made(user, llm_daily_tokens=500)
    make_call(by=token_principal(token), prompt_tokens=400, completion_tokens=100)
    refused = client.post(reverse("memory-api:search-start"), QUESTIONS, format="json")
    assert refused.status_code == 429, refused.content
    body = refused.json()
    assert body["quota"] == "token_daily_llm_budget" and (body["tokens"], body["tokens_limit"]) == (500, 500)
    assert body["detail"].startswith("This token's daily LLM budget is spent")
    assert_documented(refused, "/api/searches/", "post")
    assert not Search.objects.exists()
    _, fresh = made(user)
    assert fresh.post(reverse("memory-api:search-start"), QUESTIONS, format="json").status_code == 202


def test_a_search_a_token_started_charges_the_token_down_to_its_sub_searches(user):
    demo_memory_seed(by=acting(user))
    token, _ = made(user)
    search = memory_services.search_start(
        by=token_principal(token), questions=["Which HTTP status code means a conflict?"]
    )
    memory_services.search_run(search_id=search.pk)
    calls = LLMCall.objects.filter(served_id=search.pk, served_type__model="search")
    assert calls.exists() and set(calls.values_list("token_id", "user_id")) == {(token.pk, user.pk)}
    for child in Search.objects.filter(parent=search):
        assert child.token_id == token.pk


def test_a_graph_operation_and_a_tick_are_charged_to_the_token_that_asked(user, monkeypatch):
    monkeypatch.setattr("agents.graphs.tasks.graph_work.delay", lambda graph_id: None)
    monkeypatch.setattr("agents.brains.tasks.tick_run.delay", lambda agent_id: None)
    token, _ = made(user)
    graph = GraphFactory()
    op = graph_services.graph_recall(graph=graph, by=token_principal(token))
    assert GraphOp.objects.get(pk=op.pk).token_id == token.pk
    agent = AgentFactory()
    brain_services.tick_request(agent=agent, by=token_principal(token))
    run = brain_services.tick_run(agent_id=agent.pk)
    assert run.status == TickRun.Status.DONE and (run.user_id, run.token_id) == (user.pk, token.pk)
    calls = LLMCall.objects.filter(served_id=run.pk, served_type__model="tickrun")
    assert calls.exists() and set(calls.values_list("token_id", flat=True)) == {token.pk}


def test_scheduled_ticks_are_charged_to_the_token_that_set_them_going(user, monkeypatch):
    monkeypatch.setattr("agents.brains.tasks.tick_run.delay", lambda agent_id: None)
    token, _ = made(user)
    agent = AgentFactory()
    brain_services.ticking_start(agent=agent, interval_s=60, by=token_principal(token))
    assert brain_services.ticks_start_due() == 1
    run = brain_services.tick_run(agent_id=agent.pk)
    assert (run.user_id, run.token_id) == (user.pk, token.pk)


def test_a_chat_through_a_spent_token_is_429(user):
    token, client = made(user, llm_daily_calls=1)
    make_call(by=token_principal(token))
    agent = AgentFactory()
    refused = client.post(reverse("agents-api:chat", args=[agent.pk]), {"text": "How are you?"}, format="json")
    assert refused.status_code == 429 and refused.json()["quota"] == "token_daily_llm_budget"


def test_usage_shows_the_calling_tokens_spend_against_its_budget(user):
    token, client = made(user, llm_daily_calls=10)
    make_call(by=token_principal(token), prompt_tokens=7, completion_tokens=3)
    make_call(by=acting(user))
    response = client.get(reverse("api-usage"))
    body = response.json()
    assert (body["token_llm_today"]["calls"], body["token_llm_today"]["calls_limit"]) == (1, 10)
    assert body["token_llm_today"]["tokens"] == 10 and body["llm_today"]["calls"] == 2
    assert_documented(response, "/api/usage/", "get")
    session = APIClient()
    session.force_login(user)
    assert session.get(reverse("api-usage")).json()["token_llm_today"] is None


def test_a_token_is_made_with_a_budget_and_an_owner_changes_it(staff):
    _, owner = manager(staff)
    response = owner.post(tokens_url(), {"name": "node a", "llm_daily_calls": 50}, format="json")
    assert response.status_code == 201, response.content
    assert (response.json()["llm_daily_calls"], response.json()["llm_daily_tokens"]) == (50, None)
    token = ApiToken.objects.get(pk=response.json()["id"])
    changed = owner.patch(tokens_url(token), {"llm_daily_tokens": 9000}, format="json")
    assert changed.status_code == 200, changed.content
    assert (changed.json()["llm_daily_calls"], changed.json()["llm_daily_tokens"]) == (50, 9000)
    assert_documented(changed, "/api/spaces/{slug}/tokens/{token_id}/", "patch")
    cleared = owner.patch(tokens_url(token), {"llm_daily_calls": None}, format="json").json()
    assert cleared["llm_daily_calls"] is None
    too_big = owner.patch(tokens_url(token), {"llm_daily_calls": 2**40}, format="json")
    assert too_big.status_code == 400 and "llm_daily_calls must be from 0" in too_big.json()["detail"]
    token.refresh_from_db()
    assert (token.llm_daily_calls, token.llm_daily_tokens) == (None, 9000)


def test_a_token_raises_neither_its_own_budget_nor_makes_a_larger_one(staff):
    token, client = manager(staff, llm_daily_calls=5)
    raised = client.patch(tokens_url(token), {"llm_daily_calls": 6}, format="json")
    assert raised.status_code == 403 and "daily budget of 5 LLM calls" in raised.json()["detail"]
    assert client.patch(tokens_url(token), {"llm_daily_calls": None}, format="json").status_code == 403
    assert client.patch(tokens_url(token), {"llm_daily_calls": 3}, format="json").status_code == 200
    child = client.post(tokens_url(), {"name": "child"}, format="json")
    assert child.status_code == 201 and child.json()["llm_daily_calls"] == 3  # the maker's, unless it names one
    assert client.post(tokens_url(), {"name": "big", "llm_daily_calls": 4}, format="json").status_code == 403
    token.refresh_from_db()
    assert token.llm_daily_calls == 3


def test_another_members_token_is_not_found_to_a_non_owner(user):
    theirs, _ = made(UserFactory())
    client = APIClient()
    client.force_login(user)
    missing = client.patch(tokens_url(theirs), {"llm_daily_calls": 1}, format="json")
    assert missing.status_code == 404
    theirs.refresh_from_db()
    assert theirs.llm_daily_calls is None


def test_a_budget_of_3_calls_shared_by_3_minted_tokens_gives_3_not_12(staff, served_llm):
    maker, client = manager(staff, llm_daily_calls=3)
    family = [token for token, _ in minted(client, 3)]
    assert [token.llm_daily_calls for token in family] == [3, 3, 3]  # each its maker's, as a bound
    assert calls_until_refused(family) == 3
    assert LLMCall.objects.filter(token__in=family).count() == 3
    assert calls_until_refused([maker]) == 0  # the maker's own work counts the same day


def test_the_makers_spend_counts_against_what_it_minted(staff, served_llm):
    maker, client = manager(staff, llm_daily_calls=3)
    [(child, _)] = minted(client, 1)
    make_call(by=token_principal(maker))
    make_call(by=token_principal(maker))
    assert calls_until_refused([child]) == 1


def test_a_token_minted_by_a_minted_token_counts_against_both(staff, served_llm):
    """An unbounded root mints a node's key with a budget of 3: the keys that key mints share
    its 3, though they are a generation further down."""
    _, root = manager(staff)
    [(node, node_client)] = minted(root, 1, role="owner", manage=True, llm_daily_calls=3)
    grandchildren = [token for token, _ in minted(node_client, 3)]
    assert {token.minted_by_id for token in grandchildren} == {node.pk}
    assert calls_until_refused(grandchildren) == 3
    refused = node_client.post(reverse("memory-api:search-start"), QUESTIONS, format="json")
    assert refused.status_code == 429 and refused.json()["quota"] == "token_daily_llm_budget"


def test_a_minted_token_gets_no_larger_budget_nor_none(staff):
    _, client = manager(staff, llm_daily_calls=3)
    response = client.post(tokens_url(), {"name": "big", "llm_daily_calls": 4}, format="json")
    assert response.status_code == 403 and "daily budget of 3 LLM calls" in response.json()["detail"]
    assert not ApiToken.objects.filter(name="big").exists()
    unbounded = client.post(tokens_url(), {"name": "none", "llm_daily_calls": None}, format="json")
    assert unbounded.status_code == 201 and unbounded.json()["llm_daily_calls"] == 3  # its maker's


def test_tokens_made_by_a_session_share_nothing(staff, served_llm):
    first, _ = made(staff, llm_daily_calls=1)
    second, _ = made(staff, llm_daily_calls=1)
    assert first.minted_by is None and second.minted_by is None
    assert calls_until_refused([first, second]) == 2
