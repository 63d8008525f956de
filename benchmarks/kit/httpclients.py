"""HTTP clients of a server on loopback, as the load and abuse benchmarks make them: timed requests
on a keep-alive `Connection` or on a connection each (`fetch`), calls run at once or back to back
in threads, answers tallied per operation, and gunicorn's access log for the server's own time of
the same requests."""

from __future__ import annotations

import http.client
import itertools
import json
import re
import select
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

CHUNK_BYTES = 1024 * 1024  # read at a time when a body is counted
HEAD_BYTES = 200  # of each body `fetch` reads, kept for the notes

T = TypeVar("T")


@dataclass(frozen=True)
class Answer:
    status: int  # 0: no answer
    ms: float
    failure: str = ""  # "timeout", "connection", or what became of a slow body
    body: bytes = b""  # whole, or its first HEAD_BYTES when `fetch` read it
    size: int = 0  # the body's bytes, counted as they came
    cookies: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300 and not self.failure

    @property
    def label(self) -> str:
        return self.failure or str(self.status)

    def json(self) -> Any:
        return json.loads(self.body)


def _exchange(
    conn: http.client.HTTPConnection,
    method: str,
    url: str,
    body: bytes | None,
    headers: dict[str, str],
    keep: int | None,
) -> Answer:
    """One request on `conn`, timed from sending it to its body's end: `keep` bytes of the body
    kept (None: all), the rest counted as it comes, never held whole. A connection that fails or
    that the server closes is closed here too; http.client opens it again on the next request."""
    started = time.perf_counter()
    try:
        conn.request(method, url, body=body, headers=headers)
        response = conn.getresponse()
        kept = response.read(keep)
        size = len(kept)
        while chunk := response.read(CHUNK_BYTES):
            size += len(chunk)
        if response.will_close:
            conn.close()
        cookies = tuple(response.headers.get_all("Set-Cookie") or ())
        return Answer(response.status, (time.perf_counter() - started) * 1000, body=kept, size=size, cookies=cookies)
    except TimeoutError:
        failure = "timeout"
    except (OSError, http.client.HTTPException):
        failure = "connection"
    conn.close()
    return Answer(0, (time.perf_counter() - started) * 1000, failure)


class Connection:
    """One keep-alive connection, as one client of the swarm or one browser tab holds it."""

    def __init__(self, port: int, headers: dict[str, str], timeout: float) -> None:
        self.http = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        self.headers = headers

    def send(self, method: str, url: str, payload: Any = None) -> Answer:
        """The request, `payload` sent as JSON; the whole body kept."""
        headers, body = self.headers, None
        if payload is not None:
            body = json.dumps(payload).encode()
            headers = {**headers, "Content-Type": "application/json"}
        return _exchange(self.http, method, url, body, headers, keep=None)

    def close(self) -> None:
        self.http.close()


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
    try:
        return _exchange(conn, method, url, body, headers or {}, keep=HEAD_BYTES)
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


def _held_answers(sockets: Sequence[socket.socket], hold: float) -> list[Answer]:
    """What the server did with each connection it was left holding: answered it, closed it,
    or holds it still."""
    readable, _, _ = select.select(sockets, [], [], 0.2)
    answers = []
    for sock in sockets:
        if sock not in readable:
            answers.append(Answer(0, hold * 1000, "held open"))
            continue
        try:
            data = sock.recv(64 * 1024)  # an error page: a few hundred bytes
        except OSError:
            data = None
        if not data:
            answers.append(Answer(0, 0, "closed" if data is not None else "reset"))
            continue
        status = int(data.split()[1]) if data.startswith(b"HTTP/") else 0
        answers.append(Answer(status, 0, body=data[:HEAD_BYTES], size=len(data)))
    return answers


def held_open(port: int, request: bytes, *, connections: int, hold: float) -> list[Answer]:
    """`connections` connections that each send `request` (a body announced and never sent, say)
    and nothing more, held `hold` seconds."""
    sockets: list[socket.socket] = []
    try:
        for _ in range(connections):
            sock = socket.create_connection(("127.0.0.1", port), timeout=5)
            sockets.append(sock)
            sock.sendall(request)
        time.sleep(hold)
        return _held_answers(sockets, hold)
    finally:
        for sock in sockets:
            sock.close()


