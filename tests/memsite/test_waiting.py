"""Waiting cannot take every web thread.

Requests that wait (a search's `?wait`, chat's LLM call) and long downloads (a project's
export) take one of the process's slots for waiting (MEMSITE_WAIT_SLOTS); when none is free a
search answers at once, and chat and an export answer 429.
A client that makes the server wait for its request body is answered 408 once nothing has come
for MEMSITE_BODY_TIMEOUT_S (memsite.limits.BodyReadTimeout)."""

import io
import json
import os
import socket
import subprocess
import sys
import tarfile
import threading
from contextlib import ExitStack
from pathlib import Path

import pytest
from django.conf import settings as project_settings
from django.urls import reverse

from agents.context.models import Message
from memory.models import Search
from memory.services import node_create
from memsite.limits import BodyReadTimeout, WaitSlots, wait_slots
from tests.factories import AgentFactory, ProjectFactory, acting

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
BASE_DIR = Path(project_settings.BASE_DIR)


def free_slots(slots: WaitSlots) -> int:
    with ExitStack() as stack:
        return sum(stack.enter_context(slots.hold()) for _ in range(slots.size))


@pytest.fixture
def slots_taken():
    """Every slot held, as by other requests waiting."""
    slots = wait_slots()
    with ExitStack() as stack:
        assert all(stack.enter_context(slots.hold()) for _ in range(slots.size))
        yield slots
    assert free_slots(slots) == slots.size


@pytest.fixture
def agent(offline_llm):
    return AgentFactory(name="scout", model="gpt-4")


def chat_lines(agent) -> list[str]:
    return list(Message.objects.filter(agent=agent).order_by("position").values_list("content", flat=True))


def search_start(api, wait: int):
    return api.post(reverse("memory-api:search-start") + f"?wait={wait}", {"questions": ["Where?"]}, format="json")


# -- ?wait -------------------------------------------------------------------------------------


def test_wait_answers_at_once_with_the_queued_search_when_no_slot_is_free(api, slots_taken, monkeypatch):
    def pause(seconds: float) -> None:
        raise AssertionError("the request waited without a slot")

    monkeypatch.setattr("memory.selectors.searches.sleep", pause)

    response = search_start(api, wait=30)

    assert response.status_code == 202
    assert response.json()["status"] == "queued"
    assert Search.objects.get().status == Search.Status.QUEUED


def test_a_waiting_search_holds_a_slot_and_gives_it_back(api, monkeypatch):
    slots = wait_slots()
    free_while_waiting = []

    def pause(seconds: float) -> None:
        free_while_waiting.append(free_slots(slots))
        Search.objects.update(status=Search.Status.DONE)  # as a worker would end it

    monkeypatch.setattr("memory.selectors.searches.sleep", pause)

    response = search_start(api, wait=30)

    assert response.status_code == 200
    assert free_while_waiting == [slots.size - 1]
    assert free_slots(slots) == slots.size


# -- chat --------------------------------------------------------------------------------------


def test_chat_is_busy_when_no_slot_is_free_and_writes_nothing(api, agent, slots_taken):
    response = api.post(reverse("agents-api:chat", args=[agent.pk]), {"text": "Are you there?"}, format="json")

    assert response.status_code == 429
    assert response.json()["detail"].startswith("Busy") and "try again" in response.json()["detail"].lower()
    assert int(response["Retry-After"]) > 0
    assert chat_lines(agent) == []


def test_chat_with_a_free_slot_answers_and_gives_the_slot_back(api, agent):
    response = api.post(reverse("agents-api:chat", args=[agent.pk]), {"text": "Are you there?"}, format="json")

    assert response.status_code == 201
    assert chat_lines(agent)[0] == "Are you there?"
    assert free_slots(wait_slots()) == wait_slots().size


@pytest.mark.parametrize("headers", [HTMX, {}], ids=["htmx", "without JavaScript"])
def test_the_dashboards_chat_is_busy_when_no_slot_is_free(client, user, agent, slots_taken, headers):
    client.force_login(user)

    response = client.post(reverse("agents:brain_chat", args=[agent.pk]), {"text": "Are you there?"}, **headers)

    assert response.status_code == 429
    assert "Busy" in response.content.decode() and int(response["Retry-After"]) > 0
    assert chat_lines(agent) == []


# -- downloads ---------------------------------------------------------------------------------


@pytest.fixture
def project(user):
    project = ProjectFactory()
    node_create(
        parent=project,
        type="project_file_bytes",
        name="a.txt",
        context={"file_path": "a.txt"},
        content=b"a",
        by=acting(user),
    )
    return project


def export(api, client, user, project, where: str):
    if where == "api":
        return api.get(reverse("memory-api:project-export", args=[project.pk]))
    client.force_login(user)
    return client.get(reverse("memory:project_download", args=[project.pk]))


@pytest.mark.parametrize("where", ["api", "dashboard"])
def test_an_export_is_busy_when_no_slot_is_free(api, client, user, project, slots_taken, where):
    response = export(api, client, user, project, where)

    assert response.status_code == 429
    assert b"Busy" in response.content


@pytest.mark.parametrize("where", ["api", "dashboard"])
def test_an_export_holds_a_slot_until_its_response_is_closed(api, client, user, project, where):
    slots = wait_slots()
    response = export(api, client, user, project, where)
    assert response.status_code == 200
    assert free_slots(slots) == slots.size - 1

    with tarfile.open(fileobj=io.BytesIO(response.getvalue()), mode="r:gz") as archive:
        assert archive.getnames() == ["a.txt"]
    response.close()

    assert free_slots(slots) == slots.size


