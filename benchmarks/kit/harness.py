"""What every benchmark shares: a scratch database (SQLite, or PostgreSQL and Redis), timing,
percentiles and profiles, the results tables, and gunicorn, Celery workers and a fake LLM server.
Nothing here imports Django at module level, as `scratch_database` must set the environment first:
a benchmark's script (benchmarks/<name>.py) sets Django up on the scratch database, then imports
what it measures (benchmarks/measures/<name>.py), which imports the project at its top."""

from __future__ import annotations

import argparse
import cProfile
import http.client
import importlib
import io
import math
import multiprocessing
import os
import platform
import pstats
import re
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parents[2]
# Where reports are written: benchmarks/results/ (git-ignored), or the folder MEMSITE_BENCH_RESULTS
# names, so that a short trial run does not overwrite the figures of a full one.
RESULTS_DIR = Path(os.environ.get("MEMSITE_BENCH_RESULTS") or REPO / "benchmarks" / "results")


# --- scratch database -------------------------------------------------------------------------


def scratch_url(url: str | None, default_name: str) -> str | None:
    """The URL of the database a benchmark resets: the one given if its name says 'bench', else
    one named `default_name` on the same server (never the database a developer pointed at)."""
    if not url:
        return None
    parts = urlsplit(url)
    if "bench" in parts.path.lstrip("/"):
        return url
    return parts._replace(path=f"/{default_name}").geturl()


def at_least(low: int) -> Callable[[str], int]:
    """An argparse type: an integer (`100_000` allowed) of at least `low`."""

    def parse(text: str) -> int:
        try:
            value = int(text.replace("_", ""))
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}")
        return value

    return parse


