"""What benchmarks/abuse.py measures: each attack against a fresh deployment (gunicorn, and nginx
when installed), whether a neighbour's requests are still served, and rendering's worst inputs.
Imported by run_on_services once Django is set up on the scratch PostgreSQL database."""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import secrets
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from urllib.parse import quote_plus

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.db import connections

from agents.context import services as context_services
from agents.graphs import services as graph_services
from benchmarks.corpora.brainfill import MODEL
from benchmarks.kit.harness import (
    Report,
    Row,
    Scratch,
    Stats,
    Table,
    command,
    database_version,
    mcp_server,
)
from benchmarks.kit.httpclients import Answer, concurrently, held_open, repeatedly
from benchmarks.kit.liveserver import (
    PROBE_S,
    PROBE_TIMEOUT_S,
    Health,
    Watch,
    children,
    gunicorn_command,
    nginx_in_front,
    nginx_missing,
    serve,
)
from benchmarks.kit.offlinellm import llm_server
from benchmarks.kit.payloads import (
    BAD_ITEMS,
    BODY_BYTES,
    DOCUMENT_BYTES,
    ESCAPES_BYTES,
    LONG_NAME_BYTES,
    MiB,
    bad_bodies,
    escaped_form,
    hostile_markdown,
    long_name_tar_gz,
    multipart,
    ordinary_markdown,
    zeros_tar_gz,
)
from benchmarks.kit.rendertimer import time_render
from benchmarks.measures.abusetarget import Target, World
from benchmarks.measures.fairqueue import fair_queue_table
from memory import selectors, services
from memory.models import Node
from memory.services.searches import BUDGET_CAPS
from memsite.spaces.logic import Role
from memsite.spaces.principals import system_principal
from memsite.spaces.selectors import space_default
from memsite.spaces.services import membership_set, token_create

# The targets.
RSS_TARGET_MIB = 64
REFUSED_TARGET_BYTES = MiB
HEALTHZ_TARGET_MS = 200
RENDER_TARGET_MS = 100

# The attacks' sizes: those of the review that found them, within every limit the server sets.
PAGE_TIMEOUT_S = 20.0
SLOW_CONNECTIONS = 40
SLOW_HOLD_S = 15.0
WAITERS = 6  # of each kind: searches with ?wait=30 and chats
LLM_DELAY_S = 20.0  # a slow model's reply, for the chats
FLOOD_API = 300
FLOOD_DASHBOARD = 100
RATE_LIMIT = 120  # per hour: the run is far shorter than any window it could straddle
RATE_CLIENTS = 24
RATE_SECONDS = 10.0
EXPORTS = 6
# The exported project: files of zeros at the content cap, just within the unpacked cap.
EXPORT_FILES = settings.MEMSITE_ARCHIVE_MAX_UNPACKED_BYTES * 95 // 100 // settings.MEMSITE_MAX_CONTENT_BYTES
FORMS_AT_CAP = 8  # login forms of percent escapes at the form cap, beside the review's 31 MB one
PREVIEWS = 12  # of each size: the content cap's, as in the review, and the preview's own cap
MCP_BODIES = 16
MCP_BODY_BYTES = 30 * MiB
READERS = ("9c", "10")  # the attacks whose user only reads, as the review's did
BUSY_CLIENTS = 24  # one user's connections, each within every cap
BUSY_SECONDS = 10.0
# Everything else runs with a rate no attack reaches: a 429 then comes from the limit under test.
OPEN_RATE = "100000/min"


# --- the run -------------------------------------------------------------------------------------


