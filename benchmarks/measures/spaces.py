"""What benchmarks/spaces.py measures: the same API calls and read load on the revision before
spaces and on this tree, each served by gunicorn on a scratch SQLite database of its own."""

from __future__ import annotations

import argparse
import os
import random
import secrets
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from functools import partial
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from benchmarks.corpora.prose import prose
from benchmarks.kit.harness import (
    REPO,
    LoadResult,
    Stats,
    TablesReport,
    TitledTable,
    command,
    gunicorn,
    http_load,
    machine,
    millis_text,
)
from benchmarks.kit.httpclients import Answer, Connection, concurrently, fetch

TARGET = 1.10  # spaces / baseline, at most
USERNAME = "bench"
PER_FOLDER = 50  # documents per folder of the seeded tree
SEED_CONNECTIONS = 3  # per server: the seeding is not timed, only made shorter
SECRET_KEY = secrets.token_urlsafe(50)  # production refuses a weak key
PASSWORD = secrets.token_urlsafe(16)
# Makes the superuser an owner of the default space: a user made after the spaces migration is a
# member of nothing (docs/spaces.md). Only the spaces tree has memsite/spaces/.
JOIN_DEFAULT_SPACE = f"""
from django.contrib.auth import get_user_model
from memsite.spaces.models import Space
from memsite.spaces.services import membership_set
user = get_user_model().objects.get(username={USERNAME!r})
membership_set(space=Space.objects.get(slug="default"), member=user, role="owner")
"""


def run(args: argparse.Namespace, load: float) -> TablesReport:
    """Checks the baseline out, serves both trees, seeds them alike and times them in turn."""
    with ExitStack() as stack:
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="memsite-spacesbench-")))
        baseline_tree = stack.enter_context(checkout(args.baseline, scratch / "tree"))
        sites = [
            Site("baseline", baseline_tree, scratch / "baseline-var"),
            Site("spaces", REPO, scratch / "spaces-var"),
        ]
        print(f"preparing {args.baseline} in {baseline_tree} and this tree", file=sys.stderr)
        concurrently([site.prepare for site in sites])
        for site in sites:
            site.port = stack.enter_context(
                gunicorn(site.env, workers=args.workers, threads=args.threads, tree=site.tree)
            )
            site.log_in()
        tree = Tree.plan(args.nodes)
        print(f"seeding {tree.size:,} nodes in each", file=sys.stderr)
        started = time.monotonic()
        concurrently([partial(site.seed, tree) for site in sites])
        print(f"seeded in {time.monotonic() - started:.0f} s", file=sys.stderr)
        timings = time_operations(sites, tree, args)
        loads = time_load(sites, tree, args)
    return report(args, load, timings, loads)


# --- the two servers ----------------------------------------------------------------------------


@contextmanager
def checkout(revision: str, path: Path) -> Iterator[Path]:
    """The tree at `revision`, checked out in a worktree of its own at `path` for the block."""
    git = ["git", "-C", str(REPO), "worktree"]
    subprocess.run([*git, "add", "--detach", str(path), revision], check=True, capture_output=True)
    try:
        yield path
    finally:
        subprocess.run([*git, "remove", "--force", str(path)], check=False, capture_output=True)


