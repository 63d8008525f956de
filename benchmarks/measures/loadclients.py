"""The clients of the load benchmark and the world they run against: the readers of both phases
(a folder's children and a node through the API, the dashboard's tree partial) and the writers
of phase 2 (documents created, searches and ticks started and polled until they end), each run in
a thread of its own and recording what it was told in `Writes`. Needs Django set up."""

from __future__ import annotations

import argparse
import random
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from django.conf import settings

from agents.brains.models import TickRun
from benchmarks.kit.httpclients import Connection, Tally, own_tally
from memory.models import Search

FINAL_SEARCH = {Search.Status.DONE, Search.Status.FAILED, Search.Status.CANCELLED}
CHILDREN_API = "GET /api/nodes/{id}/children/"
NODE_API = "GET /api/nodes/{id}/"
PARTIAL = "GET /memory/{id}/children/ (htmx)"
CREATE = "POST /api/nodes/ (a document)"
SEARCH_START = "POST /api/searches/"
SEARCH_POLL = "GET /api/searches/{id}/"
TICK = "POST /api/agents/{id}/tick/"
TICK_POLL = "GET /api/agents/{id}/brain/ticks/"
READS_SUFFIX = " (reads)"
READ_LABELS = (CHILDREN_API, NODE_API, PARTIAL)
MIXED_LABELS = (CREATE, SEARCH_START, SEARCH_POLL, TICK, TICK_POLL, *(label + READS_SUFFIX for label in READ_LABELS))

# Requests as gunicorn's access log names them, by operation.
ROUTES = (
    (re.compile(r"GET /api/nodes/memory_\w+/children/$"), CHILDREN_API),
    (re.compile(r"GET /api/nodes/memory_\w+/$"), NODE_API),
    (re.compile(r"GET /memory/memory_\w+/children/$"), PARTIAL),
    (re.compile(r"POST /api/nodes/$"), CREATE),
    (re.compile(r"POST /api/searches/$"), SEARCH_START),
    (re.compile(r"GET /api/searches/\d+/$"), SEARCH_POLL),
    (re.compile(r"POST /api/agents/\d+/tick/$"), TICK),
    (re.compile(r"GET /api/agents/\d+/brain/ticks/$"), TICK_POLL),
)


@dataclass
class World:
    folders: list[str]  # ids of folders with 10–50 children and of the 500-child journals
    nodes: list[str]  # ids of documents and folders
    questions: list[str]
    inboxes: list[str]
    tokens: list[str]
    sessions: list[str]
    agents: list[int]
    built: int

    def api_headers(self, user: int) -> dict[str, str]:
        """The headers of an API client, as user `user` (taken in turn)."""
        return {"Authorization": f"Token {self.tokens[user % len(self.tokens)]}", "Accept": "application/json"}


# --- the readers, in both phases ---------------------------------------------------------------


def reader(
    port: int, headers: dict[str, str], label: str, urls: Sequence[str], offset: int, deadline: float, timeout: float
) -> Callable[[dict[str, Tally]], None]:
    def client(mine: dict[str, Tally]) -> None:
        conn, tally, index = Connection(port, headers, timeout), own_tally(mine, label), offset
        while time.monotonic() < deadline:
            tally.add(conn.send("GET", urls[index % len(urls)]))
            index += 7  # coprime with the sample sizes' usual factors: connections spread over them
        conn.close()

    return client


def read_kinds(world: World, user: int) -> list[tuple[str, list[str], dict[str, str]]]:
    """The reads: a folder's children and a node through the API (with a token), and the
    children partial of the dashboard (with a session, as htmx asks for it); as `user`."""
    token = world.api_headers(user)
    session = {"Cookie": f"{settings.SESSION_COOKIE_NAME}={world.sessions[user]}", "HX-Request": "true"}
    return [
        (CHILDREN_API, [f"/api/nodes/{pk}/children/" for pk in world.folders], token),
        (NODE_API, [f"/api/nodes/{pk}/" for pk in world.nodes], token),
        (PARTIAL, [f"/memory/{pk}/children/" for pk in world.folders], session),
    ]


def readers(
    port: int, world: World, connections_: int, deadline: float, timeout: float, suffix: str = ""
) -> list[Callable[[dict[str, Tally]], None]]:
    """`connections_` readers, one in three on each kind of read, the users taken in turn."""
    clients = []
    for i in range(connections_):
        label, urls, headers = read_kinds(world, i % len(world.tokens))[i % 3]
        clients.append(reader(port, headers, label + suffix, urls, i * 13, deadline, timeout))
    return clients


# --- phase 2: the writers ------------------------------------------------------------------------