def run(args: argparse.Namespace, scratch: Scratch) -> AbuseReport:
    load_start = os.getloadavg()[0]
    import redis

    store = redis.Redis.from_url(args.redis_url)
    if store.dbsize():
        raise SystemExit(f"Redis database {args.redis_url} holds {store.dbsize()} keys: name an empty one.")
    attacks = [attack for attack in ATTACKS if not args.only or any(attack.key.startswith(k) for k in args.only)]
    print("seeding", file=sys.stderr)
    world = seed([attack.key for attack in ATTACKS] + ["warm"])
    render = None if args.skip_render else render_report(world, repeats=3, timeout=args.render_timeout)
    queue = fair_queue_table() if not args.only or "queue" in args.only else None
    # scratch.env: DJANGO_DEBUG=false and a random secret key, as in production.
    env = {**scratch.env, "REDIS_URL": args.redis_url, "MEMSITE_API_RATE": OPEN_RATE, "MEMSITE_LLM_PROVIDER": "offline"}
    logs = Path(tempfile.mkdtemp(prefix="memsite-abusebench-"))
    try:
        results = [run_attack(attack, world, env, args.idle_seconds, logs) for attack in attacks]
    finally:
        store.flushdb()  # it was empty: everything in it is the run's
    report = AbuseReport(
        title=f"Abuse on {database_version(scratch.vendor)} and Redis",
        preamble=preamble(args, scratch, world, results, (load_start, os.getloadavg()[0])),
        results=results,
        render=render,
        queue=queue,
        notes=result_notes(results),
    )
    if report.passed:
        shutil.rmtree(logs, ignore_errors=True)
    else:
        report.notes.append(f"gunicorn's log is kept in {logs}.")
    return report


@dataclass
class Result:
    attack: Attack
    outcome: Outcome | None = None
    health: Health | None = None
    skipped: str = ""
    workers: int = 0


def warm_up(target: Target) -> None:
    """Requests of each kind, a few at a time on connections of their own, so that every worker
    has loaded what a request loads (the embedding model among it) before its idle memory is
    read. As a user of its own: the limits under test count the attack's user only; a request
    refused as one too many of that user's at once is made again."""
    warm = Target(target.port, target.world, user="warm", session=target.session, proxied=target.proxied)
    passages = json.dumps({"query": "warm", "k": 1}).encode()
    calls = [
        lambda: target.fetch("GET", "/healthz"),
        lambda: warm.api("GET", "/api/nodes/roots/"),
        lambda: warm.api("POST", "/api/retrieve/", passages),
    ] * 6
    if target.session:
        calls += [lambda: warm.page("GET", "/memory/")] * 6
    for start in range(0, len(calls), 6):
        concurrently([lambda call=call: _until_let_in(call) for call in calls[start : start + 6]])


def _until_let_in(call: Callable[[], Answer], tries: int = 20) -> Answer:
    answer = call()
    for _ in range(tries):
        if answer.status != 429:
            break
        answer = call()
    return answer


def run_attack(attack: Attack, world: World, env: dict[str, str], idle_seconds: float, logs: Path) -> Result:
    """The attack against a gunicorn of its own, watched from `idle_seconds` before it to its end:
    one attack's leftovers (a thread still rendering, a worker's grown heap) never count against
    the next."""
    if attack.proxy and (missing := nginx_missing()):
        return Result(attack, skipped=missing)
    print(f"attack {attack.key}: {attack.title}", file=sys.stderr)
    with ExitStack() as stack:
        if attack.llm_delay is not None:
            url, _ = stack.enter_context(llm_server(attack.llm_delay))
            env = {**env, "MEMSITE_LLM_PROVIDER": "openai", "OPENAI_API_KEY": "sk-abusebench", "OPENAI_BASE_URL": url}
        server = stack.enter_context(serve({**env, **attack.env}, logs))
        port = stack.enter_context(nginx_in_front(server.port)) if attack.proxy else server.port
        target = Target(port, world, user=attack.key, proxied=attack.proxy)
        if attack.session:
            target.session = target.login()
        warm_up(target)
        workers = len(children(server.process.pid))
        watched = server.process.pid
        if attack.mcp:
            mcp = stack.enter_context(mcp_server({**env, **attack.env}))
            target.mcp_port, watched = mcp.port, mcp.process.pid
        with Watch(port, watched) as watch:
            time.sleep(idle_seconds)
            watch.attack_from = time.monotonic()
            outcome = attack.run(target)
            watch.attack_until = time.monotonic()
        return Result(attack, outcome, watch.health(), workers=workers)


RESULT_HEADER = (
    "attack",
    "s",
    "requests",
    "statuses",
    "largest refused response",
    "peak RSS above idle",
    "/healthz idle p50 / p95 ms",
    "during p50 / p95 ms",
    "/healthz target",
    "check",
)


def size_text(size: float) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if size >= scale:
            return f"{size / scale:,.1f} {unit}"
    return f"{size:,.0f} B"


