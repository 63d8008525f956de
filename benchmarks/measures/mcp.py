"""What benchmarks/mcp.py measures: the same calls over the REST API, the MCP server and the
Python client, on one seeded scratch database. Imported once the script has set Django up."""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

from memsite_client import MemsiteClient

from benchmarks.corpora.prose import prose
from benchmarks.kit.cpushares import pids_with, process_cpu
from benchmarks.kit.harness import (
    MCP_HEADERS,
    Scratch,
    Stats,
    TablesReport,
    TitledTable,
    command,
    database_version,
    gunicorn,
    machine,
    mcp_server,
    millis_text,
)
from benchmarks.kit.httpclients import Answer, Connection
from memsite.spaces.principals import principal_rebuilt

RATIO_TARGET = 1.5  # MCP / API and client / API at p50, at most
ADDED_TARGET_MS = 5.0  # MCP - API and client - API at p50, at most
VIAS = ("API", "MCP", "client")
# A way's sample numbers start at its index times this (the untimed calls' at len(VIAS) times it):
# each way asks its own queries, so that no server answers one from the query embeddings it cached
# for another way (the API and the client share gunicorn) or for the untimed calls.
WAY_OFFSET = 1_000_000
FOLDER = "/references/bench"


def run(args: argparse.Namespace, scratch: Scratch, load: float) -> TablesReport:
    """Seeds the scratch database, serves it over the API and over MCP, and times the calls."""
    key, ids, queries = seed(args.documents)
    with ExitStack() as stack:
        api = stack.enter_context(gunicorn(scratch.env, workers=1, threads=args.threads))
        mcp = stack.enter_context(mcp_server(scratch.env)).port
        timings = time_calls(calls(ids, queries), Servers(api, mcp, key), args)
    return report_of(args, load, scratch, timings)


# --- the data and the servers -------------------------------------------------------------------


def seed(documents: int) -> tuple[str, list[str], list[list[str]]]:
    """An editor's token, and the ids of `documents` documents of seeded prose under FOLDER with
    queries of each one's words, one for each way of calling."""
    from django.contrib.auth import get_user_model

    from memory import selectors, services
    from memsite.spaces.logic import Role
    from memsite.spaces.models import Space
    from memsite.spaces.services import membership_set, token_create

    space = Space.objects.get(slug="default")
    user = get_user_model().objects.create_user("bench", "bench@example.com", None)
    membership_set(space=space, member=user, role=Role.EDITOR)
    references = selectors.node_internal_folder(space=space, name="references")
    folder = services.node_create(
        parent=references,
        type="folder",
        name=FOLDER.rsplit("/", 1)[1],
        by=principal_rebuilt(space=space, user_id=user.pk),
    )
    rng = random.Random(7)
    ids, queries = [], []
    for number in range(documents):
        text = prose(rng, 80)
        node = services.node_create(
            parent=folder,
            type="document",
            name=f"note-{number:05}.md",
            content=text.encode(),
            by=principal_rebuilt(space=space, user_id=user.pk),
        )
        ids.append(node.pk)
        words = text.split()
        queries.append([" ".join(words[start : start + 6]) for start in range(0, 6 * (len(VIAS) + 1), 6)])
    key = token_create(member=user, space=space, name="bench", role=Role.EDITOR).key
    return key, ids, queries


@dataclass(frozen=True)
class Servers:
    api: int
    mcp: int
    key: str

    def processes(self, via: str) -> list[int]:
        """The server's processes (gunicorn's master and worker; the MCP server), by the port
        their command lines name."""
        return pids_with(f"127.0.0.1:{self.api}" if via == "API" else f"mcp_serve\0--port\0{self.mcp}\0")


def cpu_seconds(pids: Sequence[int]) -> float:
    """The CPU time (user and system) the processes have used so far."""
    return sum(process_cpu(pid) or 0.0 for pid in pids)


@dataclass
class Timing:
    """One call through one server: each sample's milliseconds, and the servers' CPU seconds."""

    millis: list[float] = field(default_factory=list)
    cpu_s: float = 0.0

    @property
    def stats(self) -> Stats:
        return Stats.of(self.millis)

    @property
    def cpu_ms(self) -> float:
        return self.cpu_s * 1000 / len(self.millis)


