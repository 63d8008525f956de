"""The load benchmark's report: its sections (a heading, lines, a table), its checks, and the
tables of operations as the clients and the server timed them."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from benchmarks.kit.harness import Table, millis_text, percentiles
from benchmarks.kit.httpclients import Tallies, Tally
from benchmarks.measures.loadclients import READS_SUFFIX


@dataclass(frozen=True)
class Check:
    what: str
    found: str
    passed: bool


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


def duration_row(what: str, millis: Sequence[float], count_text: str) -> tuple[str, ...]:
    p50, p95, p99 = percentiles(millis, 50, 95, 99)
    return (
        what,
        count_text,
        millis_text(p50),
        millis_text(p95),
        millis_text(p99),
        millis_text(max(millis, default=float("nan"))),
    )


def counts_text(counter: Counter) -> str:
    return ", ".join(f"{n:,} {key}" for key, n in counter.most_common())


def reasons_text(texts: Sequence[str]) -> str:
    if not texts:
        return ""
    common = Counter(text.splitlines()[0][:120] if text else "(none)" for text in texts).most_common(3)
    return "(" + "; ".join(f"{n}× {text}" for text, n in common) + ")"