def _ms_pair(stats: Stats) -> str:
    return f"{stats.p50:,.0f} / {stats.p95:,.0f}"


def result_cells(result: Result) -> tuple[str, ...]:
    title = f"{result.attack.key}. {result.attack.title}"
    if result.outcome is None or result.health is None:
        return (title, *["—"] * (len(RESULT_HEADER) - 2), result.skipped)
    answers, health = result.outcome.answers, result.health
    refusals = [answer.size for answer in answers if answer.status >= 400]
    largest = f"{size_text(max(refusals))} {mark(max(refusals) <= REFUSED_TARGET_BYTES)}" if refusals else "—"
    peak = f"{health.peak_mib:,.0f} MiB {mark(health.peak_mib <= RSS_TARGET_MIB)}"
    if health.replaced:
        peak += f" ({health.replaced} new workers)"
    during = _ms_pair(health.during)
    if health.unanswered:
        during += f" ({health.unanswered} of {health.probes} unanswered in {PROBE_TIMEOUT_S:g} s)"
    healthz = Row(
        title, health.during, health.idle, target=f"p95 ≤ {HEALTHZ_TARGET_MS} ms", target_ms=HEALTHZ_TARGET_MS
    )
    statuses = ", ".join(f"{n}× {label}" for label, n in Counter(answer.label for answer in answers).most_common())
    return (
        title,
        f"{health.seconds:.1f}",
        f"{len(answers):,}",
        statuses,
        largest,
        peak,
        _ms_pair(health.idle),
        during,
        healthz.verdict,
        result.outcome.check,
    )


QUEUE_TITLE = (
    "Descriptions beside a spent budget: another space's new document, queued after a spent space's "
    "backlog, in this process (benchmarks/measures/fairqueue.py)"
)


@dataclass
class AbuseReport:
    title: str
    preamble: list[str]
    results: list[Result]
    render: Report | None
    queue: Table | None = None
    notes: list[str] = field(default_factory=list)

    def table(self) -> Table:
        return Table(RESULT_HEADER, [result_cells(result) for result in self.results], "lrrllllll" + "l")

    @property
    def passed(self) -> bool:
        rows = [
            *self.table().rows,
            *(self.render.cells() if self.render else []),
            *(self.queue.rows if self.queue else []),
        ]
        return not any("✗" in cell for row in rows for cell in row)

    def text(self) -> str:
        lines = [self.title, *self.preamble, "", *self.table().text(), ""]
        if self.render:
            lines += [self.render.title, *self.render.preamble, "", *self.render.table().text(), ""]
        if self.queue:
            lines += [QUEUE_TITLE, "", *self.queue.text(), ""]
        return "\n".join([*lines, *self.notes])

    def markdown(self) -> str:
        lines = [f"## {self.title}", "", *self.preamble, "", *self.table().markdown(), ""]
        if self.render:
            lines += [f"### {self.render.title}", "", *self.render.preamble, "", *self.render.table().markdown(), ""]
        if self.queue:
            lines += [f"### {QUEUE_TITLE}", "", *self.queue.markdown(), ""]
        return "\n".join([*lines, *(f"- {note}" for note in self.notes), ""])


def result_notes(results: Sequence[Result]) -> list[str]:
    """The start of each row's largest refusal: what the server said, and how much of it."""
    notes = []
    for result in results:
        refusals = [answer for answer in (result.outcome.answers if result.outcome else []) if answer.status >= 400]
        if refusals:
            largest = max(refusals, key=lambda answer: answer.size)
            text = largest.body[:120].decode(errors="replace").replace("`", "'").replace("\n", " ")
            notes.append(f"{result.attack.key}: the largest refusal ({largest.status}) began `{text}`")
    return notes


