"""What a tick costs besides its wall time, measured around it: the queries and writes it makes
(`WriteCounter`), its LLM provider's own time (`ProviderClock`), the bytes it makes the database
write to its log (`PostgresWal`, `SqliteWal`) and the CPU time it takes (`CpuMeter`). Used by
the brain benchmark; needs Django set up."""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.db import DatabaseError, connection, transaction

WRITE = re.compile(r'^\s*(INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+"?(\w+)"?', re.IGNORECASE)


class WriteCounter:
    """A `connection.execute_wrapper`: every query, and of the writes (INSERT, UPDATE, DELETE)
    the statements, the rows they affected (the cursor's rowcount) by table, and their time
    with that of the commits (`commits` also times `connection.commit`, which ends each atomic
    block; a statement outside one commits as it runs)."""

    def __init__(self) -> None:
        self.queries = 0
        self.statements = 0
        self.rows: Counter[str] = Counter()
        self.seconds = 0.0

    def __call__(self, execute, sql, params, many, context):
        started = time.perf_counter()
        result = execute(sql, params, many, context)
        elapsed = time.perf_counter() - started
        self.queries += 1
        written = WRITE.match(sql)
        if written:
            self.statements += 1
            rows = context["cursor"].rowcount
            if rows <= 0 and written.group(1).upper().startswith("INSERT"):
                # SQLite reports no count for an INSERT ... RETURNING before its rows are read;
                # a tick's INSERTs write one row per parameter set.
                rows = len(params) if many else 1
            self.rows[written.group(2)] += rows
            self.seconds += elapsed
        return result

    @contextmanager
    def commits(self) -> Iterator[None]:
        original = connection.commit

        def commit() -> None:
            started = time.perf_counter()
            try:
                original()
            finally:
                self.seconds += time.perf_counter() - started

        connection.commit = commit
        try:
            with connection.execute_wrapper(self):
                yield
        finally:
            del connection.commit


