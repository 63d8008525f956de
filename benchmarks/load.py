"""Does memsite hold up under load? gunicorn and two Celery worker processes on PostgreSQL and
Redis, with the LLM behind an OpenAI-compatible server of its own (the fake server of the tests,
answering with memsite's offline heuristics), all on loopback:

1. reads: 64 keep-alive connections for 60 s over the tree API (a folder's children, a node)
   and the dashboard's tree partial (`/memory/{id}/children/` as htmx asks for it, with a
   logged-in session);
2. mixed writes for 60 s: documents created through the API, searches started through the API
   and run by the workers against the LLM server, ticks requested through the API, with a few
   read connections going on;
3. the queue drained (bounded), then the rows counted: every 201 node exists once, every
   accepted search ended, every accepted tick made one tick run, nothing left running.

Prints throughput, p50/p95/p99 and errors per operation and the checks (also written to
benchmarks/results/load-postgresql.md).

    python benchmarks/load.py
    python benchmarks/load.py --database-url postgres://postgres@127.0.0.1:5432/memsite_loadbench \\
        --redis-url redis://127.0.0.1:6379/7
    python benchmarks/load.py --nodes 2000 --read-seconds 5 --mixed-seconds 5   # smoke test

The database is created fresh and dropped at the end (--keep keeps it); its name must contain
'bench'. The Redis database must be empty and not 0: the workers consume its default queue, and
the keys the run made are deleted at the end. MEMSITE_API_RATE is raised for the run (--api-rate):
its default, 1,200 requests a minute per user, is far below what a load test sends."""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import random
import re
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.harness import at_least, run_on_services, services_parser

# --- the command ------------------------------------------------------------------------------

DEFAULT_DATABASE = "postgres://postgres@127.0.0.1:5432/memsite_loadbench"
DEFAULT_REDIS = "redis://127.0.0.1:6379/7"


