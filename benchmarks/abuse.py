"""Can one user take memsite down? Replays the attacks of a hostile review against gunicorn on
this machine, started as production starts it (deploy/gunicorn.conf.py, else the Procfile), on
PostgreSQL and Redis, loopback only, each attack bounded in size and time:

1. validation errors: 0.9 MB, then 90,000 items, of bad `questions`, `tool_calls`, `references`,
   snapshot notes;
2. tar long names: a GNU `L` and a PAX header of 400 MiB in a ~400 KiB upload;
3. markdown: 200 KB of `[`, of `[^`, of `<div>`, and a list nested 300 deep, as pages and
   previews; and each rendered in-process by memory/rendering.py, in a child killed when late;
4. slow bodies: 40 logins that never send their body, held 15 s, to gunicorn and through nginx
   (deploy/nginx/default.conf.template, when it and /usr/sbin/nginx exist);
5. waiting: 6 searches with ?wait=30 and 6 chats to a model that takes 20 s, at once;
6. background work: one user queueing 300 searches at the largest budgets, and 100 from the
   dashboard;
7. the rate limiter: 24 clients of one user for 10 s against 120 requests an hour;
8. export: 6 exports at once of a 190 MiB project made from a ~190 KiB upload.

For each it prints the peak resident memory of any worker above its idle peak (sampled every
50 ms), the largest refused response, the statuses, and /healthz p50/p95 while it runs (probed
every 100 ms) beside the same server's idle figures, each against its target. Also written to
benchmarks/results/abuse-postgresql.md; exits 1 if a target is missed.

    python benchmarks/abuse.py
    python benchmarks/abuse.py --only 1,4 --skip-render      # some of the attacks

The database is created fresh and dropped at the end (--keep keeps it); its name must contain
'bench'. The Redis database must be empty and not 0; the run's keys are deleted at the end."""

from __future__ import annotations

import argparse
import gzip
import http.client
import io
import itertools
import json
import math
import multiprocessing
import os
import platform
import secrets
import select
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, Self, TypeVar
from urllib.parse import urlencode

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.harness import above, run_on_services, services_parser

# --- the command ------------------------------------------------------------------------------

DEFAULT_DATABASE = "postgres://postgres@127.0.0.1:5432/memsite_abusebench"
DEFAULT_REDIS = "redis://127.0.0.1:6379/8"