def above(low: float, *, at_most: float, unit: str = "a number") -> Callable[[str], float]:
    """An argparse type: a number above `low` and at most `at_most`."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {unit}, got {text!r}") from None
        if not low < value <= at_most:
            raise argparse.ArgumentTypeError(f"must be above {low:g} and at most {at_most:g}")
        return value

    return parse


def add_database_url(parser: argparse.ArgumentParser) -> None:
    """--database-url, for a benchmark that runs on SQLite unless given PostgreSQL (`scratch_url`)."""
    parser.add_argument(
        "--database-url",
        default=os.environ.get("DATABASE_URL") or None,
        help="a postgres:// URL (default: DATABASE_URL; neither: SQLite)",
    )


@dataclass(frozen=True)
class Scratch:
    vendor: str  # "sqlite" or "postgresql"
    env: dict[str, str]  # what a subprocess (gunicorn) needs to see the same database


def _postgres_admin(url: str, statement: str) -> None:
    """Run one statement on the server's `postgres` database, outside any transaction
    (CREATE/DROP DATABASE refuse to run inside one)."""
    import psycopg

    parts = urlsplit(url)
    admin = parts._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(statement)


def _bench_database_name(url: str) -> str:
    name = urlsplit(url).path.lstrip("/")
    # The database is dropped and recreated: never let a typo point this at real data.
    if "bench" not in name or not name.replace("_", "").isalnum():
        sys.exit(f"Refusing to reset database {name!r}: its name must contain 'bench'.")
    return name


@contextmanager
def scratch_database(database_url: str | None, *, keep: bool) -> Iterator[Scratch]:
    """Point memsite at a fresh scratch database, migrate it, and drop it afterwards
    (unless `keep`). Without a URL it is the embedded default: SQLite in WAL mode under a
    temporary MEMSITE_VAR_DIR. An inherited DATABASE_URL is ignored on purpose, so that the
    benchmark can never reset a developer's own database."""
    var_dir = Path(tempfile.mkdtemp(prefix="memsite-bench-"))
    (var_dir / "static").mkdir()  # STATIC_ROOT: whitenoise warns in every worker without it
    env = {
        "DJANGO_SETTINGS_MODULE": "memsite.settings",
        "MEMSITE_VAR_DIR": str(var_dir),
        # DEBUG would record every query in memory and slow every request.
        "DJANGO_DEBUG": "false",
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),  # production refuses a weak key
        "DJANGO_SECURE_SSL_REDIRECT": "false",  # plain HTTP on loopback
        "MEMSITE_LOG_LEVEL": "WARNING",
        "DATABASE_URL": "",
        # The benchmarks' own searches and graphs run as memsite's system principal: a day's
        # budget for its upkeep must not end a run half-way.
        "MEMSITE_SYSTEM_LLM_DAILY_CALLS": str(10**9),
        "MEMSITE_SYSTEM_LLM_DAILY_TOKENS": str(10**12),
    }
    vendor = "sqlite"
    if database_url:
        if urlsplit(database_url).scheme not in ("postgres", "postgresql"):
            sys.exit("--database-url must be a postgres:// URL; leave it out for SQLite.")
        vendor = "postgresql"
        name = _bench_database_name(database_url)
        _postgres_admin(database_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        _postgres_admin(database_url, f'CREATE DATABASE "{name}"')
        env["DATABASE_URL"] = database_url
    os.environ.update(env)

    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0, interactive=False)
    try:
        yield Scratch(vendor=vendor, env=env)
    finally:
        from django.db import connections

        connections.close_all()
        if keep:
            print(f"Kept the scratch database ({database_url or var_dir}).")
        else:
            if database_url:
                _postgres_admin(database_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            shutil.rmtree(var_dir, ignore_errors=True)


def database_version(vendor: str) -> str:
    """The database the figures were taken on, for the report's title and notes."""
    import sqlite3

    from django.db import connection

    if vendor == "sqlite":
        return f"SQLite {sqlite3.sqlite_version}"
    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version")
        return f"PostgreSQL {cursor.fetchone()[0].split()[0]}"


def refresh_statistics(vendor: str, tables: Sequence[str]) -> None:
    """On PostgreSQL, do what autovacuum does soon after a bulk load (planner statistics and the
    visibility map), so that the timings are not of a table nobody has analyzed yet. SQLite is
    left as memsite leaves it in production: memsite never runs ANALYZE there."""
    from django.db import connection

    if vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        for table in tables:
            cursor.execute(f"VACUUM ANALYZE {table}")


# --- PostgreSQL and Redis ---------------------------------------------------------------------


def redis_url(text: str) -> str:
    parts = urlsplit(text)
    if parts.scheme not in ("redis", "rediss"):
        raise argparse.ArgumentTypeError("expected a redis:// URL")
    database = parts.path.strip("/") or "0"
    if not database.isdigit() or database == "0":
        raise argparse.ArgumentTypeError("name a Redis database other than 0, such as redis://127.0.0.1:6379/7")
    return text


def services_parser(description: str, *, database: str, redis: str) -> argparse.ArgumentParser:
    """A benchmark's arguments for the PostgreSQL and Redis it runs on (`run_on_services`)."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--database-url",
        default=database,
        help=f"a postgres:// URL whose database name contains 'bench' (default {database})",
    )
    parser.add_argument(
        "--redis-url", type=redis_url, default=redis, help=f"an empty Redis database, not 0 (default {redis})"
    )
    return parser


def reachable(url: str, default_port: int) -> bool:
    parts = urlsplit(url)
    try:
        socket.create_connection((parts.hostname or "127.0.0.1", parts.port or default_port), timeout=3).close()
    except OSError:
        return False
    return True


def run_on_services(script: str, args: argparse.Namespace, environ: dict[str, str]) -> None:
    """Runs benchmarks/measures/<script>.py's `run(args, scratch)` on a scratch PostgreSQL database
    and the Redis of `args`, prints its report and writes it to benchmarks/results/; exits 1 when
    a target was missed."""
    for url, port in ((args.database_url, 5432), (args.redis_url, 6379)):
        if not reachable(url, port):
            sys.exit(f"benchmarks/{script}.py needs PostgreSQL and Redis: nothing answers at {urlsplit(url).netloc}.")
    # Read by the settings at django.setup(), here, in gunicorn and in the workers.
    os.environ.update({"REDIS_URL": args.redis_url, **environ})
    os.environ["MEMSITE_LLM_PROVIDER"] = "offline"  # this process never calls the LLM
    with scratch_database(args.database_url, keep=args.keep) as scratch:
        # What the benchmark measures, importable now that Django is set up.
        report = importlib.import_module(f"benchmarks.measures.{script}").run(args, scratch)
    publish(report, f"{script}-{scratch.vendor}")
    if not report.passed:
        sys.exit(1)


# --- timing -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Stats:
    p50: float
    p95: float
    count: int

    @classmethod
    def of(cls, millis: Sequence[float]) -> Stats:
        p50, p95 = percentiles(millis, 50, 95)
        return cls(p50=p50, p95=p95, count=len(millis))


def percentiles(values: Sequence[float], *cuts: int) -> tuple[float, ...]:
    """The percentiles `cuts` (such as 50, 95) of `values`: NaN of none, the value itself of one."""
    if not values:
        return (math.nan,) * len(cuts)
    if len(values) == 1:
        return (values[0],) * len(cuts)
    quantiles = statistics.quantiles(values, n=100, method="inclusive")
    return tuple(quantiles[cut - 1] for cut in cuts)


def time_each(call: Callable[[Any], object], samples: Sequence[Any], *, warmup: int = 0) -> Stats:
    """The one timing helper: call `call(sample)` for every sample and time each call.
    The first `warmup` samples are run untimed first, so that a cold cache or a lazy import
    does not land in the percentiles (reads only; writes cannot be repeated)."""
    for sample in samples[:warmup]:
        call(sample)
    millis = []
    for sample in samples:
        started = time.perf_counter()
        call(sample)
        millis.append((time.perf_counter() - started) * 1000)
    return Stats.of(millis)


def profiled(call: Callable[[], Any], *, tottime: int = 20, cumulative: int = 40) -> tuple[Any, str]:
    """`call()` under cProfile: its result, and the functions that took the most time of their
    own and in all (a separate, untimed pass: the profiler slows what it watches)."""
    profiler = cProfile.Profile()
    result = profiler.runcall(call)
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out).strip_dirs()
    stats.sort_stats("tottime").print_stats(tottime)
    stats.sort_stats("cumulative").print_stats(cumulative)
    return result, out.getvalue()


# --- the results table ------------------------------------------------------------------------


def machine(load: float) -> str:
    """The day and the machine the figures were taken on; `load`, the load average at the start,
    because other work on the machine shows up in every figure."""
    return (
        f"{date.today()}, {os.cpu_count()} CPUs (load average {load:.1f} at the start), "
        f"Python {platform.python_version()}"
    )


def command(script: str, database_url: str | None = None) -> str:
    """The command line of the run, with the DATABASE_URL it took its database from."""
    words = [f"python benchmarks/{script}.py", *sys.argv[1:]]
    if database_url and not any(word.startswith("--database-url") for word in sys.argv[1:]):
        words.insert(0, f"DATABASE_URL={database_url}")
    return " ".join(words)


def millis_text(value: float) -> str:
    """Milliseconds with a decimal below 10; — for none (NaN)."""
    if math.isnan(value):
        return "—"
    return f"{value:.1f}" if value < 10 else f"{value:,.0f}"


@dataclass
class Row:
    operation: str
    memsite: Stats
    baseline: Stats | None = None
    target: str = ""  # such as "p95 ≤ 10 ms"; checked by `verdict`
    target_ms: float | None = None
    target_on: str = "p95"

    @property
    def speedup(self) -> float | None:
        """Baseline p50 / memsite p50: above 1 means memsite is faster."""
        if self.baseline is None or self.memsite.p50 == 0:
            return None
        return self.baseline.p50 / self.memsite.p50

    @property
    def ratio(self) -> str:
        speedup = self.speedup
        if speedup is None:
            return "—"
        return f"{speedup:,.0f}×" if speedup >= 10 else f"{speedup:.2g}×"

    @property
    def verdict(self) -> str:
        if self.target_ms is None:
            return ""
        value = getattr(self.memsite, self.target_on)
        return f"{self.target} {'✓' if value <= self.target_ms else '✗'}"


def _ms(value: float | None) -> str:
    return "—" if value is None else (f"{value:.2f}" if value < 10 else f"{value:.0f}")


@dataclass
class Report:
    title: str
    preamble: list[str] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    HEADER = ("operation", "n", "memsite p50 ms", "p95 ms", "baseline p50 ms", "p95 ms", "ratio", "target")

    def cells(self) -> list[tuple[str, ...]]:
        return [
            (
                row.operation,
                str(row.memsite.count),
                _ms(row.memsite.p50),
                _ms(row.memsite.p95),
                _ms(row.baseline and row.baseline.p50),
                _ms(row.baseline and row.baseline.p95),
                row.ratio,
                row.verdict,
            )
            for row in self.rows
        ]

    def table(self) -> Table:
        return Table(self.HEADER, self.cells(), align="lrrrrrrl")

    def text(self) -> str:
        return "\n".join([self.title, *self.preamble, "", *self.table().text(), "", *self.notes])

    def markdown(self) -> str:
        bullets = [f"- {note}" for note in self.notes]
        return "\n".join([f"## {self.title}", "", *self.preamble, "", *self.table().markdown(), "", *bullets, ""])


@dataclass
class Table:
    """Rows of cells under a header, as aligned text or as markdown."""

    header: tuple[str, ...]
    rows: list[tuple[str, ...]]
    align: str  # per column: l or r (markdown only)

    def text(self) -> list[str]:
        table = [self.header, *self.rows]
        widths = [max(len(line[i]) for line in table) for i in range(len(self.header))]
        lines = ["  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)) for line in table]
        lines.insert(1, "  ".join("-" * width for width in widths))
        return lines

    def markdown(self) -> list[str]:
        def md(line: Sequence[str]) -> str:
            return "| " + " | ".join(line) + " |"

        rule = ["---:" if side == "r" else "---" for side in self.align]
        return [md(self.header), md(rule), *(md(row) for row in self.rows)]

    def padded_markdown(self) -> list[str]:
        """Markdown whose columns are padded to one width, so that it also reads as text."""
        table = [self.header, *self.rows]
        widths = [max(len(line[i]) for line in table) for i in range(len(self.header))]

        def md(line: Sequence[str]) -> str:
            cells = zip(line, widths, self.align, strict=True)
            return "| " + " | ".join(cell.rjust(w) if side == "r" else cell.ljust(w) for cell, w, side in cells) + " |"

        rules = (
            "-" * (width - 1) + ":" if side == "r" else "-" * width
            for width, side in zip(widths, self.align, strict=True)
        )
        return [md(self.header), "| " + " | ".join(rules) + " |", *(md(row) for row in self.rows)]


@dataclass
class TitledTable:
    """One of several tables of a report, under its own title; the first column is text, the
    others figures."""

    title: str
    header: tuple[str, ...]
    rows: list[tuple[str, ...]] = field(default_factory=list)

    def _table(self) -> Table:
        return Table(self.header, self.rows, align="l" + "r" * (len(self.header) - 1))

    def text(self) -> str:
        return "\n".join([self.title, "", *self._table().text()])

    def markdown(self) -> str:
        return "\n".join([f"### {self.title}", "", *self._table().markdown()])


@dataclass
class TablesReport:
    """A report of several titled tables, then the targets met or missed, then notes."""

    title: str
    preamble: list[str]
    tables: list[TitledTable]
    targets: list[str]
    notes: list[str]

    def text(self) -> str:
        parts = [self.title, *self.preamble, ""]
        for table in self.tables:
            parts += [table.text(), ""]
        parts += ["Targets:", *(f"  {line}" for line in self.targets), "", *self.notes]
        return "\n".join(parts)

    def markdown(self) -> str:
        parts = [f"## {self.title}", "", *self.preamble, ""]
        for table in self.tables:
            parts += [table.markdown(), ""]
        targets = [f"- {line}" for line in self.targets]
        parts += ["Targets:", "", *targets, "", *(f"- {line}" for line in self.notes), ""]
        return "\n".join(parts)


def publish(report: Any, name: str) -> Path:
    """Print a report (anything with `text()` and `markdown()`) and write it to
    benchmarks/results/<name>.md."""
    print()
    print(report.text())
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / f"{name}.md"
    path.write_text(report.markdown())
    print(f"\nWritten to {shown(path)}")
    return path


def shown(path: Path) -> str:
    """A path as a run prints it: from the repository's root when it is under it."""
    return str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)