def preamble(
    args: argparse.Namespace, scratch: Scratch, world: World, results: Sequence[Result], loads: tuple[float, float]
) -> list[str]:
    _, source = gunicorn_command(0)
    workers = max((result.workers for result in results), default=0)
    uploads = ", ".join(f"{kind} {size_text(len(blob))}" for kind, blob in world.long_names.items())
    return [
        (
            f"{date.today()}, {os.cpu_count()} CPUs, load average (1 min) {loads[0]:.2f} at the start and "
            f"{loads[1]:.2f} at the end, Python {platform.python_version()}, {database_version(scratch.vendor)}, "
            f"Redis {args.redis_url}."
        ),
        (
            f"gunicorn as {source} ({workers} workers seen), on loopback, DJANGO_DEBUG=false and a random "
            f"DJANGO_SECRET_KEY; a fresh gunicorn for each row, watched for {args.idle_seconds:g} s idle before the "
            f"attack. MEMSITE_API_RATE={OPEN_RATE} but in row 7. No Celery worker runs: queued work stays queued, "
            "so a `?wait` search waits its whole time, as behind a slow model."
        ),
        (
            f"Sizes: validation bodies {BODY_BYTES:,} bytes; long-name uploads {uploads}; the exported project "
            f"{size_text(world.export_bytes)} of zeros from a {size_text(world.export_upload_bytes)} upload; "
            f"markdown documents {DOCUMENT_BYTES:,} bytes (the nested list less)."
        ),
        (
            f"Targets: peak RSS of any worker ≤ {RSS_TARGET_MIB} MiB above its idle peak; no refused response over "
            f"{size_text(REFUSED_TARGET_BYTES)}; /healthz p95 ≤ {HEALTHZ_TARGET_MS} ms during the attack (probed every "
            f"{PROBE_S * 1000:.0f} ms, an unanswered probe counted as {PROBE_TIMEOUT_S:g} s); rendering ≤ "
            f"{RENDER_TARGET_MS} ms for any {DOCUMENT_BYTES // 1000} KB document."
        ),
        "",
        f"Command: `{command('abuse')}`",
    ]


# --- the world the attacks run against -----------------------------------------------------------


def seed(user_names: Sequence[str]) -> World:
    """A user with a token for each name, the agents and the graph the attacks write to, the
    hostile documents, an empty project and one of zeros to export, and the long-name uploads."""
    # As a deployment does before it serves: with DEBUG off, a page names its static files
    # from the manifest this writes (into the scratch folder's STATIC_ROOT).
    call_command("collectstatic", interactive=False, verbosity=0)
    password = secrets.token_urlsafe(16)
    tokens = {}
    for name in user_names:
        user = get_user_model().objects.create_user(username=f"abuse-{name}", password=password)
        membership_set(space=space_default(), member=user, role=Role.READER if name in READERS else Role.EDITOR)
        tokens[name] = token_create(member=user, space=space_default(), name="abuse benchmark").key
    space = space_default()
    memsite = system_principal(space)  # the benchmark's own documents and projects
    agents = [
        context_services.agent_create(space=space, name=f"abuse-agent-{i}", model=MODEL).pk for i in range(WAITERS)
    ]
    graph = graph_services.graph_create(space=space, task="Replay the attacks of the review.").pk
    folder = services.node_create(
        parent=selectors.node_internal_folder(space=space, name="swarmstar"),
        type="folder",
        name="abuse",
        description="Documents the abuse benchmark renders.",
        by=memsite,
    )
    markdown = hostile_markdown()
    documents = {
        label: services.node_create(
            parent=folder, type="document", name=f"hostile-{number}.md", content=text.encode(), by=memsite
        ).pk
        for number, (label, text) in enumerate(markdown.items())
    }
    projects = selectors.node_internal_folder(space=space, name="projects")
    upload = services.node_create(parent=projects, type="project_root_folder", name="abuse-upload", by=memsite)
    export = services.node_create(parent=projects, type="project_root_folder", name="abuse-export", by=memsite)
    blob = zeros_tar_gz(EXPORT_FILES, settings.MEMSITE_MAX_CONTENT_BYTES)
    services.project_import(project=export, archive=SimpleUploadedFile("zeros.tar.gz", blob), by=memsite)
    return World(
        password=password,
        tokens=tokens,
        agents=agents,
        graph=graph,
        upload_project=upload.pk,
        export_project=export.pk,
        export_upload_bytes=len(blob),
        export_bytes=EXPORT_FILES * settings.MEMSITE_MAX_CONTENT_BYTES,
        documents=documents,
        markdown=markdown,
        long_names={kind: long_name_tar_gz(kind) for kind in ("gnu", "pax")},
    )


# --- the attacks -----------------------------------------------------------------------------------


