"""POST /api/retrieve/: ranked passages, and a clear 4xx for bad input."""

import pytest
from rest_framework.test import APIClient

from memsite.llm.models import LLMCall
from memsite.llm.tokens import offline_counter
from memsite.spaces import services as space_services
from memsite.spaces.models import ApiToken
from memsite.spaces.principals import token_principal
from tests.factories import DocumentFactory, NodeFactory, default_space, token_for
from tests.llm.factories import make_call

pytestmark = pytest.mark.django_db
URL = "/api/retrieve/"


@pytest.fixture(autouse=True)
def full_text_only(settings):
    settings.MEMSITE_EMBEDDINGS = "off"


def test_retrieve_returns_ranked_passages_with_paths_and_offsets(api):
    folder = NodeFactory(name="logs", description="Logs")
    text = "Bo: morning.\n\nAna: I moved to Lisbon last spring for the new job."
    doc = DocumentFactory(parent=folder, name="session-3", description="Session 3", content=text.encode())
    response = api.post(URL, {"query": "Where did Ana move?", "k": 3}, format="json")
    assert response.status_code == 200, response.content
    first = response.json()["results"][0]
    assert first["node"] == doc.pk and first["path"] == "/swarmstar/logs/session-3"
    assert "Lisbon" in text[first["start"] : first["end"]]
    assert first["scores"]["fulltext"] > 0 and first["scores"]["vector"] is None
    assert first["kind"] == "content" and "Lisbon" in first["snippet"]


def test_start_limits_the_subtree(api):
    a, b = NodeFactory(), NodeFactory()
    DocumentFactory(parent=a, content=b"pelican")
    in_b = DocumentFactory(parent=b, content=b"pelican")
    response = api.post(URL, {"query": "pelican", "start": b.pk}, format="json")
    assert [hit["node"] for hit in response.json()["results"]] == [in_b.pk]


def test_per_node_caps_the_passages_of_one_node_and_looks_deeper_for_others(api):
    folder = NodeFactory()
    crowded = DocumentFactory(parent=folder, content="\n\n".join(f"pelican line {n}" for n in range(30)).encode())
    others = [DocumentFactory(parent=folder, content=f"a pelican {n} once".encode()) for n in range(4)]
    capped = api.post(URL, {"query": "pelican line", "k": 5, "per_node": 1}, format="json").json()["results"]
    assert [hit["node"] for hit in capped][0] == crowded.pk
    assert sorted(hit["node"] for hit in capped) == sorted([crowded.pk, *(doc.pk for doc in others)])
    two = api.post(URL, {"query": "pelican line", "k": 5, "per_node": 2}, format="json").json()["results"]
    assert [hit["node"] for hit in two].count(crowded.pk) == 2 and len(two) == 5
    uncapped = api.post(URL, {"query": "pelican line", "k": 5}, format="json").json()["results"]
    assert {hit["node"] for hit in uncapped} == {crowded.pk}


DIALOGUE = (
    "Ana: Where should we go this summer?\n\n"
    "Bo: Lisbon, for the tiles and the fado.\n\n"
    "Ana: Sounds good, book it.\n\n"
    "Bo: Done, two weeks in July."
)
QUESTION, REPLY, AFTER, LAST = DIALOGUE.split("\n\n")


def test_expand_tokens_gives_a_hit_the_turn_before_then_after_within_the_budget(api):
    doc = DocumentFactory(name="trip", description="Summer", content=DIALOGUE.encode())
    count = offline_counter().count
    budget = count(REPLY) + count("\n\n") + count(QUESTION)  # the question fits, the turn after no more
    body = {"query": "tiles and fado", "k": 1}

    plain = api.post(URL, body, format="json").json()["results"]
    asked = api.post(URL, {**body, "expand_tokens": budget}, format="json").json()["results"]
    roomier = api.post(URL, {**body, "expand_tokens": budget + 30}, format="json").json()["results"]

    assert plain[0]["node"] == doc.pk and plain[0]["expanded"] is None
    expanded = asked[0]["expanded"]
    assert expanded["text"] == f"{QUESTION}\n\n{REPLY}" == DIALOGUE[expanded["start"] : expanded["end"]]
    assert expanded["tokens"] == budget and {**asked[0], "expanded": None} == plain[0]
    wider = roomier[0]["expanded"]
    assert wider["text"] == DIALOGUE[wider["start"] : wider["end"]] == "\n\n".join([QUESTION, REPLY, AFTER, LAST])
    assert wider["tokens"] <= budget + 30


