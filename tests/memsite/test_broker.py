"""The embedded broker (memsite/broker.py): a message is read whole or not at all, however the
writer and the reader interleave, and a file that is not a message stops nothing."""

import threading
import time
import uuid
from pathlib import Path

import pytest
from kombu import Connection

from memsite.broker import SET_ASIDE, Transport
from tests.memsite.test_deploy_settings import run_memsite


@pytest.fixture
def folders(tmp_path: Path) -> dict[str, Path]:
    made = {name: tmp_path / name for name in ("queue", "processed", "control")}
    for folder in made.values():
        folder.mkdir()
    return made


@pytest.fixture
def name() -> str:
    """A queue of the test's own: kombu keeps the exchanges it has declared in a state shared by
    every connection of the process, which would route one test's messages by another's folders."""
    return f"work-{uuid.uuid4().hex}"


@pytest.fixture
def connection(folders):
    options = {
        "data_folder_in": str(folders["queue"]),
        "data_folder_out": str(folders["queue"]),
        "processed_folder": str(folders["processed"]),
        "control_folder": str(folders["control"]),
        "polling_interval": 0.01,
    }
    with Connection("filesystem://localhost/", transport=Transport, transport_options=options) as made:
        yield made


def test_the_settings_name_this_transport_for_the_embedded_broker(tmp_path):
    """Read in a process of its own without REDIS_URL, whichever broker the suite runs with."""
    code = "from django.conf import settings; print(settings.CELERY_BROKER_URL, settings.CELERY_BROKER_TRANSPORT)"
    done = run_memsite(tmp_path, code, DJANGO_DEBUG="true")
    assert done.stdout.split() == ["filesystem://localhost/", "memsite.broker:Transport"], done.stderr


def test_a_message_sent_is_read_back_and_leaves_no_file_behind(connection, folders, name):
    queue = connection.SimpleQueue(name)
    queue.put({"n": 1})
    assert [path.name.endswith(f".{name}.msg") for path in folders["queue"].iterdir()] == [True]
    message = queue.get(timeout=1)
    message.ack()
    assert message.payload == {"n": 1}
    assert list(folders["queue"].iterdir()) == []
    assert list(folders["processed"].iterdir()) == []


def put_by_hand(folders, name: str, body: bytes) -> Path:
    """A file in the queue as kombu names them, sorted before any message sent."""
    path = folders["queue"] / f"0_{uuid.uuid4()}.{name}.msg"
    path.write_bytes(body)
    return path


@pytest.mark.parametrize("body", [b"", b'{"body": "cut sho'])
def test_an_unreadable_file_is_set_aside_and_the_next_message_still_read(connection, folders, name, body):
    planted = put_by_hand(folders, name, body)
    queue = connection.SimpleQueue(name)
    queue.put({"n": 2})
    message = queue.get(timeout=1)
    message.ack()
    assert message.payload == {"n": 2}
    assert (folders["processed"] / SET_ASIDE / planted.name).read_bytes() == body
    assert list(folders["queue"].iterdir()) == []


def test_an_unreadable_file_alone_is_an_empty_queue(connection, folders, name):
    put_by_hand(folders, name, b"")
    queue = connection.SimpleQueue(name)
    with pytest.raises(queue.Empty):
        queue.get(timeout=0.2)


def test_writers_and_readers_at_once_lose_and_repeat_nothing(connection, folders, name):
    sent = 400
    received: list[int] = []
    errors: list[BaseException] = []
    deadline = time.monotonic() + 30  # a lost message fails the test instead of hanging it

    def write(start: int) -> None:
        with connection.clone() as own:
            queue = own.SimpleQueue(name)
            for n in range(start, sent, 2):
                queue.put({"n": n})

    def read() -> None:
        with connection.clone() as own:
            queue = own.SimpleQueue(name)
            try:
                while len(received) < sent and time.monotonic() < deadline:
                    try:
                        message = queue.get(timeout=0.5)
                    except queue.Empty:
                        continue
                    message.ack()
                    received.append(message.payload["n"])
            except BaseException as exc:  # a torn read would surface here
                errors.append(exc)

    threads = [threading.Thread(target=write, args=(start,)) for start in (0, 1)]
    threads += [threading.Thread(target=read) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    assert sorted(received) == list(range(sent))
    assert not (folders["processed"] / SET_ASIDE).exists()