@dataclass
class Outcome:
    answers: list[Answer]
    check: str = ""  # the attack's own finding; ✓ or ✗ where it has a target


def mark(ok: bool) -> str:
    return "✓" if ok else "✗"


def refused(answers: list[Answer], created: int | None = None) -> Outcome:
    """Bad requests' outcome: each a 4xx, and nothing created."""
    ok = all(400 <= answer.status < 500 for answer in answers) and not created
    text = f"refused with {', '.join(answer.label for answer in answers)}"
    text += "" if created is None else f", {created} nodes created"
    return Outcome(answers, check=f"{text} {mark(ok)}")


def send_each(target: Target, method: str, url: str, bodies: Sequence[bytes]) -> Outcome:
    """The bodies one after the other: each request's peak is its own."""
    return refused([target.api(method, url, body) for body in bodies])


def bad_questions(target: Target) -> Outcome:
    return send_each(target, "POST", "/api/searches/", bad_bodies('{"questions": [', "{}", "]}"))


def bad_tool_calls(target: Target) -> Outcome:
    bodies = bad_bodies('{"role": "assistant", "tool_calls": [', "0", "]}")
    return send_each(target, "POST", f"/api/agents/{target.world.agents[0]}/messages/", bodies)


def bad_references(target: Target) -> Outcome:
    bodies = bad_bodies('{"role": "user", "content": "x", "references": [', '"x"', "]}")
    return send_each(target, "POST", f"/api/agents/{target.world.agents[0]}/messages/", bodies)


def bad_snapshot(target: Target) -> Outcome:
    bodies = bad_bodies('{"nodes": {"1": {"node_id": 1, "kind": "task", "thought": [', "0", ']}}, "edges": []}')
    return send_each(target, "PUT", f"/api/graphs/{target.world.graph}/snapshot/", bodies)


def long_name_upload(kind: str) -> Callable[[Target], Outcome]:
    def attack(target: Target) -> Outcome:
        project = target.world.upload_project
        body, content_type = multipart("archive", "names.tar.gz", target.world.long_names[kind])
        answer = target.api("POST", f"/api/nodes/{project}/import/", body, content_type=content_type, timeout=120)
        return refused([answer], created=Node.objects.filter(parent_id=project).count())

    return attack


def preview_start(text: str) -> str:
    """What the editor sends of `text` for a preview (static/js/editor.js): the start that fits
    the preview's cap, less room for the form's other fields, once form-encoded."""
    budget, size = settings.MEMSITE_PREVIEW_MAX_BYTES - 4096, 0
    for end, character in enumerate(text):
        size += len(quote_plus(character))
        if size > budget:
            return text[:end]
    return text


def markdown_pages(target: Target) -> Outcome:
    """Each hostile document's page and its preview, all at once: each answered within
    PAGE_TIMEOUT_S, or refused at once as one too many of the user's requests under way."""
    calls = [
        lambda node_id=node_id: target.page("GET", f"/memory/{node_id}/", timeout=PAGE_TIMEOUT_S)
        for node_id in target.world.documents.values()
    ]
    calls += [
        lambda text=text: target.page(
            "POST", "/user/preferences/preview/", {"content": preview_start(text)}, timeout=PAGE_TIMEOUT_S
        )
        for text in target.world.markdown.values()
    ]
    answers = concurrently(calls)
    good = sum(answer.status == 200 for answer in answers)
    busy = sum(answer.status == 429 for answer in answers)
    ok = good > 0 and good + busy == len(answers)
    check = f"{good} of {len(answers)} answered 200 within {PAGE_TIMEOUT_S:g} s, {busy} busy (429) {mark(ok)}"
    return Outcome(answers, check=check)


def slow_bodies(target: Target) -> Outcome:
    """Connections that announce a login form's body and never send it, held open."""
    request = (
        f"POST /login/ HTTP/1.1\r\nHost: 127.0.0.1:{target.port}\r\n"
        "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 4096\r\n\r\nusername="
    ).encode()
    answers = held_open(target.port, request, connections=SLOW_CONNECTIONS, hold=SLOW_HOLD_S)
    held = sum(answer.failure == "held open" for answer in answers)
    return Outcome(answers, check=f"{held} of {len(answers)} still open after {SLOW_HOLD_S:g} s")