# --- HTTP load under gunicorn -----------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def gunicorn(env: dict[str, str], *, workers: int, threads: int, tree: Path = REPO) -> Iterator[int]:
    """Serve memsite with gunicorn on a free loopback port for the duration of the block: the
    memsite of `tree` (another checkout, say), this one by default. gthread workers because sync
    workers close the connection after every response, which would turn a keep-alive benchmark
    into a connect-per-request one."""
    port = free_port()
    command = [
        str(Path(sys.executable).parent / "gunicorn"),
        "memsite.wsgi:application",
        f"--bind=127.0.0.1:{port}",
        "--worker-class=gthread",
        f"--workers={workers}",
        f"--threads={threads}",
        "--keep-alive=30",
        "--log-level=warning",
    ]
    process = subprocess.Popen(command, cwd=tree, env={**os.environ, **env})
    try:
        wait_until_serving(port, process)
        yield port
    finally:
        process.terminate()  # SIGTERM: gunicorn's graceful shutdown
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


MCP_HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"}


@dataclass(frozen=True)
class Server:
    port: int
    process: subprocess.Popen


@contextmanager
def mcp_server(env: dict[str, str]) -> Iterator[Server]:
    """`manage.py mcp_serve` on a free loopback port, this tree's, for the block."""
    port = free_port()
    process = subprocess.Popen(
        # Idle connections kept as long as the harness's gunicorn keeps them.
        [sys.executable, "manage.py", "mcp_serve", "--port", str(port), "--keep-alive", "30"],
        cwd=REPO,
        env={**os.environ, **env},
    )
    try:
        wait_until_serving(port, process)  # any answer will do: GET /mcp is a 405
        yield Server(port, process)
    finally:
        process.terminate()
        process.wait(timeout=30)