# --- the calls ----------------------------------------------------------------------------------

Request = tuple[str, str, Any]  # method, url, JSON payload
Check = Callable[[Answer], bool]


@dataclass(frozen=True)
class Call:
    name: str
    api: Callable[[int], Request]  # sample number -> the API's request
    tool: str | None = None  # the MCP tool that answers the same, if one does
    arguments: Callable[[int], dict[str, Any]] = dict  # sample number -> the MCP tool's arguments
    client: Callable[[MemsiteClient, int], object] | None = None  # the client's verb sending the same request

    def vias(self) -> list[str]:
        return [via for via, has in zip(VIAS, (True, self.tool, self.client), strict=True) if has]


def calls(ids: Sequence[str], queries: Sequence[Sequence[str]]) -> list[Call]:
    def pick(items: Sequence[Any], number: int) -> Any:
        # A stride through the documents, not one hot row.
        return items[(number % WAY_OFFSET * 7919) % len(items)]

    def read(number: int) -> dict[str, Any]:
        return {"node": pick(ids, number)}

    def retrieve(number: int) -> dict[str, Any]:
        return {"query": pick(queries, number)[number // WAY_OFFSET], "k": 5}

    return [
        Call(
            "memory_read",
            lambda n: ("POST", "/api/tools/call/", {"name": "memory_read", "arguments": read(n)}),
            "memory_read",
            read,
        ),
        Call(
            "memory_retrieve",
            lambda n: ("POST", "/api/retrieve/", retrieve(n)),
            "memory_retrieve",
            retrieve,
            client=lambda client, n: client.retrieve(**retrieve(n)),
        ),
        Call(
            "node_get",
            lambda n: ("GET", f"/api/nodes/{pick(ids, n)}/", None),
            client=lambda client, n: client.get(pick(ids, n)),
        ),
    ]


def mcp_request(call: Call, number: int) -> Request:
    params = {"name": call.tool, "arguments": call.arguments(number)}
    return "POST", "/mcp", {"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": params}


def answered(answer: Answer, via_mcp: bool) -> bool:
    if answer.status != 200:
        return False
    return not via_mcp or answer.json()["result"]["isError"] is False


class Senders:
    """One keep-alive connection to each server, and the client on the API's: each sends a call's
    sample `number` and answers its milliseconds, checked."""

    def __init__(self, servers: Servers) -> None:
        token = {"Authorization": f"Token {servers.key}"}
        self.connections = {
            "API": Connection(servers.api, token, 60),
            "MCP": Connection(servers.mcp, token | MCP_HEADERS, 60),
        }
        self.client = MemsiteClient(f"http://127.0.0.1:{servers.api}", servers.key, retries=0)
        self.processes = {via: servers.processes("API" if via == "client" else via) for via in VIAS}

    def send(self, call: Call, via: str, number: int, *, timed: bool = True) -> float:
        number += (VIAS.index(via) if timed else len(VIAS)) * WAY_OFFSET
        if via == "client":
            assert call.client is not None
            started = time.perf_counter()
            call.client(self.client, number)  # raises on any refusal
            return (time.perf_counter() - started) * 1000
        method, url, payload = mcp_request(call, number) if via == "MCP" else call.api(number)
        answer = self.connections[via].send(method, url, payload)
        if not answered(answer, via == "MCP"):
            raise RuntimeError(f"{call.name} through the {via}: {answer.label} {answer.body[:300]!r}")
        return answer.ms

    def close(self) -> None:
        for connection in self.connections.values():
            connection.close()
        self.client.close()


def time_calls(calls: Sequence[Call], servers: Servers, args: argparse.Namespace) -> dict[tuple[str, str], Timing]:
    """Each call's milliseconds through each way it has, and the server's CPU time: in `rounds`,
    each round a share of the samples through each way in turn, the first taking turns."""
    senders = Senders(servers)
    timings: dict[tuple[str, str], Timing] = {}
    share = -(-args.samples // args.rounds)
    try:
        for call in calls:
            print(f"timing: {call.name}", file=sys.stderr)
            vias = call.vias()
            for via in vias:
                for number in range(args.warmup):  # each way's first calls
                    senders.send(call, via, number, timed=False)
            for round_number in range(args.rounds):
                turn = round_number % len(vias)
                numbers = range(round_number * share, min(args.samples, (round_number + 1) * share))
                for via in vias[turn:] + vias[:turn]:
                    timing = timings.setdefault((call.name, via), Timing())
                    cpu = cpu_seconds(senders.processes[via])
                    timing.millis += [senders.send(call, via, n) for n in numbers]
                    timing.cpu_s += cpu_seconds(senders.processes[via]) - cpu
    finally:
        senders.close()
    return timings


# --- the report ---------------------------------------------------------------------------------


def verdict(ratio: float, added: float) -> str:
    return "✓" if ratio <= RATIO_TARGET and added <= ADDED_TARGET_MS else "✗"


def comparison(via: str, timings: dict[tuple[str, str], Timing]) -> tuple[TitledTable, list[str]]:
    """The calls `via` answers against the bare REST call, one row each, and their verdicts."""
    table = TitledTable(
        f"{via} against the REST API, one call at a time (ms)",
        ("call", "n", "API p50", "p95", f"{via} p50", "p95", "ratio p50", "ratio p95", "added p50", "target")
        + ("CPU API", via),
    )
    targets = []
    for name in dict.fromkeys(name for name, way in timings if way == via):
        api, other = timings[(name, "API")].stats, timings[(name, via)].stats
        ratio_p50, ratio_p95, added = other.p50 / api.p50, other.p95 / api.p95, other.p50 - api.p50
        table.rows.append(
            (
                name,
                str(other.count),
                millis_text(api.p50),
                millis_text(api.p95),
                millis_text(other.p50),
                millis_text(other.p95),
                f"{ratio_p50:.2f}",
                f"{ratio_p95:.2f}",
                f"{added:+.2f}",
                verdict(ratio_p50, added),
                millis_text(timings[(name, "API")].cpu_ms),
                millis_text(timings[(name, via)].cpu_ms),
            )
        )
        targets.append(f"{name}: {via} / API at p50 = {ratio_p50:.2f}, {added:+.2f} ms {verdict(ratio_p50, added)}")
    return table, targets


def report_of(
    args: argparse.Namespace, load: float, scratch: Scratch, timings: dict[tuple[str, str], Timing]
) -> TablesReport:
    mcp, mcp_targets = comparison("MCP", timings)
    client, client_targets = comparison("client", timings)
    return TablesReport(
        title=f"MCP and the client against the REST API, {database_version(scratch.vendor)}, "
        f"{args.documents:,} documents",
        preamble=[f"{machine(load)}.", "", f"Command: `{command('mcp', args.database_url)}`"],
        tables=[mcp, client],
        targets=mcp_targets + client_targets,
        notes=notes(args),
    )


def notes(args: argparse.Namespace) -> list[str]:
    return [
        f"API: gunicorn gthread, 1 worker × {args.threads} threads; MCP: `manage.py mcp_serve` (uvicorn, "
        f"{args.threads} threads for the tools); both on 127.0.0.1, DEBUG off, offline LLM, an editor's token.",
        "memory_read: POST /api/tools/call/ against MCP's tools/call of the same tool and arguments; "
        "memory_retrieve: POST /api/retrieve/ (k = 5) against the tool. Each pair answers the same JSON (the "
        "call endpoint wraps it in {name, result}; MCP sends it as text and as structured content).",
        "The client: memsite_client.MemsiteClient on its own keep-alive connection to the same gunicorn, "
        "timed around the verb (retrieve; get of a node by id), parsing included, against the same request "
        "sent bare.",
        f"{args.samples} calls per call and server over one keep-alive connection each, after {args.warmup} "
        f"untimed, in {args.rounds} rounds alternating which server goes first. Target at p50: MCP / API "
        f"≤ {RATIO_TARGET} and MCP − API ≤ {ADDED_TARGET_MS:g} ms (p95 shown; on a shared machine it is noisy).",
        "CPU: the server processes' user and system time per call (from /proc, in ticks of 10 ms summed over "
        "the samples), which other work on the machine does not inflate as it does the latencies.",
    ]
