"""Runs a benchmark's script as `make bench` does, at its smallest size, in a process of its own:
on a scratch SQLite database under a temporary folder (never the run's DATABASE_URL), its report
written under the test's own folder (MEMSITE_BENCH_RESULTS), and reads back the tables it wrote."""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parents[2]
# What the suite's settings put in the environment, which a benchmark must not inherit: its
# scratch database and settings are its own.
NOT_INHERITED = ("DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE", "DJANGO_DEBUG", "MEMSITE_VAR_DIR")
TIMEOUT = 120  # seconds: far above any smoke run, so that a hung server fails the test, not the suite


@dataclass(frozen=True)
class Run:
    stdout: str
    results: Path

    def report(self, name: str) -> str:
        return (self.results / f"{name}.md").read_text()

    def tables(self, name: str) -> list[Table]:
        return tables_of(self.report(name))


def run_script(script: str, *args: str, results: Path, exits: tuple[int, ...] = (0,)) -> Run:
    """`python benchmarks/<script>.py args`; fails the test with its output if it exits otherwise
    than `exits` says (a benchmark whose targets are timings exits 1 when one is missed)."""
    environ = {name: value for name, value in os.environ.items() if name not in NOT_INHERITED}
    environ.update({"MEMSITE_BENCH_RESULTS": str(results), "TMPDIR": str(results)})
    done = subprocess.run(
        [sys.executable, f"benchmarks/{script}.py", *args],
        cwd=REPO,
        env=environ,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode in exits, f"benchmarks/{script}.py exited {done.returncode}:\n{done.stderr[-4000:]}"
    return Run(done.stdout, results)


@dataclass(frozen=True)
class Table:
    header: list[str]
    rows: list[list[str]]

    def column(self, name: str, *, nth: int = 0) -> list[str]:
        """The cells of the `nth` column headed `name` (headers repeat: "p95 ms" twice)."""
        indexes = [index for index, heading in enumerate(self.header) if heading == name]
        return [row[indexes[nth]] for row in self.rows]

    def first_cells(self) -> list[str]:
        return [row[0] for row in self.rows]


def tables_of(markdown: str) -> list[Table]:
    """The markdown tables of a report, in order."""
    found: list[Table] = []
    lines = [line.strip() for line in markdown.splitlines()]
    for index, line in enumerate(lines[:-1]):
        if line.startswith("|") and re.fullmatch(r"\|( *:?-+:? *\|)+", lines[index + 1]):
            rows = []
            for row in lines[index + 2 :]:
                if not row.startswith("|"):
                    break
                rows.append(cells(row))
            found.append(Table(cells(line), rows))
    return found


def cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip("|").split("|")]


def number(cell: str) -> float:
    """A figure of a report: `1,234`, `0.52`, `12×`, `3.1 ms`; NaN for a dash."""
    if cell.strip() in ("—", "-", ""):
        return math.nan
    match = re.search(r"-?\d[\d,]*(\.\d+)?", cell)
    assert match, f"no number in {cell!r}"
    return float(match.group().replace(",", ""))


def assert_timings(table: Table, *, count: str = "n", p50: str, p95: str, nth: int = 0) -> None:
    """Every row timed at least once, its p50 and p95 non-negative and in order (`nth`: which of
    the columns headed `p95` is the one of `p50`)."""
    for n, low, high in zip(table.column(count), table.column(p50), table.column(p95, nth=nth), strict=True):
        assert number(n) >= 1
        assert 0 <= number(low) <= number(high)


def services() -> tuple[str, str] | None:
    """The PostgreSQL and Redis URLs a benchmark that needs both may reset: the run's own, when
    the database's name says 'bench' (the benchmark drops and recreates it) and the Redis
    database is not 0 (its keys are deleted at the end); else None."""
    database, redis = os.environ.get("DATABASE_URL", ""), os.environ.get("REDIS_URL", "")
    if urlsplit(database).scheme not in ("postgres", "postgresql") or "bench" not in urlsplit(database).path:
        return None
    if urlsplit(redis).scheme != "redis" or urlsplit(redis).path.strip("/") in ("", "0"):
        return None
    return database, redis
