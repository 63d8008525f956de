"""Retries on 429 and 503 after Retry-After, bounded in count and wait, and the errors of
answers no server in the suite gives (5xx pages, lost connections): an httpx MockTransport
plays the server, and the sleeps are recorded, never slept."""

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime

import httpx
import pytest
from memsite_client import (
    AsyncMemsiteClient,
    ConnectionFailed,
    MemsiteClient,
    MemsiteError,
    RateLimited,
    ServerError,
    Unavailable,
)
from memsite_client.client import api_root
from memsite_client.errors import message_of
from memsite_client.retry import retry_after_seconds

from tests.client.conftest import FakeTime

ROOTS = [
    {
        "id": "memory_" + "0" * 32,
        "name": "user",
        "type": "internal_folder",
        "is_folder": True,
        "description": "The user's documents.",
        "context": {},
        "parent": None,
        "path": "/user",
        "child_count": 0,
        "content_size": None,
        "created_at": "2026-01-01T00:00:00Z",
        "updated_at": "2026-01-01T00:00:00Z",
        "version": 1,
        "created_by": None,
        "mode": None,
    }
]
BUSY = {"detail": "Too many searches at once: 8 of 8.", "quota": "MEMSITE_QUOTA_SEARCHES", "cap": 8, "in_flight": 8}


class Server:
    """Answers each request with the next of `answers`, noting what it was sent."""

    def __init__(self, *answers: httpx.Response) -> None:
        self.answers = list(answers)
        self.sent: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.sent.append(request)
        return self.answers.pop(0)


def refused(status: int, retry_after: str | None = None, body: dict | None = None) -> httpx.Response:
    headers = {"Retry-After": retry_after} if retry_after is not None else {}
    return httpx.Response(status, json=body or {"detail": "Busy."}, headers=headers)


def sync_client(server: Server, time: FakeTime, **options) -> MemsiteClient:
    return MemsiteClient(
        "http://memsite.test", "ms_key", transport=httpx.MockTransport(server), sleep=time.sleep, **options
    )


def async_run(server: Server, time: FakeTime, call: Callable, **options):
    async def run():
        transport = httpx.MockTransport(server)
        async with AsyncMemsiteClient(
            "http://memsite.test", "ms_key", transport=transport, sleep=time.asleep, **options
        ) as memsite:
            return await call(memsite)

    return asyncio.run(run())


@pytest.fixture
def time() -> FakeTime:
    return FakeTime()


def test_a_429_is_sent_again_after_its_retry_after(time):
    server = Server(refused(429, "2"), refused(503, "1"), httpx.Response(200, json=ROOTS))

    roots = sync_client(server, time).roots()

    assert [root.path for root in roots] == ["/user"] and time.sleeps == [2.0, 1.0]
    assert [request.url.path for request in server.sent] == ["/api/nodes/roots/"] * 3
    assert server.sent[0].headers["Authorization"] == "Bearer ms_key"


def test_a_refused_post_is_sent_again_whole(time):
    server = Server(refused(429, "3", BUSY), httpx.Response(200, json={"query": "port", "results": []}))

    assert sync_client(server, time).retrieve("port", k=3) == []

    assert time.sleeps == [3.0]
    assert [request.content for request in server.sent] == [b'{"query":"port","k":3}'] * 2


def test_retries_are_bounded_and_the_last_refusal_is_raised_with_its_message(time):
    server = Server(*[refused(429, "1", BUSY) for _ in range(3)])

    with pytest.raises(RateLimited) as limited:
        sync_client(server, time, retries=2).roots()

    assert time.sleeps == [1.0, 1.0] and len(server.sent) == 3
    assert (limited.value.status, limited.value.message, limited.value.retry_after) == (429, BUSY["detail"], 1.0)
    assert limited.value.body["cap"] == 8


def test_a_retry_after_longer_than_the_client_waits_is_raised_at_once(time):
    server = Server(refused(429, "3600", BUSY))

    with pytest.raises(RateLimited) as limited:
        sync_client(server, time, max_retry_wait=60).roots()

    assert time.sleeps == [] and limited.value.retry_after == 3600.0


def test_a_503_without_retry_after_backs_off(time):
    server = Server(refused(503), refused(503), refused(503))

    with pytest.raises(Unavailable):
        sync_client(server, time, retries=2).roots()

    assert time.sleeps == [1.0, 2.0]


def test_other_refusals_are_not_sent_again(time):
    server = Server(httpx.Response(500, text="<h1>Server Error (500)</h1>"))

    with pytest.raises(ServerError) as failed:
        sync_client(server, time).roots()

    assert failed.value.message == "<h1>Server Error (500)</h1>" and failed.value.body is None
    assert time.sleeps == [] and len(server.sent) == 1


def test_a_redirect_is_not_followed_and_names_where_it_goes(time):
    server = Server(httpx.Response(301, headers={"Location": "https://memsite.test/api/nodes/roots/"}))

    with pytest.raises(MemsiteError) as moved:
        sync_client(server, time).roots()

    assert moved.value.status == 301 and len(server.sent) == 1
    assert (
        moved.value.message
        == "The server redirects to https://memsite.test/api/nodes/roots/: give the client that address."
    )


def test_a_lost_connection_is_a_memsite_error():
    def unreachable(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("Connection refused", request=request)

    memsite = MemsiteClient("http://memsite.test/api/", "ms_key", transport=httpx.MockTransport(unreachable))
    with pytest.raises(ConnectionFailed) as lost:
        memsite.roots()
    assert "Connection refused" in lost.value.message and lost.value.status is None


def test_the_async_client_retries_the_same_way(time):
    server = Server(refused(429, "2"), refused(503, "1"), httpx.Response(200, json=ROOTS))

    roots = async_run(server, time, lambda memsite: memsite.roots())

    assert [root.path for root in roots] == ["/user"] and time.sleeps == [2.0, 1.0]

    server = Server(*[refused(429, "1", BUSY) for _ in range(2)])
    with pytest.raises(RateLimited) as limited:
        async_run(server, time, lambda memsite: memsite.roots(), retries=1)
    assert limited.value.message == BUSY["detail"] and time.sleeps == [2.0, 1.0, 1.0]


def test_retry_after_is_seconds_or_an_http_date():
    now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
    assert retry_after_seconds("7") == 7.0
    assert retry_after_seconds("Thu, 01 Jan 2026 12:00:30 GMT", now=now) == 30.0
    assert retry_after_seconds("Thu, 01 Jan 2026 11:00:00 GMT", now=now) == 0.0  # already past
    assert retry_after_seconds("soon") is None and retry_after_seconds(None) is None


def test_the_api_root_is_found_with_or_without_api():
    assert (
        api_root("http://memsite.test:8000")
        == api_root("http://memsite.test:8000/api/")
        == "http://memsite.test:8000/api/"
    )


def test_a_validation_errors_message_names_each_field():
    body = {"questions": ["This field is required."], "budgets": {"max_tokens": ["Must be at least 1."]}}
    assert message_of(body) == "questions: This field is required.; budgets.max_tokens: Must be at least 1."
    assert message_of({"detail": "No such node.", "more": 1}) == "No such node."