def parse_args() -> argparse.Namespace:
    parser = services_parser(__doc__, database=DEFAULT_DATABASE, redis=DEFAULT_REDIS)
    parser.add_argument(
        "--only",
        type=lambda text: [key.strip() for key in text.split(",") if key.strip()],
        default=[],
        help="the attacks to run, by number or row (1,4b); default all",
    )
    parser.add_argument("--skip-render", action="store_true", help="leave out the in-process rendering table")
    parser.add_argument(
        "--render-timeout",
        type=above(0, at_most=600, unit="seconds"),
        default=10,
        help="seconds the renders of one document may take before they are stopped (default 10)",
    )
    parser.add_argument(
        "--idle-seconds",
        type=above(0, at_most=600, unit="seconds"),
        default=3,
        help="seconds each fresh server is watched idle before its attack (default 3)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    return parser.parse_args()


def main() -> None:
    run_on_services("abuse", parse_args(), {})


if __name__ == "__main__":
    main()  # which ran the copy of this file imported once Django was set up
    sys.exit()


# The project: importable only once scratch_database has set Django up.
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.db import connections

from agents.context import services as context_services
from agents.graphs import services as graph_services
from benchmarks.brainfill import MODEL
from benchmarks.harness import (
    REPO,
    Report,
    Row,
    Scratch,
    Stats,
    Table,
    command,
    database_version,
    free_port,
    wait_until_serving,
)
from benchmarks.offlinellm import llm_server
from memory import selectors, services
from memory.models import Node
from memory.services.searches import BUDGET_CAPS
from memsite.spaces.logic import Role
from memsite.spaces.selectors import space_default
from memsite.spaces.services import membership_set, token_create

GUNICORN_CONF = REPO / "deploy" / "gunicorn.conf.py"
NGINX_TEMPLATE = REPO / "deploy" / "nginx" / "default.conf.template"
NGINX = Path("/usr/sbin/nginx")
MiB = 1024 * 1024

# The targets.
RSS_TARGET_MIB = 64
REFUSED_TARGET_BYTES = MiB
HEALTHZ_TARGET_MS = 200
RENDER_TARGET_MS = 100

# What is watched, and how.
SAMPLE_S = 0.05
PROBE_S = 0.1
PROBE_TIMEOUT_S = 5.0  # a probe not answered by then counts as this long
HEAD_BYTES = 200  # of each answer's body, kept for the notes

# The attacks' sizes: those of the review that found them, within every limit the server sets.
BODY_BYTES = 900_000
BAD_ITEMS = 90_000  # under the 100,000 values of a JSON document the API parses at most
LONG_NAME_BYTES = 400 * MiB
DOCUMENT_BYTES = 200_000
NESTING = 300
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
# Everything else runs with a rate no attack reaches: a 429 then comes from the limit under test.
OPEN_RATE = "100000/min"

T = TypeVar("T")


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
    has loaded what a request loads before its idle memory is read. As a user of its own: the
    rate limiter under test counts the attack's user only."""
    warm = Target(target.port, target.world, user="warm", session=target.session)
    calls = [lambda: fetch(target.port, "GET", "/healthz"), lambda: warm.api("GET", "/api/nodes/roots/")] * 6
    if target.session:
        calls += [lambda: warm.page("GET", "/memory/")] * 6
    for start in range(0, len(calls), 6):
        concurrently(calls[start : start + 6])


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
        target = Target(port, world, user=attack.key)
        if attack.session:
            target.session = login(port, f"abuse-{attack.key}", world.password)
        warm_up(target)
        workers = len(children(server.process.pid))
        with Watch(port, server.process.pid) as watch:
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


@dataclass
class AbuseReport:
    title: str
    preamble: list[str]
    results: list[Result]
    render: Report | None
    notes: list[str] = field(default_factory=list)

    def table(self) -> Table:
        return Table(RESULT_HEADER, [result_cells(result) for result in self.results], "lrrllllll" + "l")

    @property
    def passed(self) -> bool:
        rows = [*self.table().rows, *(self.render.cells() if self.render else [])]
        return not any("✗" in cell for row in rows for cell in row)

    def text(self) -> str:
        lines = [self.title, *self.preamble, "", *self.table().text(), ""]
        if self.render:
            lines += [self.render.title, *self.render.preamble, "", *self.render.table().text(), ""]
        return "\n".join([*lines, *self.notes])

    def markdown(self) -> str:
        lines = [f"## {self.title}", "", *self.preamble, "", *self.table().markdown(), ""]
        if self.render:
            lines += [f"### {self.render.title}", "", *self.render.preamble, "", *self.render.table().markdown(), ""]
        return "\n".join([*lines, *(f"- {note}" for note in self.notes), ""])


def result_notes(results: Sequence[Result]) -> list[str]:
    """The start of each row's largest refusal: what the server said, and how much of it."""
    notes = []
    for result in results:
        refusals = [answer for answer in (result.outcome.answers if result.outcome else []) if answer.status >= 400]
        if refusals:
            largest = max(refusals, key=lambda answer: answer.size)
            text = largest.head[:120].decode(errors="replace").replace("`", "'").replace("\n", " ")
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


# --- payloads ------------------------------------------------------------------------------------


def bad_bodies(prefix: str, item: str, suffix: str) -> list[bytes]:
    """JSON bodies of bad items (`prefix`, `item` over and over, comma-separated, `suffix`): one
    of BODY_BYTES, as in the review, and one of BAD_ITEMS items, which a parser's cap on the
    values of a document lets through to validation."""
    whole = max(1, (BODY_BYTES - len(prefix) - len(suffix)) // (len(item) + 1))
    return [(prefix + ",".join([item] * count) + suffix).encode() for count in (whole, BAD_ITEMS)]


def _tar_header(name: str, kind: bytes, size: int) -> bytes:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.size = size
    return info.tobuf(tarfile.GNU_FORMAT)


def _pax_prefix(length: int) -> bytes:
    """The start of a PAX `path` record whose value is `length` bytes: the record's length
    counts its own digits."""
    rest = len(" path=") + length + 1  # the newline ends the record
    digits = len(str(rest))
    while len(str(rest + digits)) != digits:
        digits += 1
    return f"{rest + digits} path=".encode()


def long_name_tar_gz(kind: str, length: int = LONG_NAME_BYTES) -> bytes:
    """A .tar.gz of one empty file whose name, `length` bytes of 'a', comes in a GNU long-name
    header (`gnu`) or a PAX header (`pax`): gzip shrinks it a thousandfold, and tarfile reads
    such a header whole before any cap can apply."""
    if kind == "gnu":
        name, header_type, prefix, suffix = "././@LongLink", tarfile.GNUTYPE_LONGNAME, b"", b"\0"
    else:
        name, header_type, prefix, suffix = "././@PaxHeader", tarfile.XHDTYPE, _pax_prefix(length), b"\n"
    size = len(prefix) + length + len(suffix)
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", compresslevel=9) as out:
        out.write(_tar_header(name, header_type, size) + prefix)
        chunk = b"a" * MiB
        for start in range(0, length, MiB):
            out.write(chunk[: length - start])
        out.write(suffix + b"\0" * (-size % tarfile.BLOCKSIZE))
        out.write(_tar_header("short.txt", tarfile.REGTYPE, 0) + b"\0" * (2 * tarfile.BLOCKSIZE))
    return buffer.getvalue()


class Zeros:
    """A file of `size` zero bytes that is never held in memory whole."""

    def __init__(self, size: int) -> None:
        self.left = size

    def read(self, size: int = -1) -> bytes:
        size = self.left if size < 0 else min(size, self.left)
        self.left -= size
        return bytes(size)


def zeros_tar_gz(files: int, size: int) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for number in range(files):
            info = tarfile.TarInfo(f"blob-{number:02d}.bin")
            info.size = size
            archive.addfile(info, Zeros(size))
    return buffer.getvalue()


def hostile_markdown(size: int = DOCUMENT_BYTES) -> dict[str, str]:
    """The documents that made the renderer super-linear, or made it raise."""
    return {
        f"'[' × {size:,}": "[" * size,
        f"'[^' × {size // 2:,}": "[^" * (size // 2),
        f"'<div>' × {size // 5:,}": "<div>" * (size // 5),
        f"a list nested {NESTING} deep": "".join("    " * depth + "- item\n" for depth in range(NESTING)),
    }


def ordinary_markdown(size: int = DOCUMENT_BYTES) -> str:
    """The baseline: a document of the same size as people write them."""
    block = (
        "## Deployment notes\n\nThe *web* tier runs behind a proxy; see [the runbook](https://example.org/run) "
        "and `make run`.\n\n- first, migrate\n- then start the workers\n\n> Check the queue before a release.\n\n"
    )
    return (block * (size // len(block) + 1))[:size]


def multipart(field_name: str, filename: str, blob: bytes) -> tuple[bytes, str]:
    boundary = secrets.token_hex(16)
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="{field_name}"; filename="{filename}"\r\n'
        "Content-Type: application/gzip\r\n\r\n"
    )
    return head.encode() + blob + f"\r\n--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


# --- HTTP ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    status: int  # 0: no answer
    size: int  # the body's bytes, counted as they came, never held whole
    head: bytes  # the body's first bytes
    ms: float
    failure: str = ""  # "timeout", "connection", or what became of a slow body
    cookies: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return self.failure or str(self.status)


def proxy_headers() -> dict[str, str]:
    """What a TLS-terminating proxy adds, when the settings trust one: the server then takes the
    request for HTTPS, as it would in production, and does not redirect it."""
    header = getattr(settings, "SECURE_PROXY_SSL_HEADER", None)
    if not header:
        return {}
    name, value = header
    return {name.removeprefix("HTTP_").replace("_", "-"): value}


def origin(port: int) -> str:
    return f"{'https' if proxy_headers() else 'http'}://127.0.0.1:{port}"


def fetch(
    port: int,
    method: str,
    url: str,
    *,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
    timeout: float = 30.0,
) -> Answer:
    """One request on a connection of its own; the body is read to its end and counted."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    started = time.perf_counter()
    try:
        conn.request(method, url, body=body, headers={**proxy_headers(), **(headers or {})})
        response = conn.getresponse()
        head = response.read(HEAD_BYTES)
        size = len(head)
        while chunk := response.read(MiB):
            size += len(chunk)
        cookies = tuple(response.headers.get_all("Set-Cookie") or ())
        return Answer(response.status, size, head, (time.perf_counter() - started) * 1000, cookies=cookies)
    except TimeoutError:
        return Answer(0, 0, b"", (time.perf_counter() - started) * 1000, "timeout")
    except (OSError, http.client.HTTPException):
        return Answer(0, 0, b"", (time.perf_counter() - started) * 1000, "connection")
    finally:
        conn.close()


def concurrently(calls: Sequence[Callable[[], T]]) -> list[T]:
    """Every call at once, each in a thread of its own."""
    with ThreadPoolExecutor(max_workers=max(1, len(calls))) as pool:
        return list(pool.map(lambda call: call(), calls))


def repeatedly(call: Callable[[], Answer], *, clients: int, seconds: float, count: int | None = None) -> list[Answer]:
    """`clients` threads making `call` back to back until `count` calls are made or `seconds` pass."""
    deadline = time.monotonic() + seconds
    numbers = itertools.count()
    lock = threading.Lock()

    def client() -> list[Answer]:
        mine = []
        while time.monotonic() < deadline:
            with lock:
                number = next(numbers)
            if count is not None and number >= count:
                break
            mine.append(call())
        return mine

    return [answer for answers in concurrently([client] * clients) for answer in answers]


def login(port: int, username: str, password: str) -> dict[str, str]:
    """The headers of a logged-in browser: its session and CSRF cookies and the CSRF header."""
    csrf = secrets.token_hex(16)  # a CSRF secret of the length and alphabet Django's own has
    cookie = f"{settings.CSRF_COOKIE_NAME}={csrf}"
    form = urlencode({"username": username, "password": password, "csrfmiddlewaretoken": csrf}).encode()
    answer = fetch(
        port,
        "POST",
        "/login/",
        body=form,
        headers={
            "Cookie": cookie,
            "Content-Type": "application/x-www-form-urlencoded",
            "Origin": origin(port),
        },
    )
    prefix = f"{settings.SESSION_COOKIE_NAME}="
    session = next((c.split(";")[0] for c in answer.cookies if c.startswith(prefix)), None)
    if answer.status != 302 or session is None:
        raise SystemExit(f"Logging in as {username} answered {answer.label}: {answer.head!r}")
    return {"Cookie": f"{cookie}; {session}", "X-CSRFToken": csrf, "Origin": origin(port)}


# --- the world the attacks run against -----------------------------------------------------------


@dataclass
class World:
    password: str
    tokens: dict[str, str]  # by user name: each attack has a user of its own
    agents: list[int]
    graph: int
    upload_project: str  # empty: the long-name archives are uploaded into it
    export_project: str
    export_upload_bytes: int
    export_bytes: int
    documents: dict[str, str]  # hostile markdown documents' ids, by label
    markdown: dict[str, str]  # their text, by label
    long_names: dict[str, bytes] = field(default_factory=dict)  # the .tar.gz uploads, by header kind


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
        membership_set(space=space_default(), user=user, role=Role.EDITOR)
        tokens[name] = token_create(user=user, name="abuse benchmark").key
    owner = get_user_model().objects.get(username=f"abuse-{user_names[0]}")
    agents = [context_services.agent_create(name=f"abuse-agent-{i}", model=MODEL).pk for i in range(WAITERS)]
    graph = graph_services.graph_create(task="Replay the attacks of the review.").pk
    folder = services.node_create(
        parent=selectors.node_internal_folder(name="swarmstar"),
        type="folder",
        name="abuse",
        description="Documents the abuse benchmark renders.",
    )
    markdown = hostile_markdown()
    documents = {
        label: services.node_create(
            parent=folder, type="document", name=f"hostile-{number}.md", content=text.encode()
        ).pk
        for number, (label, text) in enumerate(markdown.items())
    }
    projects = selectors.node_internal_folder(name="projects")
    upload = services.node_create(parent=projects, type="project_root_folder", name="abuse-upload")
    export = services.node_create(parent=projects, type="project_root_folder", name="abuse-export")
    blob = zeros_tar_gz(EXPORT_FILES, settings.MEMSITE_MAX_CONTENT_BYTES)
    services.project_import(project=export, archive=SimpleUploadedFile("zeros.tar.gz", blob), user=owner)
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


@dataclass
class Target:
    """Where an attack goes (gunicorn, or nginx in front of it), as which user."""

    port: int
    world: World
    user: str
    session: dict[str, str] = field(default_factory=dict)

    def api(
        self,
        method: str,
        url: str,
        body: bytes | None = None,
        *,
        content_type: str = "application/json",
        timeout: float = 30.0,
    ) -> Answer:
        headers = {"Authorization": f"Token {self.world.tokens[self.user]}", "Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = content_type
        return fetch(self.port, method, url, body=body, headers=headers, timeout=timeout)

    def page(self, method: str, url: str, form: dict[str, str] | None = None, *, timeout: float = 30.0) -> Answer:
        headers, body = dict(self.session), None
        if form is not None:
            headers["Content-Type"] = "application/x-www-form-urlencoded"
            body = urlencode(form).encode()
        return fetch(self.port, method, url, body=body, headers=headers, timeout=timeout)


# --- the server ----------------------------------------------------------------------------------


def children(pid: int) -> list[int]:
    try:
        return [int(word) for word in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def rss_kib(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


def gunicorn_command(port: int) -> tuple[list[str], str]:
    """gunicorn as production starts it, bound to a loopback port: with deploy/gunicorn.conf.py
    when there is one, else with the Procfile's web command; and which of the two it was."""
    binary = str(Path(sys.executable).parent / "gunicorn")
    bind = f"--bind=127.0.0.1:{port}"
    if GUNICORN_CONF.exists():
        return [binary, f"--config={GUNICORN_CONF}", bind, "memsite.wsgi:application"], "deploy/gunicorn.conf.py"
    line = next(line for line in (REPO / "Procfile").read_text().splitlines() if line.startswith("web:"))
    words, kept = shlex.split(line.removeprefix("web:"))[1:], []
    skip = False
    for word in words:
        if skip or word in ("--bind", "-b"):
            skip = not skip
            continue
        if not word.startswith("--bind="):
            kept.append(word)
    return [binary, *kept, bind], "the Procfile's web command"


@dataclass
class Server:
    port: int
    process: subprocess.Popen


def _kill_leftovers(pids: Sequence[int], marker: bytes) -> None:
    """SIGKILL the processes that are still ours (their command line holds `marker`): a worker
    with a thread stuck in an attack would hold a graceful shutdown for its whole timeout."""
    for pid in pids:
        try:
            if marker in Path(f"/proc/{pid}/cmdline").read_bytes():
                os.kill(pid, signal.SIGKILL)
        except (OSError, ProcessLookupError):
            pass


@contextmanager
def serve(env: dict[str, str], logs: Path) -> Iterator[Server]:
    port = free_port()
    command, _ = gunicorn_command(port)
    with open(logs / "gunicorn.log", "ab") as log:
        process = subprocess.Popen(command, cwd=REPO, env={**os.environ, **env}, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_until_serving(port, process)
        yield Server(port, process)
    finally:
        workers = children(process.pid)
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        _kill_leftovers(workers, f"127.0.0.1:{port}".encode())


def nginx_missing() -> str:
    if not NGINX.exists():
        return "skipped: nginx is not installed (`apt-get install nginx-light`, or `make bench` as root)"
    if not NGINX_TEMPLATE.exists():
        return "skipped: deploy/nginx/default.conf.template does not exist yet"
    return ""


NGINX_CONF = """daemon off;
worker_processes 1;
pid {root}/nginx.pid;
error_log {root}/error.log warn;
{user}
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {root}/body;
    proxy_temp_path {root}/proxy;
    fastcgi_temp_path {root}/fastcgi;
    uwsgi_temp_path {root}/uwsgi;
    scgi_temp_path {root}/scgi;
    include {root}/server.conf;
}}
"""


@contextmanager
def nginx_in_front(upstream: int) -> Iterator[int]:
    """nginx on a loopback port of its own, with deploy/nginx's server block in front of the
    gunicorn on `upstream`, its temporary files in a folder of its own."""
    root = Path(tempfile.mkdtemp(prefix="memsite-abusebench-nginx-"))
    root.chmod(0o755)  # as root, nginx's workers run as nobody and must reach the temp paths
    port = free_port()
    server = NGINX_TEMPLATE.read_text().replace("${MEMSITE_UPSTREAM}", f"127.0.0.1:{upstream}")
    # An address with the port: nginx listens on loopback only.
    (root / "server.conf").write_text(server.replace("${MEMSITE_PROXY_PORT}", f"127.0.0.1:{port}"))
    user = "user nobody nogroup;" if os.geteuid() == 0 else ""
    (root / "nginx.conf").write_text(NGINX_CONF.format(root=root, user=user))
    with open(root / "stderr.log", "wb") as log:
        process = subprocess.Popen(
            [str(NGINX), "-p", str(root), "-c", str(root / "nginx.conf")], stdout=log, stderr=subprocess.STDOUT
        )
    try:
        wait_until_serving(port, process, timeout=20)
        yield port
    finally:
        process.terminate()  # nginx's fast shutdown
        process.wait(timeout=10)
        shutil.rmtree(root, ignore_errors=True)


# --- watching --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Health:
    idle: Stats
    during: Stats
    probes: int  # during the attack
    unanswered: int  # of those: no answer within PROBE_TIMEOUT_S
    peak_mib: float  # the largest rise of one worker's resident memory over its idle peak
    replaced: int  # workers that appeared during the attack: a killed worker's successors
    seconds: float


class Recorder:
    """Every gunicorn worker's resident memory every 50 ms, and /healthz every 100 ms, each probe
    on a connection and a thread of its own (a load balancer's checks do not wait for each
    other), until `stop` is set. Runs in a process of its own (`Watch`): in the attack's
    process, the attack's client threads would delay the probes and the samples."""

    def __init__(self, port: int, master: int, stop: Any) -> None:
        self.port, self.master, self.stop = port, master, stop
        self.lock = threading.Lock()
        self.rss: list[tuple[float, dict[int, int]]] = []
        self.probes: list[tuple[float, float, bool]] = []  # started, ms, answered

    def _sample(self) -> None:
        while not self.stop.wait(SAMPLE_S):
            sample = {pid: kib for pid in children(self.master) if (kib := rss_kib(pid)) is not None}
            self.rss.append((time.monotonic(), sample))

    def _probe(self) -> None:
        started = time.monotonic()
        answer = fetch(self.port, "GET", "/healthz", timeout=PROBE_TIMEOUT_S)
        ms = answer.ms if answer.status else PROBE_TIMEOUT_S * 1000
        with self.lock:
            self.probes.append((started, ms, bool(answer.status)))

    def run(self, send: Any) -> None:
        sampler = threading.Thread(target=self._sample)
        sampler.start()
        probes = []
        while not self.stop.wait(PROBE_S):
            probes.append(threading.Thread(target=self._probe))
            probes[-1].start()
        for thread in [sampler, *probes]:
            thread.join()
        send.send((self.rss, self.probes))


class Watch:
    """A `Recorder` in a forked process from entry to exit, its records split into the idle
    time before the attack (until `attack_from`) and the attack."""

    def __init__(self, port: int, master: int) -> None:
        self.port, self.master = port, master
        self.rss: list[tuple[float, dict[int, int]]] = []
        self.probes: list[tuple[float, float, bool]] = []
        self.attack_from = self.attack_until = math.inf  # time.monotonic(), the same clock in both processes

    def __enter__(self) -> Self:
        connections.close_all()  # the child must not share the database connection
        context = multiprocessing.get_context("fork")
        self.stop = context.Event()
        self.receive, send = context.Pipe(duplex=False)
        recorder = Recorder(self.port, self.master, self.stop)
        self.process = context.Process(target=recorder.run, args=(send,), daemon=True)
        self.process.start()
        send.close()
        return self

    def __exit__(self, *exc: object) -> None:
        self.attack_until = min(self.attack_until, time.monotonic())
        self.stop.set()
        if self.receive.poll(PROBE_TIMEOUT_S + 30):
            self.rss, self.probes = self.receive.recv()
        self.process.join(timeout=5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()

    def health(self) -> Health:
        idle = [ms for started, ms, _ in self.probes if started < self.attack_from]
        during = [(ms, ok) for started, ms, ok in self.probes if self.attack_from <= started < self.attack_until]
        peak, replaced = self._peak_above_idle()
        return Health(
            idle=Stats.of(idle or [0.0]),
            during=Stats.of([ms for ms, _ in during] or [0.0]),
            probes=len(during),
            unanswered=sum(not ok for _, ok in during),
            peak_mib=peak,
            replaced=replaced,
            seconds=self.attack_until - self.attack_from,
        )

    def _peak_above_idle(self) -> tuple[float, int]:
        idle: dict[int, int] = {}
        peak: dict[int, int] = {}
        for at, sample in self.rss:
            book = idle if at < self.attack_from else peak if at < self.attack_until else {}
            for pid, kib in sample.items():
                book[pid] = max(book.get(pid, 0), kib)
        # A worker born during the attack (a killed one's successor) has no idle peak of its own:
        # the largest idle worker's stands in.
        floor = max(idle.values(), default=0)
        rise = max((kib - idle.get(pid, floor) for pid, kib in peak.items()), default=0)
        return max(rise, 0) / 1024, len(set(peak) - set(idle))


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


def markdown_pages(target: Target) -> Outcome:
    """Each hostile document's page and its preview, all at once."""
    calls = [
        lambda node_id=node_id: target.page("GET", f"/memory/{node_id}/", timeout=PAGE_TIMEOUT_S)
        for node_id in target.world.documents.values()
    ]
    calls += [
        lambda text=text: target.page("POST", "/user/preferences/preview/", {"content": text}, timeout=PAGE_TIMEOUT_S)
        for text in target.world.markdown.values()
    ]
    answers = concurrently(calls)
    good = sum(answer.status == 200 for answer in answers)
    ok = good == len(answers)
    return Outcome(answers, check=f"{good} of {len(answers)} answered 200 within {PAGE_TIMEOUT_S:g} s {mark(ok)}")


def _slow_answers(sockets: Sequence[socket.socket]) -> list[Answer]:
    """What the server did with each connection whose body never came: answered it, closed it,
    or holds it still."""
    readable, _, _ = select.select(sockets, [], [], 0.2)
    answers = []
    for sock in sockets:
        if sock not in readable:
            answers.append(Answer(0, 0, b"", SLOW_HOLD_S * 1000, "held open"))
            continue
        try:
            data = sock.recv(64 * 1024)  # an error page: a few hundred bytes
        except OSError:
            data = None
        if not data:
            answers.append(Answer(0, 0, b"", 0, "closed" if data is not None else "reset"))
            continue
        status = int(data.split()[1]) if data.startswith(b"HTTP/") else 0
        answers.append(Answer(status, len(data), data[:HEAD_BYTES], 0))
    return answers


def slow_bodies(target: Target) -> Outcome:
    """Connections that announce a login form's body and never send it, held open."""
    request = (
        f"POST /login/ HTTP/1.1\r\nHost: 127.0.0.1:{target.port}\r\n"
        "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 4096\r\n\r\nusername="
    ).encode()
    sockets: list[socket.socket] = []
    try:
        for _ in range(SLOW_CONNECTIONS):
            sock = socket.create_connection(("127.0.0.1", target.port), timeout=5)
            sockets.append(sock)
            sock.sendall(request)
        time.sleep(SLOW_HOLD_S)
        answers = _slow_answers(sockets)
    finally:
        for sock in sockets:
            sock.close()
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


@dataclass(frozen=True)
class Attack:
    key: str
    title: str
    run: Callable[[Target], Outcome]
    env: dict[str, str] = field(default_factory=dict)
    llm_delay: float | None = None  # a fake model answering after this many seconds
    proxy: bool = False  # through nginx
    session: bool = False  # as a logged-in browser


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
]


# --- rendering in-process ------------------------------------------------------------------------


def _render_child(text: str, repeats: int, send: Any) -> None:
    from memory.rendering import markdown_to_html

    markdown_to_html("*warm*")  # imports and extensions loaded before the clock starts
    for _ in range(repeats):
        started = time.perf_counter()
        try:
            markdown_to_html(text)
        except Exception as exc:  # noqa: BLE001 - what a page would show as a 500
            send.send((f"raised {type(exc).__name__}", (time.perf_counter() - started) * 1000))
            return
        send.send(("", (time.perf_counter() - started) * 1000))


def time_render(text: str, repeats: int, timeout: float) -> tuple[list[float], str]:
    """Milliseconds of each render of `text` by memory/rendering.py, in a forked child killed
    after `timeout` seconds (a super-linear renderer takes hours on some documents); and what
    cut the renders short, if anything."""
    receive, send = multiprocessing.Pipe(duplex=False)
    child = multiprocessing.get_context("fork").Process(target=_render_child, args=(text, repeats, send), daemon=True)
    child.start()
    send.close()
    millis: list[float] = []
    deadline = time.monotonic() + timeout
    try:
        while len(millis) < repeats:
            if not receive.poll(max(0.0, deadline - time.monotonic())):
                return millis or [timeout * 1000], f"stopped after {timeout:g} s"
            problem, ms = receive.recv()
            millis.append(ms)
            if problem:
                return millis, problem
        return millis, ""
    except EOFError:
        return millis or [0.0], "the renderer's process died"
    finally:
        child.kill()
        child.join()


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
