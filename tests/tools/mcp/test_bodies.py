"""The MCP gate's bounds on request bodies, over a raw loopback connection: each is refused
from its head, before the body is read, when it is over what its caller may send or past the
bytes the process may hold at once; one that stops arriving is a 408; JSON nested deeper than
the API reads is a 400, as the API answers it."""

import json
import socket
from urllib.parse import urlsplit

import httpx
import pytest

from memsite.api import MAX_JSON_DEPTH, NESTED_TOO_DEEPLY, json_body_limit
from memsite.spaces.logic import Role
from tests.factories import UserFactory, token_for
from tools.mcp.app import MIN_HELD_BYTES, SMALL_BODY_BYTES, BodiesBusy, BodyBudget

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}},
}
HEAD = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


class Answer:
    def __init__(self, status: int, headers: dict[str, str], body: bytes):
        self.status = status
        self.headers = headers
        self.body = body

    def detail(self) -> str:
        return json.loads(self.body)["detail"]


class HeldRequest:
    """A POST whose head is sent with `Expect: 100-continue` and whose body is not: the server
    says `100 Continue` only once it reads the body, so the first answer tells whether it was
    refused from its head, and, when it was not, that the server holds it."""

    def __init__(self, url: str, key: str, length: int):
        address = urlsplit(url)
        self.connection = socket.create_connection((address.hostname, address.port), timeout=30)
        self.reader = self.connection.makefile("rb")
        headers = {"Host": address.netloc, "Authorization": f"Token {key}", "Content-Length": str(length), **HEAD}
        head = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        self.connection.sendall(f"POST {address.path} HTTP/1.1\r\nExpect: 100-continue\r\n{head}\r\n".encode())
        self.first = self.answer()

    def answer(self) -> Answer:
        status = int(self.reader.readline().split()[1])
        headers = {}
        while (line := self.reader.readline().strip()) != b"":
            name, value = line.decode("latin-1").split(":", 1)
            headers[name.strip().lower()] = value.strip()
        return Answer(status, headers, self.reader.read(int(headers.get("content-length", 0))))

    def send(self, body: bytes) -> Answer:
        self.connection.sendall(body)
        return self.answer()

    def close(self) -> None:
        self.reader.close()
        self.connection.close()


@pytest.fixture
def held(mcp_url):
    """HeldRequest(key, length)s, each closed after the test."""
    requests: list[HeldRequest] = []

    def hold(key: str, length: int) -> HeldRequest:
        requests.append(HeldRequest(mcp_url, key, length))
        return requests[-1]

    yield hold
    for request in requests:
        request.close()


def padded(length: int) -> bytes:
    """An initialize request of exactly `length` bytes: JSON takes the spaces after it."""
    body = json.dumps(INITIALIZE).encode()
    return body + b" " * (length - len(body))


def test_a_readers_body_over_a_mebibyte_is_a_413_before_it_is_read(held, user):
    refused = held(token_for(user, role=Role.READER), SMALL_BODY_BYTES + 1)
    assert (refused.first.status, refused.first.detail()) == (
        413,
        f"The request body is {SMALL_BODY_BYTES + 1} bytes; the limit is {SMALL_BODY_BYTES} bytes.",
    )
    # A call that writes may carry a node's content, as POST /api/tools/call/ takes it.
    assert held(token_for(user), SMALL_BODY_BYTES + 1).first.status == 100


def test_bodies_past_what_the_process_holds_are_a_429_before_they_are_read(held, user, settings):
    settings.MEMSITE_MAX_CONTENT_BYTES = 1000
    settings.MEMSITE_MCP_LARGE_BODIES = 1
    key = token_for(user)
    largest = held(key, json_body_limit())
    assert largest.first.status == 100  # held, and read

    refused = held(key, SMALL_BODY_BYTES + 1)
    assert (refused.first.status, refused.first.headers["retry-after"]) == (429, "1")
    assert refused.first.detail().startswith(f"Busy: this MCP server holds {json_body_limit():,} bytes")
    # Small calls have bytes of their own, which no write's body takes.
    assert held(token_for(user, role=Role.READER), 100).first.status == 100

    assert largest.send(padded(json_body_limit())).status == 200


def test_a_body_that_stops_arriving_is_a_408(held, user, settings):
    settings.MEMSITE_BODY_TIMEOUT_S = 1
    stalled = held(token_for(user), 100)
    assert stalled.first.status == 100
    answer = stalled.send(b'{"jsonrpc"')
    assert (answer.status, answer.detail()) == (408, "The request body stopped arriving: nothing came for 1 s.")


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 6_000])
def test_json_nested_too_deeply_is_a_400_as_the_api_answers_it(mcp_url, user, depth):
    nested = json.dumps({**INITIALIZE, "params": {**INITIALIZE["params"], "capabilities": {"x": "@"}}})
    body = nested.replace('"@"', "[" * depth + "]" * depth)
    answer = httpx.post(mcp_url, headers={**HEAD, "Authorization": f"Token {token_for(user)}"}, content=body)
    assert (answer.status_code, answer.json()) == (400, {"detail": NESTED_TOO_DEEPLY})


def test_the_budget_counts_each_body_as_at_least_what_handling_it_costs():
    budget = BodyBudget(lambda: 3 * MIN_HELD_BYTES)
    small = budget.take(10)
    large = budget.take(2 * MIN_HELD_BYTES)
    assert (small, large, budget.held) == (MIN_HELD_BYTES, 2 * MIN_HELD_BYTES, 3 * MIN_HELD_BYTES)
    with pytest.raises(BodiesBusy):
        budget.take(0)
    budget.give_back(small)
    assert budget.take(0) == MIN_HELD_BYTES


def test_one_user_past_half_the_threads_is_a_429_and_others_are_served(held, user, settings):
    settings.MEMSITE_MCP_THREADS = 4  # two calls of one user's at once
    first, second = held(token_for(user), 400), held(token_for(user), 400)
    assert (first.first.status, second.first.status) == (100, 100)

    # Another of the user's tokens counts as the user: refused from its head, before any thread.
    refused = held(token_for(user), 400)
    assert (refused.first.status, refused.first.headers["retry-after"]) == (429, "1")
    assert refused.first.detail().startswith("Too many requests at once: 2 of yours are already under way here.")
    assert held(token_for(UserFactory()), 400).first.status == 100

    assert first.send(padded(400)).status == 200
    assert held(token_for(user), 400).first.status == 100  # the answered call gave its slot back