def wait_until_serving(port: int, process: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"gunicorn exited with status {process.returncode}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            conn.request("GET", "/healthz")
            conn.getresponse().read()  # any status: the server answers
            conn.close()
            return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError("gunicorn did not start serving within a minute")


@dataclass(frozen=True)
class LoadResult:
    stats: Stats
    requests: int
    errors: int
    seconds: float

    @property
    def rate(self) -> float:
        return self.requests / self.seconds


def http_load(
    port: int, urls: Sequence[str], headers: dict[str, str], *, connections: int, seconds: float
) -> LoadResult:
    """GET the urls round-robin over `connections` keep-alive connections, one thread each,
    for `seconds`, and time every request."""
    deadline = time.monotonic() + seconds
    millis: list[float] = []
    errors = [0]
    lock = threading.Lock()

    def worker(offset: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        mine: list[float] = []
        failures = 0
        index = offset
        while time.monotonic() < deadline:
            url = urls[index % len(urls)]
            index += connections
            started = time.perf_counter()
            try:
                conn.request("GET", url, headers=headers)
                response = conn.getresponse()
                response.read()
                ok = response.status == 200
                if response.will_close:
                    conn.close()
            except (OSError, http.client.HTTPException):
                ok = False
                conn.close()  # http.client reconnects on the next request
            mine.append((time.perf_counter() - started) * 1000)
            failures += not ok
        conn.close()
        with lock:
            millis.extend(mine)
            errors[0] += failures

    started = time.monotonic()
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    return LoadResult(stats=Stats.of(millis), requests=len(millis), errors=errors[0], seconds=elapsed)


# --- Celery workers ---------------------------------------------------------------------------

TASK_LINE = re.compile(r"Task ([\w.]+)\[[^\]]+\] (received|succeeded|raised|failed|retry)")


@dataclass
class Workers:
    processes: list[tuple[subprocess.Popen, Path]]

    def log_text(self) -> str:
        return "".join(log.read_text(errors="replace") for _, log in self.processes)

    def tasks(self) -> Counter[tuple[str, str]]:
        """How many tasks of each name were received, succeeded, raised... by the workers' logs."""
        return Counter(TASK_LINE.findall(self.log_text()))

    def alive(self) -> bool:
        return all(process.poll() is None for process, _ in self.processes)


@contextmanager
def celery_workers(
    env: dict[str, str], *, count: int, name: str, options: Sequence[str], logs: Path
) -> Iterator[Workers]:
    """`count` Celery worker processes of memsite (`name`1, `name`2...) with the environment
    and `options` given, each logging to a file under `logs`; stopped warm at the end."""
    processes = []
    for index in range(1, count + 1):
        log = logs / f"worker-{index}.log"
        command = [str(Path(sys.executable).parent / "celery"), "-A", "memsite", "worker", *options]
        command += ["-n", f"{name}{index}@%h", "--loglevel", "INFO"]
        command += ["--without-gossip", "--without-mingle", "--without-heartbeat"]
        with open(log, "wb") as out:
            process = subprocess.Popen(
                command, cwd=REPO, env={**os.environ, **env}, stdout=out, stderr=subprocess.STDOUT
            )
        processes.append((process, log))
    try:
        deadline = time.monotonic() + 120
        for process, log in processes:
            while " ready." not in log.read_text(errors="replace"):
                if process.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"A Celery worker did not start; see {log}.")
                time.sleep(0.2)
        yield Workers(processes)
    finally:
        for process, _ in processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)  # Celery's warm shutdown
        for process, _ in processes:
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


# --- a fake LLM server ------------------------------------------------------------------------


@contextmanager
def fake_llm(answer: Callable[[Any], Any], **reply: Any) -> Iterator[tuple[str, int]]:
    """The fake OpenAI-compatible server of the tests, answering every request with `answer`
    (`reply`: Reply.from_request's options), in a forked process of its own, as a real server
    would be: its work never runs under the benchmark's GIL. Yields its URL and process id."""
    from django.db import connections

    from tests.fake_openai import FakeOpenAI, Reply

    connections.close_all()  # the child must not share the parent's database connection
    server = FakeOpenAI(default=Reply.from_request(answer, **reply))
    process = multiprocessing.get_context("fork").Process(target=server.serve_forever, daemon=True)
    process.start()
    try:
        yield server.url, process.pid
    finally:
        process.terminate()
        process.join(timeout=10)