def parse_args() -> argparse.Namespace:
    parser = services_parser(__doc__, database=DEFAULT_DATABASE, redis=DEFAULT_REDIS)
    parser.add_argument("--nodes", type=at_least(100), default=5_000, help="tree size (default 5,000)")
    parser.add_argument(
        "--users", type=at_least(1), default=8, help="users, each with a token and a session (default 8)"
    )
    parser.add_argument(
        "--agents", type=at_least(1), default=8, help="agents with brains; each ticks one tick at a time (default 8)"
    )
    parser.add_argument(
        "--brain-fill",
        type=float,
        default=0.01,
        help="how full each agent's brain is, as a fraction of every cap (default 0.01)",
    )
    parser.add_argument(
        "--api-rate", default="100000/min", help="MEMSITE_API_RATE for the run (default 100000/min per user)"
    )
    parser.add_argument("--web-workers", type=at_least(1), default=3, help="gunicorn workers (default 3)")
    parser.add_argument("--web-threads", type=at_least(1), default=4, help="threads per gunicorn worker (default 4)")
    parser.add_argument("--celery-workers", type=at_least(1), default=2, help="Celery worker processes (default 2)")
    parser.add_argument(
        "--celery-threads", type=at_least(1), default=4, help="threads of each Celery worker's pool (default 4)"
    )
    parser.add_argument(
        "--llm-delay", type=float, default=0.05, help="seconds the LLM server waits before each reply (default 0.05)"
    )
    add_phase_arguments(parser)
    parser.add_argument("--timeout", type=float, default=30, help="client timeout per request, seconds (default 30)")
    parser.add_argument("--seed", type=int, default=7, help="seed of the samples (default 7)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    return parser.parse_args()


def add_phase_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--read-seconds", type=float, default=60, help="phase 1 duration (default 60)")
    parser.add_argument("--read-connections", type=at_least(3), default=64, help="phase 1 connections (default 64)")
    parser.add_argument("--mixed-seconds", type=float, default=60, help="phase 2 duration (default 60)")
    parser.add_argument(
        "--create-connections",
        type=at_least(0),
        default=4,
        help="phase 2: connections creating documents back to back (default 4)",
    )
    parser.add_argument(
        "--search-clients",
        type=at_least(0),
        default=4,
        help="phase 2: clients each starting a search and polling it until it ends (default 4)",
    )
    parser.add_argument(
        "--search-calls", type=at_least(1), default=12, help="phase 2: max_llm_calls of each search (default 12)"
    )
    parser.add_argument(
        "--mixed-read-connections",
        type=at_least(0),
        default=8,
        help="phase 2: read connections going on meanwhile (default 8)",
    )
    parser.add_argument("--poll-interval", type=float, default=0.25, help="seconds between status polls (default 0.25)")
    parser.add_argument(
        "--drain-seconds",
        type=float,
        default=180,
        help="longest wait for the queued work to end after phase 2 (default 180)",
    )


def main() -> None:
    args = parse_args()
    run_on_services("load", args, {"MEMSITE_API_RATE": args.api_rate})


if __name__ == "__main__":
    main()  # which ran the copy of this file imported once Django was set up
    sys.exit()


# The project: importable only once scratch_database has set Django up.
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection, connections
from django.test import Client
from django.utils import timezone

from agents.brains.models import Brain, TickRun
from agents.context import services as agent_services
from benchmarks import brainfill, treeshape
from benchmarks.harness import (
    Scratch,
    Table,
    Workers,
    celery_workers,
    command,
    database_version,
    gunicorn,
    millis_text,
    percentiles,
)
from benchmarks.offlinellm import llm_server
from benchmarks.treeshape import build_chunks
from memory import selectors, services
from memory.models import Node, Search
from memsite.llm.models import LLMCall
from memsite.spaces.logic import Role
from memsite.spaces.selectors import space_default
from memsite.spaces.services import membership_set, token_create

INBOXES = 4  # folders the documents of phase 2 are created in, shared by every connection
QUIET_S = 10  # the queue empty and nothing running this long: what has not ended never will
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

QUOTAS = (
    "MEMSITE_QUOTA_SEARCHES",
    "MEMSITE_QUOTA_TICKS",
    "MEMSITE_QUOTA_TICKING_AGENTS",
    "MEMSITE_QUOTA_GRAPH_OPS",
    "MEMSITE_LLM_DAILY_CALLS",
    "MEMSITE_LLM_DAILY_TOKENS",
)


# --- the run -------------------------------------------------------------------------------------


def run(args: argparse.Namespace, scratch: Scratch) -> LoadReport:
    load_at_start = os.getloadavg()[0]
    redis = redis_client(args.redis_url)
    if redis.dbsize():
        raise SystemExit(
            f"Redis database {args.redis_url} holds {redis.dbsize()} keys: name an empty one (a run killed before "
            "its end leaves its keys behind; `redis-cli -n N --scan` lists them)."
        )
    world = seed(args)
    report = LoadReport(title=f"Load on {database_version(scratch.vendor)} and Redis, {world.built:,} nodes")
    logs = Path(tempfile.mkdtemp(prefix="memsite-loadbench-"))
    access = AccessLog(logs / "access.log")
    try:
        with llm_server(args.llm_delay) as (llm_url, llm_pid):
            env = services_env(args, scratch, llm_url, access)
            options = ("--pool", "threads", "--concurrency", str(args.celery_threads))  # the Procfile's pool
            with (
                gunicorn(env, workers=args.web_workers, threads=args.web_threads) as port,
                celery_workers(env, count=args.celery_workers, name="loadbench", options=options, logs=logs) as workers,
            ):
                warm_up(args, world, port)
                cpu = CpuMeter(
                    port=port, workers=workers, llm_pid=llm_pid, redis_pid=int(redis.info("server")["process_id"])
                )
                read_phase(args, world, port, report, access, cpu)
                mixed_phase(args, world, port, report, redis, workers, access, cpu)
    finally:
        _redis_cleanup(redis)
    report.preamble = preamble(args, world, report, load_at_start)
    report.notes.append(
        "p50 to max: as the client measured each request, connection to response. server p50/p95: the same "
        "requests in gunicorn's access log, from the moment a worker thread took the request up; the rest is "
        "waiting for a thread (each worker's queue) on a machine whose two cores also run PostgreSQL, Redis, the "
        "Celery workers, the LLM server and the client."
    )
    report.notes.append(
        f"errors: answers other than 2xx, timeouts (the client waits {args.timeout:g} s) and broken connections."
    )
    if report.passed:
        shutil.rmtree(logs, ignore_errors=True)
    else:
        report.notes.append(f"The logs of the workers and gunicorn's access log are kept in {logs}.")
    return report


def services_env(args: argparse.Namespace, scratch: Scratch, llm_url: str, access: AccessLog) -> dict[str, str]:
    """The environment of gunicorn and the Celery workers."""
    return {
        **scratch.env,
        "REDIS_URL": args.redis_url,
        "MEMSITE_API_RATE": args.api_rate,
        # A measure of throughput, not of fairness: one user's work is not capped here.
        **{name: str(10**9) for name in QUOTAS},
        "MEMSITE_LLM_PROVIDER": "openai",
        "OPENAI_API_KEY": "sk-loadbench",
        "OPENAI_BASE_URL": llm_url,
        "GUNICORN_CMD_ARGS": access.gunicorn_args,
    }


def preamble(args: argparse.Namespace, world: World, report: LoadReport, load_at_start: float) -> list[str]:
    return [
        (
            f"{date.today()}, {os.cpu_count()} CPUs (load average {load_at_start:.1f} at the start; "
            f"{', '.join(report.loads)}), Python {platform.python_version()}."
        ),
        (
            f"gunicorn gthread {args.web_workers} workers × {args.web_threads} threads; "
            f"{args.celery_workers} Celery workers (threads pool × {args.celery_threads}); Redis {args.redis_url}; "
            f"MEMSITE_API_RATE={args.api_rate} ({args.users} users, each with a token and a session), and the "
            f"per-user quotas ({', '.join(QUOTAS)}) out of reach; "
            f"the LLM: tests/fake_openai.py in a process of its own, answering with the offline heuristics "
            f"after {args.llm_delay * 1000:.0f} ms."
        ),
        (
            f"Seeded: {world.built:,} nodes (benchmarks/treeshape.py), {args.agents} agents with brains at "
            f"{args.brain_fill:g} of every cap. Reads over {len(world.folders)} folders (every one under /references "
            f"below the areas, and the journals) and {len(world.nodes)} nodes."
        ),
        "",
        f"Command: `{command('load')}`",
    ]


def warm_up(args: argparse.Namespace, world: World, port: int) -> None:
    """Each read answered as it should, then a search for every worker thread and a tick for every
    agent, waited for, before anything is measured: the first LLM calls of freshly started workers
    take seconds, once."""
    print("warming up", file=sys.stderr)
    for label, urls, headers in read_kinds(world, 0):
        conn = Connection(port, headers, args.timeout)
        answer = conn.send("GET", urls[0])
        conn.close()
        # The partial alone, not the page a request without htmx or without a session gets.
        if answer.status != 200 or (label == PARTIAL and b"<html" in answer.body.lower()):
            raise SystemExit(f"{label} answers {answer.status} {answer.body[:200]!r}: the reads would not measure it.")
    conn = Connection(port, {"Authorization": f"Token {world.tokens[0]}", "Accept": "application/json"}, args.timeout)
    before = dict(Brain.objects.filter(pk__in=world.agents).values_list("pk", "tick_count"))
    searches = []
    for i in range(args.celery_workers * args.celery_threads):
        answer = conn.send(
            "POST",
            "/api/searches/",
            {"questions": [world.questions[i % len(world.questions)]], "budgets": {"max_llm_calls": 2}},
        )
        if answer.status != 202:
            raise SystemExit(f"Starting a search answers {answer.status} {answer.body[:200]!r}.")
        searches.append(answer.json()["id"])
    for agent in world.agents:
        answer = conn.send("POST", f"/api/agents/{agent}/tick/")
        if answer.status != 202:
            raise SystemExit(f"Asking for a tick answers {answer.status} {answer.body[:200]!r}.")
    conn.close()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        counts = dict(Brain.objects.filter(pk__in=world.agents).values_list("pk", "tick_count"))
        if not (
            Search.objects.filter(pk__in=searches, status__in=Search.ACTIVE).exists()
            or TickRun.objects.filter(brain_id__in=world.agents, status=TickRun.Status.RUNNING).exists()
            or any(counts[agent] <= before[agent] for agent in world.agents)
        ):
            break
        time.sleep(0.5)
    connections.close_all()


def read_phase(
    args: argparse.Namespace, world: World, port: int, report: LoadReport, access: AccessLog, meter: CpuMeter
) -> None:
    report.loads.append(f"{os.getloadavg()[0]:.1f} at the reads")
    print(f"reads: {args.read_connections} connections for {args.read_seconds:g} s", file=sys.stderr)
    tallies = Tallies()
    deadline = time.monotonic() + args.read_seconds
    mark = access.mark()
    with meter.measure() as cpu:
        seconds = run_clients(readers(port, world, args.read_connections, deadline, args.timeout), tallies)
    server = access.servermillis_text(mark, access.mark())
    table = operation_table(tallies, (CHILDREN_API, NODE_API, PARTIAL), seconds, server, total=True)
    errors = [body for tally in tallies.by_label.values() for body in tally.bodies]
    report.sections.append(
        (
            f"Phase 1: reads, {args.read_connections} connections, {seconds:.0f} s",
            [
                f"{args.read_connections} client threads in the benchmark's process, one keep-alive connection each, "
                "a third on each operation. " + cpu_text(cpu),
                *(f"Error: `{body}`" for body in errors),
            ],
            table,
        )
    )


MIXED_LABELS = (
    CREATE,
    SEARCH_START,
    SEARCH_POLL,
    TICK,
    TICK_POLL,
    CHILDREN_API + READS_SUFFIX,
    NODE_API + READS_SUFFIX,
    PARTIAL + READS_SUFFIX,
)


def mixed_phase(
    args: argparse.Namespace,
    world: World,
    port: int,
    report: LoadReport,
    redis,
    workers: Workers,
    access: AccessLog,
    meter: CpuMeter,
) -> None:
    report.loads.append(f"{os.getloadavg()[0]:.1f} at the writes")
    since = timezone.now()
    ticks_before = dict(Brain.objects.filter(pk__in=world.agents).values_list("pk", "tick_count"))
    connections.close_all()
    writes = Writes()
    clients = writers(args, world, port, writes, deadline=time.monotonic() + args.mixed_seconds)
    print(f"mixed: {len(clients)} clients for {args.mixed_seconds:g} s", file=sys.stderr)
    tallies = Tallies()
    mark = access.mark()
    with meter.measure() as cpu:
        seconds = run_clients(clients, tallies)
    server = access.servermillis_text(mark, access.mark())
    print("mixed: draining", file=sys.stderr)
    waited, settled = drain(world, writes, since, ticks_before, redis, args.drain_seconds)
    report.checks, facts = checks(world, writes, since, ticks_before, redis, workers)
    errors = [body for tally in tallies.by_label.values() for body in tally.bodies]
    report.sections.append(
        (
            f"Phase 2: mixed writes, {seconds:.0f} s",
            [
                (
                    f"{args.create_connections} connections creating documents back to back in {INBOXES} shared "
                    f"folders; {args.search_clients} clients each starting a search (one question, max_llm_calls "
                    f"{args.search_calls}) and polling it every {args.poll_interval:g} s until it ends; "
                    f"{len(world.agents)} agents' clients each asking for a tick and polling its runs until it has "
                    f"ended; {args.mixed_read_connections} read connections as in phase 1. "
                )
                + cpu_text(cpu),
                *(f"Error: `{body}`" for body in errors),
            ],
            operation_table(tallies, MIXED_LABELS, seconds, server, total=False),
        )
    )
    report.sections.append(work_section(writes, facts, seconds, waited, settled))


def writers(
    args: argparse.Namespace, world: World, port: int, writes: Writes, deadline: float
) -> list[Callable[[dict[str, Tally]], None]]:
    """The clients of phase 2: creators, searchers, an agent's ticker each, and readers."""
    clients = [creator(port, world, writes, n, deadline, args) for n in range(args.create_connections)]
    clients += [searcher(port, world, writes, n, deadline, args) for n in range(args.search_clients)]
    clients += [ticker(port, world, writes, agent, n, deadline, args) for n, agent in enumerate(world.agents)]
    clients += readers(port, world, args.mixed_read_connections, deadline, args.timeout, suffix=READS_SUFFIX)
    return clients


def work_section(
    writes: Writes, facts: dict[str, Any], seconds: float, waited: float, settled: bool
) -> tuple[str, list[str], Table]:
    """What the writes set going, from the rows and the workers' logs."""
    rows = [
        (
            "documents created (201)",
            f"{len(writes.created):,} ({len(writes.created) / seconds:,.1f}/s)",
            "—",
            "—",
            "—",
            "—",
        ),
        _duration_row(
            "searches: created → finished",
            facts["search_total_ms"],
            f"{len(writes.searches):,} ({len(facts['search_total_ms']) / seconds:,.2f}/s)",
        ),
        _duration_row("searches: waiting in the queue", facts["search_wait_ms"], ""),
        _duration_row(
            "searches: started → seen ended by the client", writes.search_seen_ms, f"{len(writes.search_seen_ms):,}"
        ),
        _duration_row(
            "ticks: run started → ended",
            facts["tick_ms"],
            f"{sum(writes.ticks.values()):,} ({len(facts['tick_ms']) / seconds:,.2f}/s)",
        ),
        _duration_row(
            "ticks: asked for → seen ended by the client", writes.tick_seen_ms, f"{len(writes.tick_seen_ms):,}"
        ),
        _duration_row("LLM calls (ledger latency)", facts["llm_latency_ms"], f"{facts['llm_calls']:,}"),
    ]
    calls = facts["search_calls"]
    return (
        "The work behind the writes",
        [
            (
                f"Drained in {waited:.1f} s after the writers stopped{'' if settled else ' (NOT settled)'}. "
                f"Searches ended: {_counts(facts['search_ends'])}; LLM calls a search p50 "
                f"{statistics.median(calls) if calls else 0:g}, max {max(calls, default=0)}. Tick actions: "
                f"{_counts(facts['tick_actions'])}. Tasks in the workers' logs: "
                f"{_counts(Counter({f'{name} {event}': n for (name, event), n in facts['tasks'].items()}))}."
            )
        ],
        Table(("what", "count (rate)", "p50 ms", "p95 ms", "p99 ms", "max ms"), rows, "lrrrrr"),
    )


def _redis_cleanup(redis) -> None:
    """The keys the run made in its Redis database (which was empty at the start)."""
    keys = list(redis.scan_iter(count=1000))
    if keys:
        redis.delete(*keys)


# --- the world the load runs against --------------------------------------------------------------


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


def seed(args: argparse.Namespace) -> World:
    rng = random.Random(args.seed)
    built, seconds = build_chunks(treeshape.plan(args.nodes, discarded=0))
    print(f"seed: {built:,} nodes in {seconds:.1f} s", file=sys.stderr)
    swarmstar = selectors.node_internal_folder(name="swarmstar")
    inbox_root = services.node_create(
        parent=swarmstar, type="folder", name="load-inboxes", description="Documents written by the load benchmark."
    )
    inboxes = [
        services.node_create(
            parent=inbox_root, type="folder", name=f"inbox-{i}", description=f"Inbox {i} of the load benchmark."
        ).pk
        for i in range(INBOXES)
    ]
    references = selectors.node_resolve(path="/references")
    under = Node.objects.filter(path__startswith=references.path)
    folders = list(under.filter(is_folder=True, depth__gte=3).values_list("pk", flat=True))
    folders += [selectors.node_resolve(path=path).pk for path in treeshape.hot_folder_paths()]
    documents = list(under.filter(is_folder=False).values_list("pk", "description"))
    nodes = [pk for pk, _ in rng.sample(documents, min(300, len(documents)))]
    nodes += rng.sample(folders, min(100, len(folders)))
    questions = []
    for _, description in rng.sample(documents, min(200, len(documents))):
        topic = description.removeprefix("Notes on ").split(":")[0]
        questions.append(f"What about {topic}?")

    tokens, sessions = [], []
    for i in range(args.users):
        user = get_user_model().objects.create_user(username=f"load-{i}")
        membership_set(space=space_default(), user=user, role=Role.EDITOR)
        tokens.append(token_create(user=user, name="load benchmark").key)
        client = Client()
        client.force_login(user)
        sessions.append(client.cookies[settings.SESSION_COOKIE_NAME].value)

    now = timezone.now()
    counts = brainfill.sizes(args.brain_fill)
    agents = []
    for i in range(args.agents):
        agent = agent_services.agent_create(name=f"load-agent-{i + 1:02d}", model=brainfill.MODEL)
        rows = brainfill.brain_rows(brainfill.brain_document(rng, counts, now=now), now=now)
        brainfill.brain_fill(agent=agent, rows=rows, ticks=brainfill.tick_history(rng, counts["tick"], now=now))
        agents.append(agent.pk)
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
    rng.shuffle(folders)
    return World(
        folders=folders,
        nodes=nodes,
        questions=questions,
        inboxes=inboxes,
        tokens=tokens,
        sessions=sessions,
        agents=agents,
        built=built + 1 + INBOXES,
    )


# --- HTTP ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    status: int  # 0: no response
    body: bytes
    ms: float
    failure: str  # "", "timeout" or "connection"

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300 and not self.failure

    def json(self) -> Any:
        return json.loads(self.body)


class Connection:
    """One keep-alive connection, as one client of the swarm or one browser tab holds it."""

    def __init__(self, port: int, headers: dict[str, str], timeout: float) -> None:
        self.http = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        self.headers = headers

    def send(self, method: str, url: str, payload: Any = None) -> Answer:
        headers, body = self.headers, None
        if payload is not None:
            body = json.dumps(payload).encode()
            headers = {**headers, "Content-Type": "application/json"}
        started = time.perf_counter()
        try:
            self.http.request(method, url, body=body, headers=headers)
            response = self.http.getresponse()
            data = response.read()
            if response.will_close:
                self.http.close()
            return Answer(response.status, data, (time.perf_counter() - started) * 1000, "")
        except TimeoutError:
            self.http.close()
            return Answer(0, b"", (time.perf_counter() - started) * 1000, "timeout")
        except (OSError, http.client.HTTPException):
            self.http.close()  # http.client reconnects on the next request
            return Answer(0, b"", (time.perf_counter() - started) * 1000, "connection")

    def close(self) -> None:
        self.http.close()


@dataclass
class Tally:
    """The answers to one operation."""

    connections: int = 0
    millis: list[float] = field(default_factory=list)
    statuses: Counter[int] = field(default_factory=Counter)
    failures: Counter[str] = field(default_factory=Counter)
    bodies: list[str] = field(default_factory=list)  # the first few error bodies, for the notes

    def add(self, answer: Answer) -> None:
        self.millis.append(answer.ms)
        if answer.failure:
            self.failures[answer.failure] += 1
        else:
            self.statuses[answer.status] += 1
            if not answer.ok and len(self.bodies) < 3:
                self.bodies.append(f"{answer.status}: {answer.body[:300].decode(errors='replace')}")

    def merge(self, other: Tally) -> None:
        self.connections += other.connections
        self.millis += other.millis
        self.statuses.update(other.statuses)
        self.failures.update(other.failures)
        self.bodies += other.bodies[: max(0, 3 - len(self.bodies))]

    @property
    def errors(self) -> int:
        return sum(n for status, n in self.statuses.items() if not 200 <= status < 300) + sum(self.failures.values())

    def errors_text(self) -> str:
        if not self.errors:
            return "0"
        parts = [f"{n}× {status}" for status, n in sorted(self.statuses.items()) if not 200 <= status < 300]
        parts += [f"{n}× {kind}" for kind, n in sorted(self.failures.items())]
        return f"{self.errors} ({', '.join(parts)})"


class Tallies:
    """Tallies by operation, merged from each thread's own when it ends."""

    def __init__(self) -> None:
        self.by_label: dict[str, Tally] = {}
        self.lock = threading.Lock()

    def merge(self, mine: dict[str, Tally]) -> None:
        with self.lock:
            for label, tally in mine.items():
                self.by_label.setdefault(label, Tally()).merge(tally)


# Requests as gunicorn's access log writes them: method, path, status, microseconds.
ACCESS_FORMAT = "%(m)s %(U)s %(s)s %(D)s"
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


class AccessLog:
    """gunicorn's access log: the time each request took in the server, from the moment a worker
    thread took it up to the response written. What the client measured beyond that is waiting:
    in the listen queue and in the worker's queue for a free thread."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @property
    def gunicorn_args(self) -> str:
        return f"--access-logfile {self.path} --access-logformat '{ACCESS_FORMAT}'"

    def mark(self) -> int:
        return self.path.stat().st_size if self.path.exists() else 0

    def servermillis_text(self, start: int, end: int) -> dict[str, list[float]]:
        """Milliseconds per operation of the requests logged between two marks."""
        with open(self.path, "rb") as file:
            file.seek(start)
            lines = file.read(end - start).decode(errors="replace").splitlines()
        found: dict[str, list[float]] = {}
        for line in lines:
            parts = line.split()
            if len(parts) != 4:
                continue
            request = f"{parts[0]} {parts[1]}"
            label = next((label for pattern, label in ROUTES if pattern.match(request)), None)
            if label is not None:
                found.setdefault(label, []).append(int(parts[3]) / 1000)
        return found


def run_clients(clients: Sequence[Callable[[dict[str, Tally]], None]], tallies: Tallies) -> float:
    """Each client in a thread of its own with a tally of its own; the seconds until all ended."""

    def body(client: Callable[[dict[str, Tally]], None]) -> None:
        mine: dict[str, Tally] = {}
        try:
            client(mine)
        finally:
            tallies.merge(mine)

    started = time.monotonic()
    threads = [threading.Thread(target=body, args=(client,)) for client in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.monotonic() - started


def _tally(mine: dict[str, Tally], label: str) -> Tally:
    if label not in mine:
        mine[label] = Tally(connections=1)
    return mine[label]


def reader(
    port: int, headers: dict[str, str], label: str, urls: Sequence[str], offset: int, deadline: float, timeout: float
) -> Callable[[dict[str, Tally]], None]:
    def client(mine: dict[str, Tally]) -> None:
        conn, tally, index = Connection(port, headers, timeout), _tally(mine, label), offset
        while time.monotonic() < deadline:
            tally.add(conn.send("GET", urls[index % len(urls)]))
            index += 7  # coprime with the sample sizes' usual factors: connections spread over them
        conn.close()

    return client


def read_kinds(world: World, user: int) -> list[tuple[str, list[str], dict[str, str]]]:
    """The reads: a folder's children and a node through the API (with a token), and the
    children partial of the dashboard (with a session, as htmx asks for it); as `user`."""
    token = {"Authorization": f"Token {world.tokens[user]}", "Accept": "application/json"}
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
    headers = {"Authorization": f"Token {world.tokens[number % len(world.tokens)]}", "Accept": "application/json"}
    rng = random.Random(args.seed * 1000 + number)

    def client(mine: dict[str, Tally]) -> None:
        conn, tally, sequence = Connection(port, headers, args.timeout), _tally(mine, CREATE), 0
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
    headers = {"Authorization": f"Token {world.tokens[number % len(world.tokens)]}", "Accept": "application/json"}
    rng = random.Random(args.seed * 2000 + number)

    def client(mine: dict[str, Tally]) -> None:
        conn = Connection(port, headers, args.timeout)
        start, poll = _tally(mine, SEARCH_START), _tally(mine, SEARCH_POLL)
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
    headers = {"Authorization": f"Token {world.tokens[number % len(world.tokens)]}", "Accept": "application/json"}

    def client(mine: dict[str, Tally]) -> None:
        conn, request, poll = Connection(port, headers, args.timeout), _tally(mine, TICK), _tally(mine, TICK_POLL)
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


# --- draining and counting -----------------------------------------------------------------------


def redis_client(url: str):
    import redis

    return redis.Redis.from_url(url)


def queue_depth(client) -> int:
    """Messages waiting in the default queue and taken but not acknowledged (kombu's Redis
    transport keeps those in `unacked`)."""
    return int(client.llen("celery")) + int(client.hlen("unacked"))


def drain(
    world: World, writes: Writes, since: datetime, ticks_before: dict[int, int], redis, seconds: float
) -> tuple[float, bool]:
    """Wait until every search started since `since` has ended, every accepted tick has run and
    ended, and the queue is empty; or until nothing is queued or running for QUIET_S seconds
    (what is missing then was lost, not late); or `seconds`. Returns the wait and whether it
    settled."""
    started = time.monotonic()
    quiet_since = None
    while True:
        active = Search.objects.filter(created_at__gte=since, status__in=Search.ACTIVE).count()
        running = TickRun.objects.filter(brain_id__in=world.agents, status=TickRun.Status.RUNNING).count()
        counts = dict(Brain.objects.filter(pk__in=world.agents).values_list("pk", "tick_count"))
        missing = sum(max(0, ticks_before[a] + writes.ticks[a] - counts[a]) for a in world.agents)
        queued = queue_depth(redis)
        elapsed = time.monotonic() - started
        if not (active or running or missing or queued):
            return elapsed, True
        if (
            queued
            or running
            or (active and Search.objects.filter(created_at__gte=since, status=Search.Status.RUNNING).exists())
        ):
            quiet_since = None
        else:
            quiet_since = quiet_since or time.monotonic()
            if time.monotonic() - quiet_since >= QUIET_S:
                return elapsed, False
        if elapsed > seconds:
            return elapsed, False
        time.sleep(0.5)


@dataclass(frozen=True)
class Check:
    what: str
    found: str
    passed: bool


def checks(
    world: World, writes: Writes, since: datetime, ticks_before: dict[int, int], redis, workers: Workers
) -> tuple[list[Check], dict[str, Any]]:
    """What the rows say after the drain; and figures for the report."""
    facts: dict[str, Any] = {}
    found = [
        *document_checks(world, writes),
        *search_checks(writes, since, facts),
        *tick_checks(world, writes, since, ticks_before, facts),
        *work_checks(redis, workers, since, facts),
    ]
    return found, facts


def document_checks(world: World, writes: Writes) -> list[Check]:
    result: list[Check] = []
    # Documents: each 201 exactly once, nothing written without its 201, the tree consistent.
    ids = list(writes.created.values())
    stored = Counter(Node.objects.filter(pk__in=ids).values_list("pk", flat=True))
    inbox_rows = list(Node.objects.filter(parent_id__in=world.inboxes).values_list("name", "pk"))
    names = Counter(name for name, _ in inbox_rows)
    extra = [name for name in names if name not in writes.created]
    result.append(
        Check(
            "every 201 document exists exactly once",
            f"{len(ids):,} answered 201, {len(stored):,} found, {sum(1 for n in names.values() if n > 1)} names twice",
            len(set(ids)) == len(ids) == len(stored) and all(n == 1 for n in names.values()),
        )
    )
    unanswered_written = [name for name in writes.unanswered if name in names]
    result.append(
        Check(
            "no document without its 201",
            f"{len(inbox_rows):,} in the inboxes; {len(extra)} without a 201 "
            f"({len(writes.unanswered)} creates unanswered, {len(unanswered_written)} of them written; "
            f"{len(writes.refused)} refused)",
            not extra or sorted(extra) == sorted(unanswered_written),
        )
    )
    problems = Node.objects.find_problems()
    numchild = {pk: n for pk, n in Node.objects.filter(pk__in=world.inboxes).values_list("pk", "numchild")}
    real = Counter(Node.objects.filter(parent_id__in=world.inboxes).values_list("parent_id", flat=True))
    wrong_parent = Node.objects.filter(parent_id__in=world.inboxes).exclude(depth=4).count()
    result.append(
        Check(
            "the tree is consistent (treebeard's find_problems; inbox child counts)",
            f"{sum(len(p) for p in problems)} problems, {sum(1 for pk in world.inboxes if numchild[pk] != real[pk])} "
            f"inboxes off, {wrong_parent} at a wrong depth",
            not any(problems) and all(numchild[pk] == real[pk] for pk in world.inboxes) and not wrong_parent,
        )
    )
    return result


def search_checks(writes: Writes, since: datetime, facts: dict[str, Any]) -> list[Check]:
    result: list[Check] = []
    # Searches: every 202 ended; so did the sub-searches they started.
    ours = Search.objects.filter(created_at__gte=since)
    statuses = Counter(ours.filter(pk__in=writes.searches).values_list("status", flat=True))
    subs = Counter(ours.exclude(pk__in=writes.searches).values_list("status", flat=True))
    ended = sum(statuses[s] for s in FINAL_SEARCH)
    result.append(
        Check(
            "every accepted search reached a final state",
            f"{len(writes.searches):,} accepted: {_counts(statuses)}; sub-searches: {_counts(subs) or 'none'}",
            ended == len(writes.searches) and not any(subs[s] for s in Search.ACTIVE),
        )
    )
    failed = list(ours.filter(status=Search.Status.FAILED).values_list("ended_because", flat=True))
    result.append(Check("no search failed", f"{len(failed)} failed {_reasons(failed)}".strip(), not failed))
    because = Counter(ours.filter(pk__in=writes.searches).values_list("ended_because", flat=True))
    facts["search_ends"] = because
    timings = list(
        ours.filter(pk__in=writes.searches, finished_at__isnull=False).values_list(
            "created_at", "started_at", "finished_at", "llm_calls"
        )
    )
    facts["search_total_ms"] = [(f - c).total_seconds() * 1000 for c, s, f, _ in timings]
    facts["search_wait_ms"] = [(s - c).total_seconds() * 1000 for c, s, f, _ in timings if s]
    facts["search_calls"] = [n for *_, n in timings]
    return result


def tick_checks(
    world: World, writes: Writes, since: datetime, ticks_before: dict[int, int], facts: dict[str, Any]
) -> list[Check]:
    result: list[Check] = []
    # Ticks: one run per accepted tick, all ended, no lease left.
    runs = list(
        TickRun.objects.filter(brain_id__in=world.agents, started_at__gte=since).values_list(
            "brain_id", "status", "error", "started_at", "ended_at"
        )
    )
    per_agent = Counter(run[0] for run in runs)
    counts = dict(Brain.objects.filter(pk__in=world.agents).values_list("pk", "tick_count"))
    off = [a for a in world.agents if per_agent[a] != writes.ticks[a] or counts[a] - ticks_before[a] != writes.ticks[a]]
    result.append(
        Check(
            "every accepted tick made exactly one tick run",
            f"{sum(writes.ticks.values()):,} accepted, {len(runs):,} runs; {len(off)} agents off",
            not off,
        )
    )
    running = sum(1 for run in runs if run[1] == TickRun.Status.RUNNING)
    leased = Brain.objects.filter(pk__in=world.agents, lease_until__isnull=False).count()
    result.append(
        Check("no tick left running, no lease held", f"{running} running, {leased} leases", not running and not leased)
    )
    tick_errors = [run[2] for run in runs if run[1] == TickRun.Status.FAILED]
    result.append(
        Check("no tick failed", f"{len(tick_errors)} failed {_reasons(tick_errors)}".strip(), not tick_errors)
    )
    facts["tick_ms"] = [(run[4] - run[3]).total_seconds() * 1000 for run in runs if run[4]]
    facts["tick_actions"] = Counter(
        TickRun.objects.filter(brain_id__in=world.agents, started_at__gte=since).values_list("action", flat=True)
    )
    return result


def work_checks(redis, workers: Workers, since: datetime, facts: dict[str, Any]) -> list[Check]:
    result: list[Check] = []
    # The queue, the workers and the LLM.
    depth = queue_depth(redis)
    tasks = workers.tasks()
    received = sum(n for (_, event), n in tasks.items() if event == "received")
    finished = sum(n for (_, event), n in tasks.items() if event == "succeeded")
    raised = sum(n for (_, event), n in tasks.items() if event in ("raised", "failed", "retry"))
    tracebacks = workers.log_text().count("Traceback (most recent call last)")
    result.append(
        Check(
            "the queue is empty and every task the workers took succeeded",
            f"{depth} queued or unacknowledged; {received:,} received, {finished:,} succeeded, {raised} raised, "
            f"{tracebacks} tracebacks in the workers' logs",
            not depth and received == finished and not raised and not tracebacks,
        )
    )
    calls = Counter(LLMCall.objects.filter(created_at__gte=since).values_list("status", flat=True))
    errors = list(
        LLMCall.objects.filter(created_at__gte=since, status=LLMCall.Status.ERROR).values_list(
            "error_reason", flat=True
        )
    )
    result.append(
        Check(
            "no LLM call failed",
            f"{sum(calls.values()):,} calls: {_counts(calls)} {_reasons(errors)}".strip(),
            not errors,
        )
    )
    facts["llm_calls"] = sum(calls.values())
    facts["llm_latency_ms"] = list(
        LLMCall.objects.filter(created_at__gte=since, status=LLMCall.Status.OK).values_list("latency_ms", flat=True)
    )
    facts["tasks"] = tasks
    return result


def _counts(counter: Counter) -> str:
    return ", ".join(f"{n:,} {key}" for key, n in counter.most_common())


def _reasons(texts: Sequence[str]) -> str:
    if not texts:
        return ""
    common = Counter(text.splitlines()[0][:120] if text else "(none)" for text in texts).most_common(3)
    return "(" + "; ".join(f"{n}× {text}" for text, n in common) + ")"


# --- the report ----------------------------------------------------------------------------------


@dataclass
class LoadReport:
    title: str
    preamble: list[str] = field(default_factory=list)
    sections: list[tuple[str, list[str], Table | None]] = field(default_factory=list)  # (heading, lines, table)
    checks: list[Check] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    loads: list[str] = field(default_factory=list)  # the load average at each phase's start

    @property
    def passed(self) -> bool:
        return all(check.passed for check in self.checks)

    def _checks_table(self) -> Table:
        return Table(("check", "found", ""), [(c.what, c.found, "✓" if c.passed else "✗") for c in self.checks], "lll")

    def text(self) -> str:
        lines = [self.title, *self.preamble]
        for heading, body, table in self.sections:
            lines += ["", heading, *body]
            if table:
                lines += ["", *table.text()]
        lines += ["", "Checks after the drain", "", *self._checks_table().text(), "", *self.notes]
        return "\n".join(lines)

    def markdown(self) -> str:
        lines = [f"## {self.title}", "", *self.preamble]
        for heading, body, table in self.sections:
            lines += ["", f"### {heading}", ""]
            if body:
                lines += [*body, ""]
            if table:
                lines += table.markdown()
        lines += ["", "### Checks after the drain", "", *self._checks_table().markdown(), ""]
        lines += [f"- {note}" for note in self.notes]
        return "\n".join(lines) + "\n"


OPERATION_HEADER = (
    "operation",
    "conns",
    "requests",
    "req/s",
    "p50 ms",
    "p95 ms",
    "p99 ms",
    "max ms",
    "errors",
    "server p50 ms",
    "server p95 ms",
)


def operation_table(
    tallies: Tallies, labels: Sequence[str], seconds: float, server: dict[str, list[float]], *, total: bool
) -> Table:
    """Per operation, as the client saw it; and the server's own time from its access log (the
    reads of phase 2 share theirs with no other operation, so their rows show it too)."""
    rows = []
    everything, server_all = Tally(), []
    for label in labels:
        tally = tallies.by_label.get(label)
        if tally is None:
            continue
        everything.merge(tally)
        served = server.get(label.removesuffix(READS_SUFFIX), [])
        server_all += served
        rows.append(_operation_row(label, tally, seconds, served))
    if total:
        rows.append(_operation_row("all", everything, seconds, server_all))
    return Table(OPERATION_HEADER, rows, "lrrrrrrrlrr")


def _operation_row(label: str, tally: Tally, seconds: float, served: Sequence[float]) -> tuple[str, ...]:
    p50, p95, p99 = percentiles(tally.millis, 50, 95, 99)
    server_p50, server_p95 = percentiles(served, 50, 95)
    return (
        label,
        str(tally.connections),
        f"{len(tally.millis):,}",
        f"{len(tally.millis) / seconds:,.1f}",
        millis_text(p50),
        millis_text(p95),
        millis_text(p99),
        millis_text(max(tally.millis, default=float("nan"))),
        tally.errors_text(),
        millis_text(server_p50),
        millis_text(server_p95),
    )


def _duration_row(what: str, millis: Sequence[float], count_text: str) -> tuple[str, ...]:
    p50, p95, p99 = percentiles(millis, 50, 95, 99)
    return (
        what,
        count_text,
        millis_text(p50),
        millis_text(p95),
        millis_text(p99),
        millis_text(max(millis, default=float("nan"))),
    )


# --- where the CPU went ------------------------------------------------------------------------


TICK_S = os.sysconf("SC_CLK_TCK")


def _process_cpu(pid: int) -> float | None:
    """CPU seconds a process has used (every thread of it), or None once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / TICK_S  # utime, stime


