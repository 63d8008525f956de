"""What benchmarks/load.py measures: a deployment's processes (gunicorn, Celery workers, the
fake LLM server) under read and mixed load from many clients, and what the queues drained.
Imported by run_on_services once Django is set up on the scratch PostgreSQL database."""

from __future__ import annotations

import argparse
import os
import platform
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from datetime import date, datetime
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection, connections
from django.test import Client
from django.utils import timezone

from agents.brains.models import Brain, TickRun
from agents.context import services as agent_services
from benchmarks.corpora import brainfill, treeshape
from benchmarks.corpora.treeshape import build_chunks
from benchmarks.kit.cpushares import CpuMeter, cpu_text, pids_with
from benchmarks.kit.harness import (
    Scratch,
    Table,
    Workers,
    celery_workers,
    command,
    database_version,
    gunicorn,
)
from benchmarks.kit.httpclients import AccessLog, Connection, Tallies, run_clients
from benchmarks.kit.offlinellm import llm_server
from benchmarks.measures.loadclients import (
    FINAL_SEARCH,
    MIXED_LABELS,
    PARTIAL,
    READ_LABELS,
    ROUTES,
    World,
    Writes,
    read_kinds,
    readers,
    writers,
)
from benchmarks.measures.loadreport import Check, LoadReport, counts_text, duration_row, operation_table, reasons_text
from memory import selectors, services
from memory.models import Node, Search
from memsite.llm.models import LLMCall
from memsite.spaces.logic import Role
from memsite.spaces.models import Space
from memsite.spaces.principals import system_principal
from memsite.spaces.selectors import space_default
from memsite.spaces.services import membership_set, token_create

INBOXES = 4  # folders the documents of phase 2 are created in, shared by every connection
QUIET_S = 10  # the queue empty and nothing running this long: what has not ended never will

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
    access = AccessLog(logs / "access.log", ROUTES)
    try:
        with llm_server(args.llm_delay) as (llm_url, llm_pid):
            env = services_env(args, scratch, llm_url, access)
            options = ("--pool", "threads", "--concurrency", str(args.celery_threads))  # the Procfile's pool
            with (
                gunicorn(env, workers=args.web_workers, threads=args.web_threads) as port,
                celery_workers(env, count=args.celery_workers, name="loadbench", options=options, logs=logs) as workers,
            ):
                warm_up(args, world, port)
                cpu = cpu_meter(port, workers, llm_pid, redis_pid=int(redis.info("server")["process_id"]))
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


