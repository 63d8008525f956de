"""The embedded default's broker: kombu's filesystem transport, made safe for a writer and a
reader at the same moment. A message is written under a name no reader takes, then renamed
into the queue whole; a file that still cannot be read is set aside and logged, and the worker
goes on (kombu's own reader could take a file before it was written, and die). Explained in
docs/queue.md."""

import logging
import os
import uuid
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


class Channel(filesystem.Channel):
    # kombu's two base classes name the second argument differently; this follows the nearer.
    def _put(self, queue: str, payload: dict, **kwargs: object) -> None:  # type: ignore[override]
        final = Path(self.data_folder_out) / message_name(queue)
        writing = final.with_name(final.name + WRITING)
        try:
            writing.write_bytes(str_to_bytes(dumps(payload)))
            os.replace(writing, final)  # atomic: a reader sees all of the message or none of it
        except OSError as exc:
            writing.unlink(missing_ok=True)
            raise filesystem.ChannelError(f"Cannot add file {str(final)!r} to directory") from exc

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