def test_a_label_hit_or_a_budget_below_the_hit_s_own_tokens_gives_no_more(api):
    DocumentFactory(name="pelican-notes", description="Birds", content=DIALOGUE.encode())
    labels = api.post(URL, {"query": "pelican", "expand_tokens": 500}, format="json").json()["results"]
    tight = api.post(URL, {"query": "tiles and fado", "k": 1, "expand_tokens": 1}, format="json").json()["results"]

    assert [(hit["kind"], hit["expanded"]) for hit in labels] == [("label", None)]
    expanded = tight[0]["expanded"]
    assert (expanded["start"], expanded["end"]) == (tight[0]["start"], tight[0]["end"])
    assert expanded["text"] == REPLY and expanded["tokens"] == offline_counter().count(REPLY)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"query": ""}, "query"),
        ({"query": "   "}, "query"),
        ({"query": "x", "k": 0}, "k"),
        ({"query": "x", "k": 101}, "k"),
        ({"query": "x", "k": "5"}, "k"),
        ({"query": "x", "types": ["nonsense"]}, "types"),
        ({"query": "x", "per_node": 0}, "per_node"),
        ({"query": "x", "per_node": 101}, "per_node"),
        ({"query": "x", "expand_tokens": 0}, "expand_tokens"),
        ({"query": "x", "expand_tokens": 4_001}, "expand_tokens"),
        ({"query": "x", "expand_tokens": "100"}, "expand_tokens"),
        ({"query": "x", "expand_tokens": 1.5}, "expand_tokens"),
        ({"query": "x", "extra": 1}, "extra"),
        ({}, "query"),
        ({"query": "x", "after": "May 2023"}, "after"),
        ({"query": "x", "after": "2023-02-30"}, "after"),
        ({"query": "x", "before": 20230508}, "before"),
        ({"query": "x", "after": "2023-05-09", "before": "2023-05-08"}, "before"),
    ],
)
def test_bad_input_is_a_400_naming_the_field(api, body, field):
    response = api.post(URL, body, format="json")
    assert response.status_code == 400
    assert field in response.content.decode()


def test_a_window_keeps_the_passages_dated_in_it_and_each_hit_says_its_date(api):
    folder = NodeFactory(name="diary", description="")
    for day in ("2023-05-07", "2023-05-08", "2023-05-09"):
        DocumentFactory(parent=folder, name=day, description="", content=f"Date: {day}\nThe pelican, seen.".encode())
    DocumentFactory(parent=folder, description="", content=b"A pelican, seen on no day in particular.")

    windowed = api.post(URL, {"query": "pelican", "after": "2023-05-08", "before": "2023-05-09"}, format="json")
    assert windowed.status_code == 200, windowed.content
    assert sorted(hit["date"] for hit in windowed.json()["results"]) == ["2023-05-08", "2023-05-09"]
    everything = api.post(URL, {"query": "pelican"}, format="json").json()["results"]
    assert sorted(hit["date"] or "none" for hit in everything) == ["2023-05-07", "2023-05-08", "2023-05-09", "none"]


def test_an_unknown_start_node_is_a_404(api):
    response = api.post(URL, {"query": "x", "start": "memory_" + "0" * 32}, format="json")
    assert response.status_code == 404
    assert "memory_" in response.json()["detail"]


def test_retrieve_needs_authentication(client):
    assert client.post(URL, {"query": "x"}, content_type="application/json").status_code in (401, 403)


@pytest.fixture
def server_embeddings(settings, openai_gateway, monkeypatch):
    settings.MEMSITE_EMBEDDINGS = "server"
    monkeypatch.setattr("memory.index.retrieve.query_cache", {})
    return openai_gateway


def test_the_query_s_embedding_is_charged_to_the_caller_and_token_in_its_space(server_embeddings, user):
    other = space_services.space_create(user=user, slug="other", name="Other")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_for(user, space=other)}")

    assert client.post(URL, {"query": "greyhound"}, format="json").status_code == 200

    [call] = LLMCall.objects.filter(purpose="embed")
    assert (call.space_id, call.user_id, call.token_id) == (other.pk, user.pk, ApiToken.objects.get(space=other).pk)


def test_a_token_whose_budget_is_spent_retrieves_by_full_text(server_embeddings, user):
    DocumentFactory(content=b"a greyhound")
    made = space_services.token_create(member=user, space=default_space(), name="node", llm_daily_calls=1)
    make_call(by=token_principal(made.token))  # the token's one call today
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {made.key}")

    response = client.post(URL, {"query": "greyhound"}, format="json")

    assert response.status_code == 200 and response.json()["results"]
    assert all(hit["scores"]["vector"] is None for hit in response.json()["results"])
    assert not server_embeddings.requests and not LLMCall.objects.filter(purpose="embed").exists()