def _machine_cpu() -> tuple[float, float]:
    """CPU seconds of the whole machine: busy, idle (/proc/stat, every core)."""
    values = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = values[3] + values[4]  # idle, iowait
    return (sum(values[:8]) - idle) / TICK_S, idle / TICK_S


def _pids_with(text: str) -> list[int]:
    """Processes whose command line holds `text`."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if text.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


class CpuMeter:
    """Where the machine's CPU went during a phase: the CPU seconds of each part of the run
    (gunicorn, the run database's PostgreSQL backends, Redis, the Celery workers, the LLM
    server, the load client) and of everything else, from /proc. The machine is shared: what
    other processes take shows up in every latency of the run. Sampled twice a second, so that
    the backends of connections that close during the phase (CONN_MAX_AGE) are counted too."""

    SAMPLE_S = 0.5

    def __init__(self, *, port: int, workers: Workers, llm_pid: int, redis_pid: int) -> None:
        # A backend's process title: "postgres: <user> <database> <client> <state>".
        database = f" {connection.settings_dict['NAME']} "
        self.parts: dict[str, Callable[[], list[int]]] = {
            "gunicorn": lambda: _pids_with(f"--bind=127.0.0.1:{port}"),
            "PostgreSQL": lambda: _pids_with(database),
            "Redis": lambda: [redis_pid],
            "Celery workers": lambda: [process.pid for process, _ in workers.processes],
            "LLM server": lambda: [llm_pid],
            "load client": lambda: [os.getpid()],
        }

    def _sample(self) -> dict[str, dict[int, float]]:
        return {
            name: {pid: cpu for pid in pids() if (cpu := _process_cpu(pid)) is not None}
            for name, pids in self.parts.items()
        }

    @contextmanager
    def measure(self) -> Iterator[dict[str, float]]:
        """CPU seconds per part over the block, with "other processes" and "idle"."""
        spent: dict[str, float] = {}
        busy_start, idle_start = _machine_cpu()
        start = self._sample()
        last = {name: dict(pids) for name, pids in start.items()}
        stop = threading.Event()

        def sample() -> None:
            while not stop.wait(self.SAMPLE_S):
                for name, pids in self._sample().items():
                    last[name].update(pids)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        try:
            yield spent
        finally:
            stop.set()
            sampler.join()
            for name, pids in self._sample().items():
                last[name].update(pids)
            busy_end, idle_end = _machine_cpu()
            for name, pids in last.items():
                spent[name] = sum(cpu - start[name].get(pid, 0.0) for pid, cpu in pids.items())
            spent["other processes"] = max(0.0, busy_end - busy_start - sum(spent.values()))
            spent["idle"] = idle_end - idle_start


def cpu_text(spent: dict[str, float]) -> str:
    total = sum(spent.values())
    shares = ", ".join(
        f"{name} {seconds:.1f} s" if seconds < 10 else f"{name} {seconds:,.0f} s" for name, seconds in spent.items()
    )
    return f"CPU over the phase ({total:,.0f} CPU-seconds on {os.cpu_count()} cores): {shares}."