@dataclass
class Site:
    """One tree served by gunicorn, and a logged-in session on it."""

    name: str
    tree: Path
    var_dir: Path
    port: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    root: str = ""  # the id of /swarmstar, which the migrations made

    @property
    def env(self) -> dict[str, str]:
        return {
            "PYTHONPATH": str(self.tree),  # this tree's packages, never the virtualenv's editable install
            "DJANGO_SETTINGS_MODULE": "memsite.settings",
            "MEMSITE_VAR_DIR": str(self.var_dir),  # SQLite in WAL mode, the embedded default
            "DATABASE_URL": "",
            "REDIS_URL": "",
            "DJANGO_DEBUG": "false",  # DEBUG would record every query in memory
            "DJANGO_SECRET_KEY": SECRET_KEY,
            "DJANGO_SECURE_SSL_REDIRECT": "false",  # plain HTTP on loopback
            "MEMSITE_LOG_LEVEL": "WARNING",
            "MEMSITE_LLM_PROVIDER": "offline",
            "MEMSITE_API_RATE": "1000000/min",  # the run's requests, not the rate limit, are timed
            "DJANGO_SUPERUSER_USERNAME": USERNAME,
            "DJANGO_SUPERUSER_PASSWORD": PASSWORD,
            "DJANGO_SUPERUSER_EMAIL": f"{USERNAME}@example.com",
        }

    def manage(self, *words: str) -> None:
        command = [sys.executable, "manage.py", *words]
        done = subprocess.run(command, cwd=self.tree, env={**os.environ, **self.env}, capture_output=True, text=True)
        if done.returncode:
            raise RuntimeError(f"{self.name}: manage.py {words[0]} failed:\n{done.stderr[-2000:]}")

    def prepare(self) -> None:
        """A fresh database with a superuser who may act in it."""
        self.var_dir.mkdir()
        self.manage("collectstatic", "--noinput")  # the login page names its files by their hashes
        self.manage("migrate", "--noinput")
        self.manage("createsuperuser", "--noinput")
        if (self.tree / "memsite" / "spaces").is_dir():
            self.manage("shell", "-c", JOIN_DEFAULT_SPACE)

    def log_in(self) -> None:
        """A session from the /login/ form, and the headers that send it (and its CSRF token)."""
        csrf = cookies(fetch(self.port, "GET", "/login/"))["csrftoken"]
        form = urlencode({"username": USERNAME, "password": PASSWORD, "csrfmiddlewaretoken": csrf})
        headers = {"Cookie": f"csrftoken={csrf}", "Content-Type": "application/x-www-form-urlencoded"}
        answer = fetch(self.port, "POST", "/login/", body=form.encode(), headers=headers)
        jar = {"csrftoken": csrf, **cookies(answer)}
        if answer.status != 302 or "sessionid" not in jar:
            raise RuntimeError(f"{self.name}: logging in answered {answer.label}: {answer.body!r}")
        self.headers = {
            "Cookie": "; ".join(f"{name}={value}" for name, value in jar.items()),
            "X-CSRFToken": jar["csrftoken"],
        }
        self.root = self.expect(self.connect(), "GET", "/api/nodes/resolve/?path=/swarmstar", 200).json()["id"]

    def connect(self) -> Connection:
        return Connection(self.port, self.headers, timeout=60)

    def expect(self, conn: Connection, method: str, url: str, status: int, payload: Any = None) -> Answer:
        answer = conn.send(method, url, payload)
        if answer.status != status:
            raise RuntimeError(f"{self.name}: {method} {url} answered {answer.label}: {answer.body[:300]!r}")
        return answer

    def seed(self, tree: Tree) -> None:
        """The folders, then their documents over SEED_CONNECTIONS connections at once."""
        self.create(tree.folders)
        share = -(-len(tree.documents) // SEED_CONNECTIONS)
        concurrently(
            [
                partial(self.create, tree.documents[start : start + share])
                for start in range(0, len(tree.documents), share)
            ]
        )

    def create(self, nodes: Sequence[Node]) -> None:
        conn = self.connect()
        try:
            for node in nodes:
                self.expect(conn, "POST", "/api/nodes/", 201, node.payload(parent=node.parent or self.root))
        finally:
            conn.close()


def cookies(answer: Answer) -> dict[str, str]:
    jar: SimpleCookie = SimpleCookie()
    for header in answer.cookies:
        jar.load(header)
    return {name: morsel.value for name, morsel in jar.items()}


# --- the tree -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Node:
    id: str
    parent: str  # blank: /swarmstar, whose id differs between the two databases
    type: str
    name: str
    path: str
    content: str = ""

    def payload(self, *, parent: str) -> dict[str, Any]:
        payload = {"id": self.id, "parent": parent, "type": self.type, "name": self.name}
        if self.content:
            payload |= {"content": self.content, "description": self.content[:80]}
        return payload


def node_id(number: int) -> str:
    return f"memory_{number:032x}"


@dataclass(frozen=True)
class Tree:
    """Folders under /swarmstar, PER_FOLDER documents of seeded prose in each: the same ids,
    names and text in both databases."""

    folders: list[Node]
    documents: list[Node]

    @classmethod
    def plan(cls, documents: int) -> Tree:
        rng = random.Random(7)
        folders = [
            Node(node_id(index + 1), "", "folder", f"area-{index:03}", f"/swarmstar/area-{index:03}")
            for index in range(documents // PER_FOLDER)
        ]
        notes = []
        for index in range(len(folders) * PER_FOLDER):
            folder = folders[index % len(folders)]
            name = f"note-{index:05}.md"
            number = len(folders) + index + 1
            notes.append(Node(node_id(number), folder.id, "document", name, f"{folder.path}/{name}", prose(rng, 60)))
        return cls(folders, notes)

    @property
    def nodes(self) -> list[Node]:
        return self.folders + self.documents

    @property
    def size(self) -> int:
        return len(self.folders) + len(self.documents)


# --- the timings --------------------------------------------------------------------------------

Call = tuple[str, str, Any, int]  # method, url, JSON payload, the status expected


@dataclass(frozen=True)
class Operation:
    name: str
    call: Callable[[Tree, int], Call]  # the call of sample `number`: the same on both servers


def created(tree: Tree, number: int) -> Call:
    folder = tree.folders[number % len(tree.folders)]
    payload = {"id": node_id(10**9 + number), "parent": folder.id, "type": "document", "name": f"new-{number:06}.md"}
    return "POST", "/api/nodes/", payload | {"content": "A new note.", "description": "new"}, 201


def pick(nodes: Sequence[Node], number: int) -> Node:
    return nodes[(number * 7919) % len(nodes)]  # a stride through the tree, not one hot row


OPERATIONS = [
    Operation("GET a node", lambda t, n: ("GET", f"/api/nodes/{pick(t.documents, n).id}/", None, 200)),
    Operation("GET its children", lambda t, n: ("GET", f"/api/nodes/{pick(t.folders, n).id}/children/", None, 200)),
    Operation(
        "resolve a path",
        lambda t, n: ("GET", f"/api/nodes/resolve/?path={quote(pick(t.documents, n).path)}", None, 200),
    ),
    Operation("POST create a document", created),
    Operation(
        "PATCH a description",
        lambda t, n: ("PATCH", f"/api/nodes/{pick(t.documents, n).id}/", {"description": f"seen {n}"}, 200),
    ),
    Operation(
        "POST /api/retrieve/",
        lambda t, n: ("POST", "/api/retrieve/", {"query": " ".join(pick(t.documents, n).content.split()[:6])}, 200),
    ),
]


def time_operations(sites: Sequence[Site], tree: Tree, args: argparse.Namespace) -> dict[tuple[str, str], Stats]:
    """Each operation's milliseconds on each server: in `rounds`, each round a share of the
    samples on one server then the other, the first server taking turns."""
    millis: dict[tuple[str, str], list[float]] = {}
    connections = {site.name: site.connect() for site in sites}
    share = -(-args.samples // args.rounds)
    try:
        for operation in OPERATIONS:
            print(f"timing: {operation.name}", file=sys.stderr)
            for site in sites:
                for number in range(-args.warmup, 0):  # not timed: the workers' first calls
                    site.expect(connections[site.name], *unpacked(operation.call(tree, number)))
            for round_number in range(args.rounds):
                order = sites if round_number % 2 == 0 else list(reversed(sites))
                numbers = range(round_number * share, min(args.samples, (round_number + 1) * share))
                for site in order:
                    conn = connections[site.name]
                    for number in numbers:
                        answer = site.expect(conn, *unpacked(operation.call(tree, number)))
                        millis.setdefault((operation.name, site.name), []).append(answer.ms)
    finally:
        for conn in connections.values():
            conn.close()
    return {key: Stats.of(values) for key, values in millis.items()}


def unpacked(call: Call) -> tuple[str, str, int, Any]:
    method, url, payload, status = call
    return method, url, status, payload


def time_load(sites: Sequence[Site], tree: Tree, args: argparse.Namespace) -> dict[str, LoadResult]:
    """A mixed read load (a node, a folder's children, a path) on one server at a time, in
    `load_rounds` slots each, the first server taking turns; the slots of a server summed."""
    urls = []
    for number in range(300):
        for operation in OPERATIONS[:3]:
            urls.append(operation.call(tree, number)[1])
    results: dict[str, list[LoadResult]] = {}
    for round_number in range(args.load_rounds):
        for site in sites if round_number % 2 == 0 else list(reversed(sites)):
            print(f"load: {site.name}, slot {round_number + 1}", file=sys.stderr)
            result = http_load(site.port, urls, site.headers, connections=args.connections, seconds=args.load_seconds)
            results.setdefault(site.name, []).append(result)
    return {name: summed(slots) for name, slots in results.items()}


def summed(slots: Sequence[LoadResult]) -> LoadResult:
    """The slots as one: their requests over their seconds, and the percentiles of their p50s
    and p95s weighted by requests (the slots' own samples are not kept)."""
    requests = sum(slot.requests for slot in slots)
    p50 = sum(slot.stats.p50 * slot.requests for slot in slots) / requests
    p95 = sum(slot.stats.p95 * slot.requests for slot in slots) / requests
    return LoadResult(
        stats=Stats(p50=p50, p95=p95, count=requests),
        requests=requests,
        errors=sum(slot.errors for slot in slots),
        seconds=sum(slot.seconds for slot in slots),
    )


# --- the report ---------------------------------------------------------------------------------


def stats_text(stats: Stats) -> tuple[str, str]:
    return millis_text(stats.p50), millis_text(stats.p95)


def verdict(ratio: float) -> str:
    return "✓" if ratio <= TARGET else "✗"


def calls_table(timings: dict[tuple[str, str], Stats]) -> tuple[TitledTable, list[str]]:
    """Each operation's figures on both servers, and whether it met the target."""
    table = TitledTable(
        "API calls, one at a time (ms)",
        ("operation", "n", "baseline p50", "p95", "spaces p50", "p95", "ratio p50", "ratio p95", "≤ +10 %"),
    )
    targets = []
    for operation in OPERATIONS:
        base, spaces = timings[(operation.name, "baseline")], timings[(operation.name, "spaces")]
        ratio_p50, ratio_p95 = spaces.p50 / base.p50, spaces.p95 / base.p95
        table.rows.append(
            (
                operation.name,
                str(spaces.count),
                *stats_text(base),
                *stats_text(spaces),
                f"{ratio_p50:.2f}",
                f"{ratio_p95:.2f}",
                verdict(ratio_p50),
            )
        )
        targets.append(f"{operation.name}: p50 spaces / baseline = {ratio_p50:.2f} {verdict(ratio_p50)}")
    return table, targets


def load_table(args: argparse.Namespace, loads: dict[str, LoadResult]) -> tuple[TitledTable, str]:
    """The read load's figures on both servers, and whether it met the target."""
    table = TitledTable(
        f"Mixed read load, {args.connections} keep-alive connections",
        ("server", "requests", "errors", "req/s", "p50 ms", "p95 ms"),
        [
            (name, f"{run.requests:,}", str(run.errors), f"{run.rate:,.0f}", *stats_text(run.stats))
            for name, run in loads.items()
        ],
    )
    slower = loads["baseline"].rate / loads["spaces"].rate  # the time a request takes, spaces / baseline
    return table, f"mixed read load: baseline req/s / spaces req/s = {slower:.2f} {verdict(slower)}"


def report(
    args: argparse.Namespace, load: float, timings: dict[tuple[str, str], Stats], loads: dict[str, LoadResult]
) -> TablesReport:
    calls, targets = calls_table(timings)
    mixed, target = load_table(args, loads)
    return TablesReport(
        title=f"Spaces against {args.baseline}, SQLite, {args.nodes:,} documents",
        preamble=[f"{machine(load)}.", "", f"Command: `{command('spaces')}`"],
        tables=[calls, mixed],
        targets=[*targets, target],
        notes=notes(args),
    )


def notes(args: argparse.Namespace) -> list[str]:
    return [
        f"Both servers: gunicorn gthread, {args.workers} workers × {args.threads} threads on 127.0.0.1, "
        "this Python, SQLite in WAL mode each, DEBUG off, offline LLM, a superuser's session from /login/ "
        "(an owner of the default space on the spaces tree).",
        f"Calls: {args.samples} per operation and server over one keep-alive connection, after "
        f"{args.warmup} untimed, in {args.rounds} rounds alternating which server goes first; "
        "ratio = spaces / baseline, target ≤ 1.10 at p50 (p95 shown; on a shared machine it is noisy).",
        f"Load: GET a node, its children and a path in turn, {args.load_rounds} slots of "
        f"{args.load_seconds:g} s per server, alternating.",
    ]