def announced(port: int, head: bytes, start: bytes, *, timeout: float = 30.0) -> Answer:
    """The answer to a request whose head announces a body of which only `start` is sent: a
    server that refuses from the Content-Length answers at once; one that waits for the rest,
    a timeout. (Sending the whole of a refused body fails half-way, when the server closes.)"""
    started = time.perf_counter()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
            sock.sendall(head + start)
            response = http.client.HTTPResponse(sock)
            response.begin()
            body = response.read(HEAD_BYTES)
            return Answer(response.status, (time.perf_counter() - started) * 1000, body=body, size=len(body))
    except TimeoutError:
        failure = "timeout"
    except (OSError, http.client.HTTPException):
        failure = "connection"
    return Answer(0, (time.perf_counter() - started) * 1000, failure)


# --- tallies per operation ----------------------------------------------------------------------


@dataclass
class Tally:
    """The answers to one operation."""

    connections: int = 0
    millis: list[float] = field(default_factory=list)
    statuses: Counter[int] = field(default_factory=Counter)
    failures: Counter[str] = field(default_factory=Counter)
    bodies: list[str] = field(default_factory=list)  # the first few error bodies, for the notes

    def add(self, answer: Answer) -> None:
        self.millis.append(answer.ms)
        if answer.failure:
            self.failures[answer.failure] += 1
        else:
            self.statuses[answer.status] += 1
            if not answer.ok and len(self.bodies) < 3:
                self.bodies.append(f"{answer.status}: {answer.body[:300].decode(errors='replace')}")

    def merge(self, other: Tally) -> None:
        self.connections += other.connections
        self.millis += other.millis
        self.statuses.update(other.statuses)
        self.failures.update(other.failures)
        self.bodies += other.bodies[: max(0, 3 - len(self.bodies))]

    @property
    def errors(self) -> int:
        return sum(n for status, n in self.statuses.items() if not 200 <= status < 300) + sum(self.failures.values())

    def errors_text(self) -> str:
        if not self.errors:
            return "0"
        parts = [f"{n}× {status}" for status, n in sorted(self.statuses.items()) if not 200 <= status < 300]
        parts += [f"{n}× {kind}" for kind, n in sorted(self.failures.items())]
        return f"{self.errors} ({', '.join(parts)})"


def own_tally(mine: dict[str, Tally], label: str) -> Tally:
    """A client thread's tally of `label`, on its one connection."""
    if label not in mine:
        mine[label] = Tally(connections=1)
    return mine[label]


class Tallies:
    """Tallies by operation, merged from each thread's own when it ends."""

    def __init__(self) -> None:
        self.by_label: dict[str, Tally] = {}
        self.lock = threading.Lock()

    def merge(self, mine: dict[str, Tally]) -> None:
        with self.lock:
            for label, tally in mine.items():
                self.by_label.setdefault(label, Tally()).merge(tally)

    def error_bodies(self) -> list[str]:
        return [body for tally in self.by_label.values() for body in tally.bodies]


def run_clients(clients: Sequence[Callable[[dict[str, Tally]], None]], tallies: Tallies) -> float:
    """Each client in a thread of its own with a tally of its own; the seconds until all ended."""

    def body(client: Callable[[dict[str, Tally]], None]) -> None:
        mine: dict[str, Tally] = {}
        try:
            client(mine)
        finally:
            tallies.merge(mine)

    started = time.monotonic()
    threads = [threading.Thread(target=body, args=(client,)) for client in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.monotonic() - started


# --- the server's side ----------------------------------------------------------------------------

# Requests as gunicorn's access log writes them: method, path, status, microseconds.
ACCESS_FORMAT = "%(m)s %(U)s %(s)s %(D)s"


class AccessLog:
    """gunicorn's access log: the time each request took in the server, from the moment a worker
    thread took it up to the response written. What the client measured beyond that is waiting:
    in the listen queue and in the worker's queue for a free thread. `routes`: the operation of
    each pattern of "METHOD /path"."""

    def __init__(self, path: Path, routes: Sequence[tuple[re.Pattern[str], str]]) -> None:
        self.path = path
        self.routes = routes

    @property
    def gunicorn_args(self) -> str:
        return f"--access-logfile {self.path} --access-logformat '{ACCESS_FORMAT}'"

    def mark(self) -> int:
        return self.path.stat().st_size if self.path.exists() else 0

    def server_millis(self, start: int, end: int) -> dict[str, list[float]]:
        """Milliseconds per operation of the requests logged between two marks."""
        with open(self.path, "rb") as file:
            file.seek(start)
            lines = file.read(end - start).decode(errors="replace").splitlines()
        found: dict[str, list[float]] = {}
        for line in lines:
            parts = line.split()
            if len(parts) != 4:
                continue
            request = f"{parts[0]} {parts[1]}"
            label = next((label for pattern, label in self.routes if pattern.match(request)), None)
            if label is not None:
                found.setdefault(label, []).append(int(parts[3]) / 1000)
        return found