def cpu_meter(port: int, workers: Workers, llm_pid: int, redis_pid: int) -> CpuMeter:
    """Where the machine's CPU went during a phase: each part of the run (gunicorn, the run
    database's PostgreSQL backends, Redis, the Celery workers, the LLM server, the load client)
    and everything else. The machine is shared: what other processes take shows up in every
    latency of the run."""
    # A backend's process title: "postgres: <user> <database> <client> <state>".
    database = f" {connection.settings_dict['NAME']} "
    return CpuMeter(
        {
            "gunicorn": lambda: pids_with(f"--bind=127.0.0.1:{port}"),
            "PostgreSQL": lambda: pids_with(database),
            "Redis": lambda: [redis_pid],
            "Celery workers": lambda: [process.pid for process, _ in workers.processes],
            "LLM server": lambda: [llm_pid],
            "load client": lambda: [os.getpid()],
        }
    )


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
            f"Seeded: {world.built:,} nodes (benchmarks/corpora/treeshape.py), {args.agents} agents with brains at "
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
    conn = Connection(port, world.api_headers(0), args.timeout)
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
    server = access.server_millis(mark, access.mark())
    table = operation_table(tallies, READ_LABELS, seconds, server, total=True)
    errors = tallies.error_bodies()
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
    server = access.server_millis(mark, access.mark())
    print("mixed: draining", file=sys.stderr)
    waited, settled = drain(world, writes, since, ticks_before, redis, args.drain_seconds)
    report.checks, facts = checks(world, writes, since, ticks_before, redis, workers)
    errors = tallies.error_bodies()
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
        duration_row(
            "searches: created → finished",
            facts["search_total_ms"],
            f"{len(writes.searches):,} ({len(facts['search_total_ms']) / seconds:,.2f}/s)",
        ),
        duration_row("searches: waiting in the queue", facts["search_wait_ms"], ""),
        duration_row(
            "searches: started → seen ended by the client", writes.search_seen_ms, f"{len(writes.search_seen_ms):,}"
        ),
        duration_row(
            "ticks: run started → ended",
            facts["tick_ms"],
            f"{sum(writes.ticks.values()):,} ({len(facts['tick_ms']) / seconds:,.2f}/s)",
        ),
        duration_row(
            "ticks: asked for → seen ended by the client", writes.tick_seen_ms, f"{len(writes.tick_seen_ms):,}"
        ),
        duration_row("LLM calls (ledger latency)", facts["llm_latency_ms"], f"{facts['llm_calls']:,}"),
    ]
    calls = facts["search_calls"]
    return (
        "The work behind the writes",
        [
            (
                f"Drained in {waited:.1f} s after the writers stopped{'' if settled else ' (NOT settled)'}. "
                f"Searches ended: {counts_text(facts['search_ends'])}; LLM calls a search p50 "
                f"{statistics.median(calls) if calls else 0:g}, max {max(calls, default=0)}. Tick actions: "
                f"{counts_text(facts['tick_actions'])}. Tasks in the workers' logs: "
                f"{counts_text(Counter({f'{name} {event}': n for (name, event), n in facts['tasks'].items()}))}."
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


def _inboxes(space: Space) -> list[str]:
    """The folders the writers write documents to, in `swarmstar`: the benchmark's own."""
    memsite = system_principal(space)
    root = services.node_create(
        parent=selectors.node_internal_folder(space=space, name="swarmstar"),
        type="folder",
        name="load-inboxes",
        description="Documents written by the load benchmark.",
        by=memsite,
    )
    return [
        services.node_create(
            parent=root, type="folder", name=f"inbox-{i}", description=f"Inbox {i} of the load benchmark.", by=memsite
        ).pk
        for i in range(INBOXES)
    ]


def seed(args: argparse.Namespace) -> World:
    rng = random.Random(args.seed)
    space = space_default()
    built, seconds = build_chunks(treeshape.plan(args.nodes, discarded=0), space=space)
    print(f"seed: {built:,} nodes in {seconds:.1f} s", file=sys.stderr)
    inboxes = _inboxes(space)
    references = selectors.node_resolve(space=space, path="/references")
    under = Node.objects.filter(path__startswith=references.path)
    folders = list(under.filter(is_folder=True, depth__gte=3).values_list("pk", flat=True))
    folders += [selectors.node_resolve(space=space, path=path).pk for path in treeshape.hot_folder_paths()]
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
        membership_set(space=space, member=user, role=Role.EDITOR)
        tokens.append(token_create(member=user, space=space_default(), name="load benchmark").key)
        client = Client()
        client.force_login(user)
        sessions.append(client.cookies[settings.SESSION_COOKIE_NAME].value)

    now = timezone.now()
    counts = brainfill.sizes(args.brain_fill)
    agents = []
    for i in range(args.agents):
        agent = agent_services.agent_create(space=space, name=f"load-agent-{i + 1:02d}", model=brainfill.MODEL)
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
            f"{len(writes.searches):,} accepted: {counts_text(statuses)}; sub-searches: {counts_text(subs) or 'none'}",
            ended == len(writes.searches) and not any(subs[s] for s in Search.ACTIVE),
        )
    )
    failed = list(ours.filter(status=Search.Status.FAILED).values_list("ended_because", flat=True))
    result.append(Check("no search failed", f"{len(failed)} failed {reasons_text(failed)}".strip(), not failed))
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
        Check("no tick failed", f"{len(tick_errors)} failed {reasons_text(tick_errors)}".strip(), not tick_errors)
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
            f"{sum(calls.values()):,} calls: {counts_text(calls)} {reasons_text(errors)}".strip(),
            not errors,
        )
    )
    facts["llm_calls"] = sum(calls.values())
    facts["llm_latency_ms"] = list(
        LLMCall.objects.filter(created_at__gte=since, status=LLMCall.Status.OK).values_list("latency_ms", flat=True)
    )
    facts["tasks"] = tasks
    return result