@dataclass
class Writes:
    """What the writers were told, to be checked against the rows afterwards."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    created: dict[str, str] = field(default_factory=dict)  # name -> id, for each 201
    unanswered: list[str] = field(default_factory=list)  # names whose create got no answer
    refused: list[str] = field(default_factory=list)  # names whose create got another status
    searches: list[int] = field(default_factory=list)  # ids of the 202s
    search_seen_ms: list[float] = field(default_factory=list)  # start to the poll that saw it end
    ticks: Counter[int] = field(default_factory=Counter)  # 202s per agent
    tick_seen_ms: list[float] = field(default_factory=list)


def creator(port: int, world: World, writes: Writes, number: int, deadline: float, args: argparse.Namespace):
    headers = world.api_headers(number)
    rng = random.Random(args.seed * 1000 + number)

    def client(mine: dict[str, Tally]) -> None:
        conn, tally, sequence = Connection(port, headers, args.timeout), own_tally(mine, CREATE), 0
        while time.monotonic() < deadline:
            sequence += 1
            name = f"load-{number:02d}-{sequence:06d}.md"
            answer = conn.send(
                "POST",
                "/api/nodes/",
                {
                    "parent": rng.choice(world.inboxes),
                    "type": "document",
                    "name": name,
                    "description": f"Written by load client {number}.",
                    "content": f"# Note {sequence}\n\nWritten under load by client {number}.\n",
                },
            )
            tally.add(answer)
            with writes.lock:
                if answer.status == 201:
                    writes.created[name] = answer.json()["id"]
                elif answer.failure:
                    writes.unanswered.append(name)
                else:
                    writes.refused.append(name)
        conn.close()

    return client


def searcher(port: int, world: World, writes: Writes, number: int, deadline: float, args: argparse.Namespace):
    headers = world.api_headers(number)
    rng = random.Random(args.seed * 2000 + number)

    def client(mine: dict[str, Tally]) -> None:
        conn = Connection(port, headers, args.timeout)
        start, poll = own_tally(mine, SEARCH_START), own_tally(mine, SEARCH_POLL)
        while time.monotonic() < deadline:
            started = time.monotonic()
            answer = conn.send(
                "POST",
                "/api/searches/",
                {
                    "questions": [rng.choice(world.questions)],
                    "budgets": {"max_llm_calls": args.search_calls},
                },
            )
            start.add(answer)
            if answer.status != 202:
                time.sleep(args.poll_interval)
                continue
            search_id = answer.json()["id"]
            with writes.lock:
                writes.searches.append(search_id)
            while time.monotonic() < deadline:
                time.sleep(args.poll_interval)
                polled = conn.send("GET", f"/api/searches/{search_id}/")
                poll.add(polled)
                if polled.ok and polled.json()["status"] in FINAL_SEARCH:
                    with writes.lock:
                        writes.search_seen_ms.append((time.monotonic() - started) * 1000)
                    break
        conn.close()

    return client


def ticker(
    port: int, world: World, writes: Writes, agent_id: int, number: int, deadline: float, args: argparse.Namespace
):
    """An agent's client: a tick, polled until it has ended, then the next. One tick at a time,
    so that each accepted tick must make a tick run (a second one queued while the first holds
    the brain would be skipped, by design)."""
    headers = world.api_headers(number)

    def client(mine: dict[str, Tally]) -> None:
        conn, request, poll = Connection(port, headers, args.timeout), own_tally(mine, TICK), own_tally(mine, TICK_POLL)
        while time.monotonic() < deadline:
            started = time.monotonic()
            answer = conn.send("POST", f"/api/agents/{agent_id}/tick/")
            request.add(answer)
            if answer.status != 202:
                time.sleep(args.poll_interval)
                continue
            after = answer.json()["after"]
            with writes.lock:
                writes.ticks[agent_id] += 1
            while time.monotonic() < deadline:
                time.sleep(args.poll_interval)
                polled = conn.send("GET", f"/api/agents/{agent_id}/brain/ticks/?page_size=1")
                poll.add(polled)
                runs = polled.json().get("results", []) if polled.ok else []
                if runs and runs[0]["number"] > after and runs[0]["status"] != TickRun.Status.RUNNING:
                    with writes.lock:
                        writes.tick_seen_ms.append((time.monotonic() - started) * 1000)
                    break
        conn.close()

    return client


def writers(
    args: argparse.Namespace, world: World, port: int, writes: Writes, deadline: float
) -> list[Callable[[dict[str, Tally]], None]]:
    """The clients of phase 2: creators, searchers, an agent's ticker each, and readers."""
    clients = [creator(port, world, writes, n, deadline, args) for n in range(args.create_connections)]
    clients += [searcher(port, world, writes, n, deadline, args) for n in range(args.search_clients)]
    clients += [ticker(port, world, writes, agent, n, deadline, args) for n, agent in enumerate(world.agents)]
    clients += readers(port, world, args.mixed_read_connections, deadline, args.timeout, suffix=READS_SUFFIX)
    return clients
