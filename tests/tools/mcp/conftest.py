"""The MCP server under uvicorn, in a thread of the test process so that it sees the test's
database, on a free loopback port; and the SDK's own client, over real HTTP."""

import socket
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from typing import TypeVar

import anyio
import httpx
import pytest
import uvicorn
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.factories import default_space
from tools.mcp.app import PATH, application

T = TypeVar("T")
START_TIMEOUT_S = 30


class ThreadServer(uvicorn.Server):
    """uvicorn, saying when it has started (its lifespan run, its socket served)."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = threading.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        try:
            await super().startup(sockets=sockets)
        finally:
            self.ready.set()


@pytest.fixture(scope="module")
def mcp_server() -> Iterator[str]:
    """The server's URL, for the module's tests: it touches the database only in requests,
    which the tests make while theirs is open."""
    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))
    server = ThreadServer(uvicorn.Config(application(), lifespan="on", log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listening]}, name="mcp-server", daemon=True)
    thread.start()
    try:
        assert server.ready.wait(START_TIMEOUT_S) and server.started, "the MCP server did not start"
        yield f"http://127.0.0.1:{listening.getsockname()[1]}{PATH}"
    finally:
        server.should_exit = True
        thread.join(START_TIMEOUT_S)
        listening.close()
    assert not thread.is_alive(), "the MCP server did not stop"


@pytest.fixture
def mcp_url(mcp_server, transactional_db) -> str:
    """The server's URL, for a test whose rows are committed, so that its threads see them."""
    default_space()  # made again, with its internal folders, after the test before emptied the tables
    return mcp_server


@asynccontextmanager
async def session_of(url: str, key: str) -> AsyncIterator[ClientSession]:
    """An initialized MCP session sending `key` as `Authorization: Bearer`."""
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=30) as http:
        async with streamable_http_client(url, http_client=http) as (read, write, _session_id):
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session


def with_session(url: str, key: str, work: Callable[[ClientSession], Awaitable[T]]) -> T:
    """`work(session)`'s answer, run on an event loop of its own: the test's ORM stays outside."""

    async def run() -> T:
        async with session_of(url, key) as session:
            return await work(session)

    try:
        return anyio.run(run)
    except BaseExceptionGroup as group:  # the client's task groups wrap what the work raised
        raise sole_error(group) from None


def sole_error(group: BaseExceptionGroup) -> BaseException:
    """The one exception a group of groups holds; the group itself when it holds more."""
    errors = group.exceptions
    if len(errors) != 1:
        return group
    return sole_error(errors[0]) if isinstance(errors[0], BaseExceptionGroup) else errors[0]