# -- slow request bodies -----------------------------------------------------------------------


class App:
    """A WSGI application that reads the body it is given."""

    def __init__(self):
        self.bodies: list[bytes] = []

    def __call__(self, environ, start_response):
        self.bodies.append(environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0)))
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"read"]


@pytest.fixture
def connection(settings):
    """The server's end of a connection, as gunicorn hands it over, and the client's."""
    settings.MEMSITE_BODY_TIMEOUT_S = 1
    server, client = socket.socketpair()
    with server, client:
        yield server, client


def call(app, server: socket.socket, *, length: int, path: str = "/login/", under_gunicorn: bool = True):
    environ = {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": path,
        "CONTENT_LENGTH": str(length),
        "wsgi.input": server.makefile("rb"),
    }
    if under_gunicorn:
        environ["gunicorn.socket"] = server
    answered = {}

    def start_response(status, headers):
        answered.update(status=status, headers=dict(headers))

    answered["body"] = b"".join(BodyReadTimeout(app)(environ, start_response))
    return answered


def test_a_body_that_never_comes_is_a_408_and_the_app_never_runs(connection):
    server, _ = connection
    app = App()

    answered = call(app, server, length=100)

    assert answered["status"] == "408 Request Timeout" and b"stopped arriving" in answered["body"]
    assert app.bodies == []
    assert server.gettimeout() is None  # gunicorn's own setting again


def test_an_api_request_is_told_in_json(connection):
    server, client = connection
    client.sendall(b"x" * 10)

    answered = call(App(), server, length=100, path="/api/searches/")

    assert answered["status"] == "408 Request Timeout"
    assert answered["headers"]["Content-Type"] == "application/json"
    assert "stopped arriving" in json.loads(answered["body"])["detail"]


def test_a_body_that_ends_short_is_a_400(connection):
    server, client = connection
    client.sendall(b"x" * 10)
    client.shutdown(socket.SHUT_WR)

    answered = call(App(), server, length=100)

    assert answered["status"] == "400 Bad Request" and b"90 bytes short" in answered["body"]


def test_a_body_that_arrives_reaches_the_app_whole(connection):
    server, client = connection
    body = os.urandom(300_000)  # more than the socket's buffers hold: sent while it is read
    sender = threading.Thread(target=client.sendall, args=(body,))
    sender.start()
    app = App()
    try:
        answered = call(app, server, length=len(body))
    finally:
        sender.join()

    assert answered["status"] == "200 OK" and app.bodies == [body]


def test_a_body_its_view_takes_past_a_forms_limit_is_read_with_the_timeout_too(connection):
    server, client = connection
    client.sendall(b"x" * 10)
    app = App()

    answered = call(app, server, length=2 * 1024 * 1024, path=reverse("memory:document_save", args=["N0DE"]))

    assert answered["status"] == "408 Request Timeout" and app.bodies == []


def test_a_body_over_what_its_view_takes_is_left_unread_for_the_413(connection):
    """The login takes 1 MiB: 2 MiB announced are refused from the Content-Length, by Django."""
    server, _ = connection
    seen = []

    def refusing(environ, start_response):
        seen.append(environ["wsgi.input"])
        start_response("413 Content Too Large", [("Content-Type", "text/plain")])
        return [b"refused"]

    answered = call(refusing, server, length=2 * 1024 * 1024, path="/login/")

    # Not read first: that would have waited for the body, and answered 408 without the app.
    assert answered["status"] == "413 Content Too Large" and len(seen) == 1


def test_without_gunicorn_the_body_is_left_to_the_app(connection):
    server, client = connection
    client.sendall(b"hello")
    app = App()

    answered = call(app, server, length=5, under_gunicorn=False)

    assert answered["status"] == "200 OK" and app.bodies == [b"hello"]


def received(connection: socket.socket) -> bytes:
    """All the server sends until it closes the connection."""
    chunks = []
    while chunk := connection.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def test_gunicorn_answers_a_stalled_login_408_and_serves_on(tmp_path):
    """One gunicorn thread: a body that never comes would hold it for good. The listening socket
    is bound before gunicorn starts, so connections wait in its backlog until gunicorn is up."""
    listener = socket.create_server(("127.0.0.1", 0))
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "memsite.settings",
        "DJANGO_DEBUG": "true",
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
        "MEMSITE_BODY_TIMEOUT_S": "1",
    }
    command = [sys.executable, "-m", "gunicorn", "memsite.wsgi:application", f"--bind=fd://{listener.fileno()}"]
    command += ["--worker-class=gthread", "--workers=1", "--threads=1"]
    with listener, open(tmp_path / "gunicorn.log", "wb") as log:
        server = subprocess.Popen(
            command, cwd=BASE_DIR, env=env, pass_fds=[listener.fileno()], stdout=log, stderr=subprocess.STDOUT
        )
        try:
            with socket.create_connection(listener.getsockname(), timeout=60) as stalled:
                # With a CSRF cookie, as a browser that loaded the page has: the CSRF check reads
                # the form (a client without one is refused before anything is read).
                stalled.sendall(
                    b"POST /login/ HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: csrftoken=" + b"c" * 32 + b"\r\n"
                    b"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\n"
                )
                refused = received(stalled)
            with socket.create_connection(listener.getsockname(), timeout=60) as next_client:
                next_client.sendall(b"GET /login/ HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                served = received(next_client)
        finally:
            server.terminate()
            server.wait(timeout=30)

    assert refused.startswith(b"HTTP/1.1 408 "), (tmp_path / "gunicorn.log").read_text()
    assert b"stopped arriving" in refused
    assert served.startswith(b"HTTP/1.1 200 ")
