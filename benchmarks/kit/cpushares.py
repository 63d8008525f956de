"""Where a machine's CPU went while a block ran: the CPU seconds of each part of a run (a list of
processes, asked for again at every sample), of every other process and idle, from /proc. On a
shared machine, what other processes take shows up in every latency a benchmark measures."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

TICK_S = os.sysconf("SC_CLK_TCK")


def process_cpu(pid: int) -> float | None:
    """CPU seconds a process has used (every thread of it), or None once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / TICK_S  # utime, stime


def machine_cpu() -> tuple[float, float]:
    """CPU seconds of the whole machine: busy, idle (/proc/stat, every core)."""
    values = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = values[3] + values[4]  # idle, iowait
    return (sum(values[:8]) - idle) / TICK_S, idle / TICK_S


def pids_with(text: str) -> list[int]:
    """Processes whose command line holds `text`."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if text.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


class CpuMeter:
    """The CPU seconds of each part (`parts`: its name, and what lists its processes now) over a
    block. Sampled twice a second, so that processes that end during the block (a database
    backend whose connection closes) are counted too."""

    SAMPLE_S = 0.5

    def __init__(self, parts: dict[str, Callable[[], list[int]]]) -> None:
        self.parts = parts

    def _sample(self) -> dict[str, dict[int, float]]:
        return {
            name: {pid: cpu for pid in pids() if (cpu := process_cpu(pid)) is not None}
            for name, pids in self.parts.items()
        }

    @contextmanager
    def measure(self) -> Iterator[dict[str, float]]:
        """CPU seconds per part over the block, with "other processes" and "idle"."""
        spent: dict[str, float] = {}
        busy_start, idle_start = machine_cpu()
        start = self._sample()
        last = {name: dict(pids) for name, pids in start.items()}
        stop = threading.Event()

        def sample() -> None:
            while not stop.wait(self.SAMPLE_S):
                for name, pids in self._sample().items():
                    last[name].update(pids)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        try:
            yield spent
        finally:
            stop.set()
            sampler.join()
            for name, pids in self._sample().items():
                last[name].update(pids)
            busy_end, idle_end = machine_cpu()
            for name, pids in last.items():
                spent[name] = sum(cpu - start[name].get(pid, 0.0) for pid, cpu in pids.items())
            spent["other processes"] = max(0.0, busy_end - busy_start - sum(spent.values()))
            spent["idle"] = idle_end - idle_start


def cpu_text(spent: dict[str, float]) -> str:
    total = sum(spent.values())
    shares = ", ".join(
        f"{name} {seconds:.1f} s" if seconds < 10 else f"{name} {seconds:,.0f} s" for name, seconds in spent.items()
    )
    return f"CPU over the phase ({total:,.0f} CPU-seconds on {os.cpu_count()} cores): {shares}."