def waiting(target: Target) -> Outcome:
    """Searches that wait for their end and chats with a slow model, all at once."""
    search = json.dumps({"questions": ["Where are the deployment notes?"]}).encode()
    chat = json.dumps({"text": "What are you working on?"}).encode()
    calls = [lambda: target.api("POST", "/api/searches/?wait=30", search, timeout=60)] * WAITERS
    calls += [
        lambda agent=agent: target.api("POST", f"/api/agents/{agent}/chat/", chat, timeout=60)
        for agent in target.world.agents[:WAITERS]
    ]
    answers = concurrently(calls)
    return Outcome(answers, check=f"longest answer {max(answer.ms for answer in answers) / 1000:.1f} s")


def _flood_check(answers: Sequence[Answer], accepted_status: int, calls: int, tokens: int) -> str:
    accepted = sum(answer.status == accepted_status for answer in answers)
    limited = sum(answer.status == 429 for answer in answers)
    return (
        f"{accepted} accepted ({accepted * calls:,} LLM calls, {accepted * tokens:,} tokens committed), "
        f"{limited} refused with 429 {mark(limited > 0)}"
    )


def api_flood(target: Target) -> Outcome:
    """One user queueing searches at the largest budgets the API allows."""
    body = json.dumps({"questions": ["What does memory hold?"], "budgets": BUDGET_CAPS}).encode()
    answers = repeatedly(lambda: target.api("POST", "/api/searches/", body), clients=4, seconds=60, count=FLOOD_API)
    return Outcome(answers, _flood_check(answers, 202, BUDGET_CAPS["max_llm_calls"], BUDGET_CAPS["max_tokens"]))


def dashboard_flood(target: Target) -> Outcome:
    """The same from the dashboard's form, at the default budgets."""
    form = {
        "questions": "What does memory hold?",
        "context": "",
        "start_node": "",
        "output": "answer",
        "fallback": "none",
    }
    answers = repeatedly(
        lambda: target.page("POST", "/searches/start/", form), clients=2, seconds=60, count=FLOOD_DASHBOARD
    )
    return Outcome(
        answers, _flood_check(answers, 302, settings.MEMSITE_SEARCH_MAX_LLM_CALLS, settings.MEMSITE_SEARCH_MAX_TOKENS)
    )


def rate_race(target: Target) -> Outcome:
    """Many clients of one user at once against a low rate limit."""
    answers = repeatedly(lambda: target.api("GET", "/api/nodes/roots/"), clients=RATE_CLIENTS, seconds=RATE_SECONDS)
    allowed = sum(answer.status == 200 for answer in answers)
    ok = allowed <= RATE_LIMIT
    return Outcome(answers, check=f"{allowed:,} allowed against a limit of {RATE_LIMIT} {mark(ok)}")


def exports(target: Target) -> Outcome:
    """Concurrent exports: each is sent whole, or refused at once as busy (a worker's slots for
    long requests are taken) and nothing else."""
    url = f"/api/nodes/{target.world.export_project}/export/"
    answers = concurrently([lambda: target.api("GET", url, timeout=300)] * EXPORTS)
    sent = sum(answer.status == 200 and answer.size > 0 for answer in answers)
    busy = sum(answer.status == 429 for answer in answers)
    ok = sent > 0 and sent + busy == EXPORTS
    return Outcome(answers, check=f"{sent} of {EXPORTS} sent whole, {busy} busy (429) {mark(ok)}")


def _sent(target: Target, url: str, body: bytes, headers: dict[str, str], cap: int) -> Answer:
    """`body` sent whole when it is within `cap`; past it, its head and start alone, for the
    server refuses it from its length (and closes the connection on a body sent whole)."""
    if len(body) > cap:
        return target.announce("POST", url, body, headers)
    return target.fetch("POST", url, body=body, headers=headers, timeout=60)


