"""A live memsite for the abuse benchmark: gunicorn started as production starts it, on a
loopback port, with nginx in front of it when asked; requests carrying what the TLS proxy adds;
and a `Watch` on its workers' resident memory and its /healthz latency from a process of its
own. Needs Django set up."""

from __future__ import annotations

import math
import multiprocessing
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

from django.conf import settings
from django.db import connections

from benchmarks.kit.harness import REPO, Server, Stats, free_port, wait_until_serving
from benchmarks.kit.httpclients import fetch

GUNICORN_CONF = REPO / "deploy" / "gunicorn.conf.py"
NGINX_TEMPLATE = REPO / "deploy" / "nginx" / "default.conf.template"
NGINX = Path("/usr/sbin/nginx")

# What is watched, and how.
SAMPLE_S = 0.05
PROBE_S = 0.1
PROBE_TIMEOUT_S = 5.0  # a probe not answered by then counts as this long


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
    # No MCP server in these runs: /mcp would answer 502.
    server = server.replace("${MEMSITE_MCP_UPSTREAM}", "127.0.0.1:9")
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
    """The resident memory of a server's processes (gunicorn's master and workers, or the MCP
    server) every 50 ms, and gunicorn's /healthz every 100 ms, each probe on a connection and a
    thread of its own (a load balancer's checks do not wait for each other), until `stop` is set.
    Runs in a process of its own (`Watch`): in the attack's process, the attack's client threads
    would delay the probes and the samples."""

    def __init__(self, port: int, master: int, stop: Any) -> None:
        self.port, self.master, self.stop = port, master, stop
        self.lock = threading.Lock()
        self.rss: list[tuple[float, dict[int, int]]] = []
        self.probes: list[tuple[float, float, bool]] = []  # started, ms, answered

    def _sample(self) -> None:
        while not self.stop.wait(SAMPLE_S):
            # The master too: the MCP server is one process, and gunicorn's master never grows.
            pids = [self.master, *children(self.master)]
            sample = {pid: kib for pid in pids if (kib := rss_kib(pid)) is not None}
            self.rss.append((time.monotonic(), sample))

    def _probe(self) -> None:
        started = time.monotonic()
        answer = fetch(self.port, "GET", "/healthz", headers=proxy_headers(), timeout=PROBE_TIMEOUT_S)
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
