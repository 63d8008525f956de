"""One caller cannot take every web thread: at most MEMSITE_USER_CONCURRENCY of a user's (or an
address's) requests are under way at once in a process, pages and API alike; the next is a 429
with Retry-After, while other callers and the health check are served. Slots come back when a
request ends, whether it failed or streamed its answer."""

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest
from django.db import connection
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.test import Client
from django.urls import path
from rest_framework.response import Response
from rest_framework.test import APIClient
from rest_framework.views import APIView

from memsite import urls as project_urls
from memsite.concurrency import in_flight
from tests.factories import UserFactory, token_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.urls(__name__)]

LIMIT = 2
WAIT_S = 10  # the most a held request waits for the test to let it go


class Gate:
    """Holds the requests sent to /held/ until it opens; counts those it holds."""

    def __init__(self) -> None:
        self.open = threading.Event()
        self.arrived = threading.Semaphore(0)

    def pass_through(self) -> None:
        self.arrived.release()
        assert self.open.wait(WAIT_S), "the test never let the request go"

    def wait_for(self, count: int) -> None:
        for _ in range(count):
            assert self.arrived.acquire(timeout=WAIT_S), "a held request never arrived"


gate = Gate()


def held_page(request: HttpRequest) -> HttpResponse:
    if "hold" in request.GET:
        gate.pass_through()
    if "fail" in request.GET:
        raise RuntimeError("the view failed")
    if "stream" in request.GET:
        return StreamingHttpResponse(iter([b"one", b"two"]))
    return HttpResponse("served")


class HeldApi(APIView):
    def get(self, request) -> Response:
        if "hold" in request.GET:
            gate.pass_through()
        return Response({"served": True})


urlpatterns = [path("held/", held_page), path("api/held/", HeldApi.as_view()), *project_urls.urlpatterns]


@pytest.fixture(autouse=True)
def limit(settings) -> None:
    global gate
    settings.MEMSITE_USER_CONCURRENCY = LIMIT
    gate = Gate()
    yield
    gate.open.set()  # a test that failed midway lets its held requests end


def page_client(user=None, address: str = "127.0.0.1") -> Client:
    client = Client(REMOTE_ADDR=address, raise_request_exception=False)
    if user is not None:
        client.force_login(user)
    return client


def api_client(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_for(user)}")
    return client


def _answered(send: Callable[[], HttpResponse], statuses: list[int]) -> None:
    try:
        statuses.append(send().status_code)
    finally:
        connection.close()  # the thread's own connection


@contextmanager
def held(sends: list[Callable[[], HttpResponse]]) -> Iterator[list[int]]:
    """Each of `sends` under way in a thread of its own, held in the view, until the block
    ends; then the statuses they were answered with."""
    statuses: list[int] = []
    threads = [threading.Thread(target=_answered, args=(send, statuses)) for send in sends]
    for thread in threads:
        thread.start()
    try:
        gate.wait_for(len(sends))
        yield statuses
    finally:
        gate.open.set()
        for thread in threads:
            thread.join(WAIT_S)
    assert statuses == [200] * len(sends)


def test_a_users_page_past_the_limit_is_429_while_others_are_served():
    ada, bob = UserFactory(username="ada"), UserFactory(username="bob")
    clients = [page_client(ada) for _ in range(LIMIT + 1)]

    with held([lambda client=client: client.get("/held/?hold") for client in clients[:LIMIT]]):
        refused = clients[LIMIT].get("/held/")
        refused_poll = clients[LIMIT].get("/held/", HTTP_HX_REQUEST="true")
        assert page_client(bob).get("/held/").status_code == 200
        assert page_client(address="10.0.0.9").get("/held/").status_code == 200
        assert clients[LIMIT].get("/healthz").status_code == 200

    assert refused.status_code == 429
    assert refused["Retry-After"] == "1"
    assert refused.content.decode().startswith(f"Too many requests at once: {LIMIT} of yours")
    # An htmx request's target keeps what it showed; the message goes to the layout's banner.
    assert refused_poll.status_code == 429 and refused_poll["HX-Reswap"] == "none"
    assert 'id="outage"' in refused_poll.content.decode()
    assert clients[LIMIT].get("/held/").status_code == 200  # the slots came back


def test_a_token_and_a_session_of_one_user_share_the_limit():
    ada, bob = UserFactory(username="ada"), UserFactory(username="bob")
    ada_api, ada_page, bob_api = api_client(ada), page_client(ada), api_client(bob)
    held_api, held_page = api_client(ada), page_client(ada)

    with held([lambda: held_api.get("/api/held/?hold"), lambda: held_page.get("/held/?hold")]):
        refused = ada_api.get("/api/held/")
        refused_page = ada_page.get("/held/")
        assert bob_api.get("/api/held/").status_code == 200

    assert refused.status_code == 429 and refused_page.status_code == 429
    assert refused["Retry-After"] == "1"
    assert refused.json()["detail"].startswith("Too many requests at once")
    assert ada_api.get("/api/held/").status_code == 200


def test_requests_without_a_login_are_limited_by_address():
    with held([lambda: page_client(address="10.0.0.1").get("/held/?hold") for _ in range(LIMIT)]):
        refused = page_client(address="10.0.0.1").get("/held/")
        assert page_client(address="10.0.0.2").get("/held/").status_code == 200

    assert refused.status_code == 429


def test_a_failed_request_gives_its_slot_back():
    ada = UserFactory(username="ada")
    client = page_client(ada)

    for _ in range(LIMIT):
        assert client.get("/held/?fail").status_code == 500

    assert in_flight(f"user:{ada.pk}") == 0
    others = [page_client(ada) for _ in range(LIMIT)]
    with held([lambda other=other: other.get("/held/?hold") for other in others]):
        assert client.get("/held/").status_code == 429


def test_a_streamed_answer_holds_its_slot_until_it_is_closed():
    ada = UserFactory(username="ada")
    client = page_client(ada)

    response = client.get("/held/?stream")
    assert in_flight(f"user:{ada.pk}") == 1
    assert response.getvalue() == b"onetwo"
    response.close()

    assert in_flight(f"user:{ada.pk}") == 0
