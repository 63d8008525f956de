"""Markdown renders by memory/rendering.py timed in a forked child that is killed when it runs
late: a super-linear renderer takes hours on some documents."""

from __future__ import annotations

import multiprocessing
import time
from typing import Any


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
    """Milliseconds of each of `repeats` renders of `text`, in a forked child killed after
    `timeout` seconds; and what cut the renders short, if anything."""
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
