"""What every benchmark shares: a scratch database, one timing helper, percentile statistics,
the results table and where it is written, and an HTTP load driver against a gunicorn started
for the run.

Nothing here imports Django at module level: `scratch_database` must set the environment
before `django.setup()` reads the settings. So a benchmark file imports the project below its
`if __name__ == "__main__"` block: run as a script, its main() sets Django up on the scratch
database, then imports the file again as a module and runs that."""

from __future__ import annotations

import argparse
import http.client
import os
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parent.parent
RESULTS_DIR = REPO / "benchmarks" / "results"


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


# --- timing -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Stats:
    p50: float
    p95: float
    count: int

    @classmethod
    def of(cls, millis: Sequence[float]) -> Stats:
        if len(millis) == 1:
            return cls(millis[0], millis[0], 1)
        cuts = statistics.quantiles(millis, n=100, method="inclusive")
        return cls(p50=cuts[49], p95=cuts[94], count=len(millis))


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


# --- the results table ------------------------------------------------------------------------


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
        lines = ["  ".join(cell.ljust(width) for cell, width in zip(line, widths)) for line in table]
        lines.insert(1, "  ".join("-" * width for width in widths))
        return lines

    def markdown(self) -> list[str]:
        def md(line: Sequence[str]) -> str:
            return "| " + " | ".join(line) + " |"

        rule = ["---:" if side == "r" else "---" for side in self.align]
        return [md(self.header), md(rule), *(md(row) for row in self.rows)]


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
    print(f"\nWritten to {path.relative_to(REPO)}")
    return path


# --- HTTP load under gunicorn -----------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def gunicorn(env: dict[str, str], *, workers: int, threads: int) -> Iterator[int]:
    """Serve memsite with gunicorn on a free loopback port for the duration of the block.
    gthread workers because sync workers close the connection after every response, which
    would turn a keep-alive benchmark into a connect-per-request one."""
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
    process = subprocess.Popen(command, cwd=REPO, env={**os.environ, **env})
    try:
        _wait_until_serving(port, process)
        yield port
    finally:
        process.terminate()  # SIGTERM: gunicorn's graceful shutdown
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_until_serving(port: int, process: subprocess.Popen, timeout: float = 60) -> None:
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