def _capped(target: Target, url: str, bodies: Sequence[bytes], headers: dict[str, str], cap: int) -> Outcome:
    """The bodies all at once: those past `cap` refused with 413, and those within it answered
    200, or 429 where the caller has as many requests under way as it may."""
    answers = concurrently([lambda body=body: _sent(target, url, body, headers, cap) for body in bodies])
    over = [answer for answer, body in zip(answers, bodies, strict=True) if len(body) > cap]
    within = [answer for answer, body in zip(answers, bodies, strict=True) if len(body) <= cap]
    refused = sum(answer.status == 413 for answer in over)
    served = sum(answer.status == 200 for answer in within)
    busy = sum(answer.status == 429 for answer in within)
    ok = refused == len(over) and served > 0 and served + busy == len(within)
    return Outcome(
        answers,
        check=f"over the cap: {refused} of {len(over)} 413; at it: {served} answered, {busy} busy (429) {mark(ok)}",
    )


def form_flood(target: Target) -> Outcome:
    """Anonymous logins carrying a field of percent escapes: the review's 31 MB one, and some at
    the form cap, all at once, each with a CSRF cookie and token of the client's own making."""
    csrf = secrets.token_hex(16)
    headers = {
        "Cookie": f"{settings.CSRF_COOKIE_NAME}={csrf}",
        "Content-Type": "application/x-www-form-urlencoded",
        "Origin": target.origin(),
    }
    sizes = [ESCAPES_BYTES] + [settings.DATA_UPLOAD_MAX_MEMORY_SIZE] * FORMS_AT_CAP
    # A username of the row's own: the failed logins of one row do not lock out the next's.
    fields = f"csrfmiddlewaretoken={csrf}&username=flood-{target.user}&password=x"
    bodies = [escaped_form(fields, "note", size) for size in sizes]
    return _capped(target, "/login/", bodies, headers, settings.DATA_UPLOAD_MAX_MEMORY_SIZE)


def preview_flood(target: Target) -> Outcome:
    """A reader's live previews of escaped text: at the content cap, as in the review,
    and at the preview's own cap, all at once."""
    sizes = [settings.MEMSITE_MAX_CONTENT_BYTES] * PREVIEWS + [settings.MEMSITE_PREVIEW_MAX_BYTES] * PREVIEWS
    headers = {**target.session, "Content-Type": "application/x-www-form-urlencoded", "HX-Request": "true"}
    bodies = [escaped_form("x=", "content", size) for size in sizes]
    return _capped(target, "/user/preferences/preview/", bodies, headers, settings.MEMSITE_PREVIEW_MAX_BYTES)


def mcp_flood(target: Target) -> Outcome:
    """A reader's token sending the MCP server 30 MiB bodies at once: a `memory_write` of a
    document that large."""
    content = "x" * (MCP_BODY_BYTES - 200)
    arguments = {"parent": "/swarmstar/abuse", "name": "flood.md", "content": content}
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "memory_write", "arguments": arguments},
    }
    body = json.dumps(message).encode()
    answers = concurrently([lambda: target.mcp(body)] * MCP_BODIES)
    refused = sum(answer.status in (413, 429, 503) for answer in answers)
    ok = all(0 < answer.status < 500 or answer.status == 503 for answer in answers)
    return Outcome(answers, check=f"{refused} of {MCP_BODIES} refused before they were read {mark(ok)}")


def busy_user(target: Target) -> Outcome:
    """One user's many connections asking for passages back to back, within every cap."""
    body = json.dumps({"query": "Which documents hold hostile markdown?", "k": 20}).encode()
    answers = repeatedly(lambda: target.api("POST", "/api/retrieve/", body), clients=BUSY_CLIENTS, seconds=BUSY_SECONDS)
    served = sum(answer.status == 200 for answer in answers)
    busy = sum(answer.status == 429 for answer in answers)
    ok = served > 0 and served + busy == len(answers)
    return Outcome(answers, check=f"{served:,} served, {busy:,} refused as busy (429) {mark(ok)}")


@dataclass(frozen=True)
class Attack:
    key: str
    title: str
    run: Callable[[Target], Outcome]
    env: dict[str, str] = field(default_factory=dict)
    llm_delay: float | None = None  # a fake model answering after this many seconds
    proxy: bool = False  # through nginx
    session: bool = False  # as a logged-in browser
    mcp: bool = False  # against an MCP server of its own, whose memory is watched instead


