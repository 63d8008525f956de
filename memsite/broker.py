"""The embedded default's broker: kombu's filesystem transport, made safe for writers and
readers at the same moment. A message, or an exchange's table of queues, is written under a
name no reader takes, then renamed into place whole; a message that still cannot be read is
set aside and logged, and the worker goes on (kombu's own readers could read a file before it
was written, and die). Explained in docs/queue.md."""

import fcntl
import logging
import os
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from time import monotonic

from kombu.transport import filesystem
from kombu.transport.virtual import Empty
from kombu.utils.encoding import bytes_to_str, str_to_bytes
from kombu.utils.json import dumps, loads

logger = logging.getLogger(__name__)

WRITING = ".part"  # a message being written: not `<queue>.msg`, so no reader takes it
SET_ASIDE = "unreadable"  # under the processed folder: messages that could not be read


def message_name(queue: str) -> str:
    """A new message's file name: in the order sent (kombu's readers take the smallest first),
    then unique, then the queue it belongs to."""
    return f"{int(monotonic() * 1000)}_{uuid.uuid4()}.{queue}.msg"


def is_message_of(filename: str, queue: str) -> bool:
    return filename.partition(".")[2] == f"{queue}.msg"


def write_whole(path: Path, data: bytes) -> None:
    """`data` at `path`, which readers see whole or not at all: written beside it under a name
    no reader takes, then renamed over it (a rename within a folder is atomic)."""
    writing = path.with_name(f"{path.name}.{uuid.uuid4().hex}{WRITING}")
    try:
        writing.write_bytes(data)
        os.replace(writing, path)
    finally:
        writing.unlink(missing_ok=True)


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """The lock file at `path`, held until the block ends: one changer of a table at a time."""
    with path.open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        yield


Bindings = list[filesystem.exchange_queue_t]


def binding_of(routing_key: str | None, pattern: str | None, queue: str | None) -> filesystem.exchange_queue_t:
    return filesystem.exchange_queue_t(routing_key or "", pattern or "", queue or "")


class Channel(filesystem.Channel):
    # kombu's two base classes name the second argument differently; this follows the nearer.
    def _put(self, queue: str, payload: dict, **kwargs: object) -> None:  # type: ignore[override]
        final = Path(self.data_folder_out) / message_name(queue)
        try:
            write_whole(final, str_to_bytes(dumps(payload)))
        except OSError as exc:
            raise filesystem.ChannelError(f"Cannot add file {str(final)!r} to directory") from exc

    def get_table(self, exchange: str) -> Bindings:
        """The exchange's queues: those of its file, and those this process has bound. kombu
        keeps a binding in a state its threads share before it writes the binding to the file:
        another thread finding it there publishes at once, and by the file alone its message
        would go to no queue."""
        stored = self._stored_table(exchange)
        known = [binding_of(*meta) for meta in self.state.exchanges.get(exchange, {}).get("table", [])]
        return stored + [binding for binding in known if binding not in stored]

    def _stored_table(self, exchange: str) -> Bindings:
        try:
            body = self._exchange_file(exchange).read_bytes()
        except FileNotFoundError:
            return []
        return [filesystem.exchange_queue_t(*binding) for binding in loads(bytes_to_str(body))]

    def _queue_bind(self, exchange: str, routing_key: str, pattern: str, queue: str) -> None:
        binding = binding_of(routing_key, pattern, queue)
        self._table_change(exchange, lambda table: table if binding in table else [binding, *table])

    def _delete(
        self, queue: str, exchange: str, routing_key: str, pattern: str, *args: object, **kwargs: object
    ) -> None:
        # The virtual channel's own forgetting, without kombu's rewrite of the table in place.
        super(filesystem.Channel, self)._delete(queue, exchange, routing_key, pattern, *args, **kwargs)
        binding = binding_of(routing_key, pattern, queue)
        self._table_change(exchange, lambda table: [kept for kept in table if kept != binding])

    def _table_change(self, exchange: str, change: Callable[[Bindings], Bindings]) -> None:
        """The exchange's table of queues, changed by one process at a time and written whole."""
        file = self._exchange_file(exchange)
        self.control_folder.mkdir(exist_ok=True)
        with locked(file.with_name(f"{file.name}.lock")):
            table = self._stored_table(exchange)
            changed = change(table)
            if changed != table:
                write_whole(file, str_to_bytes(dumps(changed)))

    def _get(self, queue: str, timeout: float | None = None) -> dict:
        for filename in sorted(os.listdir(self.data_folder_in)):
            if not is_message_of(filename, queue):
                continue
            body = self._take(filename)
            if body is None:
                continue  # another worker took it first
            try:
                return loads(bytes_to_str(body))
            except ValueError:
                self._set_aside(filename, body)
        raise Empty()

    def _take(self, filename: str) -> bytes | None:
        """The message's bytes, once this process has moved its file out of the queue (so no
        other reader gets it); None when another reader moved it first."""
        taken = Path(self.processed_folder) / f"{filename}.{os.getpid()}"
        try:
            os.replace(Path(self.data_folder_in) / filename, taken)
        except FileNotFoundError:
            return None
        try:
            return taken.read_bytes()
        finally:
            taken.unlink(missing_ok=True)

    def _set_aside(self, filename: str, body: bytes) -> None:
        folder = Path(self.processed_folder) / SET_ASIDE
        folder.mkdir(parents=True, exist_ok=True)
        (folder / filename).write_bytes(body)
        logger.error(
            "The broker message %s is not valid JSON (%d bytes); it is kept in %s and the worker goes on.",
            filename,
            len(body),
            folder,
        )


class Transport(filesystem.Transport):
    Channel = Channel
