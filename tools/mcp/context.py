"""What the app hands the MCP handlers in each request's scope: the principal its token acts as,
and the threads Django's synchronous work (the ORM, the cache) runs in."""

from collections.abc import Callable
from functools import partial
from typing import TypeVar

import anyio
import anyio.to_thread
from django.db import close_old_connections
from starlette.types import Scope

from memsite.spaces.principals import Principal

PRINCIPAL = "memsite.principal"  # set by app.TokenGate once the token is accepted
THREADS = "memsite.threads"  # the lifespan's state: a CapacityLimiter of MEMSITE_MCP_THREADS

T = TypeVar("T")


def principal_of(scope: Scope) -> Principal:
    return scope[PRINCIPAL]


async def in_thread(scope: Scope, call: Callable[[], T]) -> T:
    """`call()` in a worker thread, one of the app's threads: the ORM refuses to run on the
    event loop, and a call waits for a thread rather than opening one more connection."""
    return await anyio.to_thread.run_sync(partial(_with_connections, call), limiter=scope["state"][THREADS])


def _with_connections(call: Callable[[], T]) -> T:
    # As Django's request cycle does around each request: a connection past its age, or broken,
    # is closed, and the next query opens a fresh one.
    close_old_connections()
    try:
        return call()
    finally:
        close_old_connections()