ATTACKS = [
    Attack(
        "1a",
        f"validation: {BODY_BYTES / 1e6:.1f} MB, then {BAD_ITEMS:,} items, of bad `questions` (POST /api/searches/)",
        bad_questions,
    ),
    Attack("1b", "validation: the same of bad `tool_calls` (POST /api/agents/{id}/messages/)", bad_tool_calls),
    Attack("1c", "validation: the same of bad `references` (POST /api/agents/{id}/messages/)", bad_references),
    Attack("1d", "validation: the same of a snapshot's bad notes (PUT /api/graphs/{id}/snapshot/)", bad_snapshot),
    Attack(
        "2a",
        f"tar: a GNU long-name header of {LONG_NAME_BYTES // MiB} MiB (POST /api/nodes/{{id}}/import/)",
        long_name_upload("gnu"),
    ),
    Attack(
        "2b",
        f"tar: a PAX path of {LONG_NAME_BYTES // MiB} MiB (POST /api/nodes/{{id}}/import/)",
        long_name_upload("pax"),
    ),
    Attack(
        "3", "markdown: 4 hostile documents' pages (/memory/{id}/) and previews, at once", markdown_pages, session=True
    ),
    Attack(
        "4a",
        f"slow bodies: {SLOW_CONNECTIONS} POST /login/ without their body, {SLOW_HOLD_S:g} s, gunicorn",
        slow_bodies,
    ),
    Attack("4b", "slow bodies: the same through nginx (deploy/nginx)", slow_bodies, proxy=True),
    Attack(
        "5",
        f"waiting: {WAITERS} searches ?wait=30 and {WAITERS} chats to a {LLM_DELAY_S:g} s model, at once",
        waiting,
        llm_delay=LLM_DELAY_S,
    ),
    Attack("6a", f"background: {FLOOD_API} searches at the largest budgets (API)", api_flood),
    Attack("6b", f"background: {FLOOD_DASHBOARD} searches from the dashboard", dashboard_flood, session=True),
    Attack(
        "7",
        f"rate limiter: {RATE_CLIENTS} clients for {RATE_SECONDS:g} s against {RATE_LIMIT}/hour",
        rate_race,
        env={"MEMSITE_API_RATE": f"{RATE_LIMIT}/hour"},
    ),
    Attack(
        "8",
        f"export: {EXPORTS} exports at once of a project of "
        f"{EXPORT_FILES * settings.MEMSITE_MAX_CONTENT_BYTES // MiB} MiB of zeros",
        exports,
    ),
    Attack(
        "9a",
        f"forms: an anonymous {ESCAPES_BYTES / 1e6:.0f} MB login of percent escapes and {FORMS_AT_CAP} at the "
        "form cap, at once",
        form_flood,
    ),
    Attack("9b", "forms: the same through nginx", form_flood, proxy=True),
    Attack(
        "9c",
        f"previews: {PREVIEWS} at the content cap and {PREVIEWS} at the preview's cap, at once",
        preview_flood,
        session=True,
    ),
    Attack(
        "10",
        f"MCP: {MCP_BODIES} bodies of {MCP_BODY_BYTES // MiB} MiB at once, a reader's token",
        mcp_flood,
        mcp=True,
    ),
    Attack(
        "11",
        f"one busy user: {BUSY_CLIENTS} connections asking for passages for {BUSY_SECONDS:g} s",
        busy_user,
    ),
]


# --- rendering in-process ------------------------------------------------------------------------


def render_report(world: World, *, repeats: int, timeout: float) -> Report:
    connections.close_all()  # forked children must not share the database connection
    baseline, _ = time_render(ordinary_markdown(), repeats, timeout)
    report = Report(
        title=f"Rendering in-process (memory/rendering.py), {repeats} renders of each document",
        preamble=[
            (
                f"Baseline: {DOCUMENT_BYTES:,} bytes of ordinary markdown (headings, emphasis, links, lists, "
                "quotes). ratio: the baseline's p50 over the document's; below 1, the document is slower."
            )
        ],
    )
    for label, text in world.markdown.items():
        millis, problem = time_render(text, repeats, timeout)
        report.rows.append(
            Row(
                f"{label} ({len(text):,} B{', ' + problem if problem else ''})",
                Stats.of(millis),
                Stats.of(baseline),
                target=f"p95 ≤ {RENDER_TARGET_MS} ms",
                # A render that raised or was stopped misses the target whatever its time.
                target_ms=-math.inf if problem else RENDER_TARGET_MS,
            )
        )
    return report
