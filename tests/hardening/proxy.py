"""A TCP proxy on 127.0.0.1 that a test can stop and start again, to take a backend (Redis,
PostgreSQL) away from memsite without touching the shared server behind it.

`stop()` closes the listener, so new connections are refused, and cuts every live connection
both ways, as a restarting server does; `start()` listens again on the same port."""

import socket
import threading
import time
from contextlib import suppress
from typing import Self


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class TcpProxy:
    def __init__(self, target_host: str, target_port: int, *, port: int | None = None):
        self.target = (target_host, target_port)
        self.port = port or free_port()
        self._lock = threading.Lock()
        self._listener: socket.socket | None = None
        self._sockets: set[socket.socket] = set()
        self.accepted = 0  # connections taken over the proxy's life

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        return self._listener is not None

    def start(self) -> None:
        if self._listener is not None:
            return
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        deadline = time.monotonic() + 10
        while True:  # the port may take a moment to be free again after stop()
            try:
                listener.bind(("127.0.0.1", self.port))
                break
            except OSError:
                if time.monotonic() > deadline:
                    listener.close()
                    raise
                time.sleep(0.05)
        listener.listen(128)
        listener.settimeout(0.1)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), name=f"proxy-{self.port}", daemon=True).start()

    def stop(self) -> None:
        """Refuse new connections and cut the live ones, at once."""
        with self._lock:
            listener, self._listener = self._listener, None
            live, self._sockets = self._sockets, set()
        if listener is not None:
            listener.close()
        for sock in live:
            _cut(sock)

    def _accept(self, listener: socket.socket) -> None:
        while self._listener is listener:
            try:
                client, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:  # closed by stop()
                return
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                _cut(client)
                continue
            client.settimeout(None)
            upstream.settimeout(None)
            with self._lock:
                if self._listener is not listener:  # stopped meanwhile
                    _cut(client)
                    _cut(upstream)
                    return
                self._sockets.update((client, upstream))
                self.accepted += 1
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        # One side ended: end both, as a server that goes away does.
        with self._lock:
            self._sockets.discard(source)
            self._sockets.discard(sink)
        _cut(source)
        _cut(sink)


def _cut(sock: socket.socket) -> None:
    with suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    with suppress(OSError):
        sock.close()