class ProviderClock:
    """The offline provider's own time, measured around its `complete` (what a real provider
    spends waiting for the model). The gateway's ledger row stays in the tick's time."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.calls = 0

    def install(self) -> None:
        from memsite.llm.providers.offline import OfflineProvider

        original = OfflineProvider.complete
        clock = self

        def complete(provider, request, trace):
            started = time.perf_counter()
            try:
                return original(provider, request, trace)
            finally:
                clock.seconds += time.perf_counter() - started
                clock.calls += 1

        OfflineProvider.complete = complete


class WalMeter:
    """Bytes a tick makes the database write to its log, and of those the full-page images
    (None where the log does not tell)."""

    describe = ""

    def start(self) -> None:
        raise NotImplementedError

    def stop(self) -> tuple[int, int | None]:
        raise NotImplementedError

    def close(self) -> None:
        pass


class PostgresWal(WalMeter):
    """The WAL records of the scratch database between two positions, read with pg_walinspect:
    records whose blocks belong to the database, and the commits of their transactions. The
    server's other databases write to the same log (tests run there), so the plain difference
    of positions is used only when the extension cannot be created, and the report says so."""

    def __init__(self) -> None:
        self.begin = ""
        with connection.cursor() as cursor:
            cursor.execute("SELECT oid FROM pg_database WHERE datname = current_database()")
            self.pattern = f"rel [0-9]+/{cursor.fetchone()[0]}/"
            try:
                with transaction.atomic():
                    cursor.execute("CREATE EXTENSION IF NOT EXISTS pg_walinspect")
            except DatabaseError as exc:  # not a superuser, or no contrib package
                self.inspect = False
                self.describe = (
                    f"difference of WAL positions (pg_walinspect unavailable: {type(exc).__name__}); it counts "
                    "whatever else the server wrote meanwhile"
                )
            else:
                self.inspect = True
                self.describe = (
                    "WAL records of the scratch database (pg_walinspect: records whose blocks are the "
                    "database's, and the commits of their transactions), full-page images included"
                )

    def start(self) -> None:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_current_wal_insert_lsn()")
            self.begin = cursor.fetchone()[0]

    def stop(self) -> tuple[int, int | None]:
        with connection.cursor() as cursor:
            # With synchronous_commit every commit of the tick is flushed by now.
            cursor.execute("SELECT pg_current_wal_flush_lsn()")
            end = cursor.fetchone()[0]
            if not self.inspect:
                cursor.execute("SELECT pg_wal_lsn_diff(%s, %s)", [end, self.begin])
                return int(cursor.fetchone()[0]), None
            cursor.execute(
                """
                WITH records AS (
                    SELECT xid, record_length, fpi_length, block_ref ~ %s AS ours
                    FROM pg_get_wal_records_info(%s::pg_lsn, %s::pg_lsn)
                ), transactions AS (
                    SELECT DISTINCT xid FROM records WHERE ours AND xid::text <> '0'
                )
                SELECT coalesce(sum(record_length), 0), coalesce(sum(fpi_length), 0) FROM records
                WHERE ours OR (xid::text <> '0' AND xid IN (SELECT xid FROM transactions))
                """,
                [self.pattern, self.begin, end],
            )
            total, images = cursor.fetchone()
            return int(total), int(images)


class SqliteWal(WalMeter):
    """The growth of the database's -wal file: emptied before each tick (wal_checkpoint
    TRUNCATE, untimed) with automatic checkpoints off, so that after the tick it holds exactly
    the frames the tick appended (page size + 24 bytes each, and a 32-byte header). A checkpoint
    later copies each page into the database file once more."""

    describe = "growth of the SQLite -wal file (the frames the tick appended), truncated before each tick"

    def __init__(self) -> None:
        self.path = Path(f"{connection.settings_dict['NAME']}-wal")
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA wal_autocheckpoint")
            self.autocheckpoint = int(cursor.fetchone()[0])
            cursor.execute("PRAGMA wal_autocheckpoint=0")

    def start(self) -> None:
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            busy, _, _ = cursor.fetchone()
        if busy:
            raise SystemExit("The WAL could not be truncated: another connection is using the database.")

    def stop(self) -> tuple[int, int | None]:
        return (self.path.stat().st_size if self.path.exists() else 0), None

    def close(self) -> None:
        with connection.cursor() as cursor:
            cursor.execute(f"PRAGMA wal_autocheckpoint={self.autocheckpoint}")


def _schedstat(pid: int | str) -> tuple[int, int]:
    """Nanoseconds a process's main thread has run on a CPU, and has waited for one (/proc)."""
    running, waiting, _ = Path(f"/proc/{pid}/schedstat").read_text().split()
    return int(running), int(waiting)


class CpuMeter:
    """CPU time of the benchmark process and of its PostgreSQL backend when the server runs on
    this machine (on SQLite the database works inside the process), and the time both waited for
    a CPU: on a shared machine the wall times grow with the wait, the CPU times much less."""

    def __init__(self) -> None:
        self.backend: int | None = None
        self.describe = "the benchmark process (SQLite works inside it)"

    def start(self) -> tuple[int, int]:
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                pid = cursor.fetchone()[0]
            try:
                local = Path(f"/proc/{pid}/comm").read_text().strip() in ("postgres", "postmaster")
            except OSError:
                local = False
            self.backend = pid if local else None
            self.describe = (
                "the benchmark process and its PostgreSQL backend"
                if local
                else "the benchmark process only (the PostgreSQL server is not on this machine)"
            )
        return self.read()

    def read(self) -> tuple[int, int]:
        running, waiting = _schedstat("self")
        if self.backend is not None:
            backend_running, backend_waiting = _schedstat(self.backend)
            running, waiting = running + backend_running, waiting + backend_waiting
        return running, waiting

    def since(self, start: tuple[int, int]) -> tuple[float, float]:
        """Milliseconds on a CPU and waiting for one since `start`."""
        running, waiting = self.read()
        return (running - start[0]) / 1e6, (waiting - start[1]) / 1e6
