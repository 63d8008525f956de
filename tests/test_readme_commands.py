"""The README's shell commands, run as written against memsite started as `make run` starts it.

The Makefile's set-up commands (migrate, the demo seed) run on a SQLite database and var/ of the
test's own, with DEBUG on; then honcho starts Procfile.dev's web server and worker on a free
port. The token command and the curl walk-through are read from README.md's fenced blocks, so
the test fails when the README and memsite part ways: each runs in bash, on that port, and must
exit 0 and answer the JSON the README says it does."""

import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.process_files import ROOT

README = ROOT / "README.md"
VENV_BIN = Path(sys.executable).parent  # the .venv/bin `make run` puts first on the PATH
README_ADDRESS = "127.0.0.1:8000"  # where the README's commands reach memsite
START_S = 120  # the web server answering and the worker ready, on a busy machine
COMMAND_S = 60  # one command; the search waits at most 20 s of it
# What would point memsite elsewhere than `make run`'s embedded default (SQLite and the
# filesystem broker under var/, the offline provider): the test's own settings, CI's services.
OUTSIDE = re.compile(r"^(DJANGO_|MEMSITE_|DATABASE_URL$|REDIS_URL$|OPENAI_|PORT$|PYTHONPATH$)")
# A call that fails (4xx, 5xx) exits non-zero and says why, where plain curl would exit 0.
CURL_FAILS = 'curl() { command curl --silent --show-error --fail-with-body "$@"; }\n'
NOTES = "# Notes\n\nStaging listens on port 8443.\n"  # the notes.md the last command uploads


# -- what the README says ---------------------------------------------------------------------


def shell_blocks() -> list[str]:
    return re.findall(r"^```sh\n(.*?)^```", README.read_text(), re.DOTALL | re.MULTILINE)


def token_block() -> int:
    blocks = shell_blocks()
    found = [index for index, block in enumerate(blocks) if "manage.py token_create" in block]
    assert len(found) == 1, "README.md should show one token_create command in a ```sh block"
    return found[0]


def token_command(with_options: bool) -> str:
    """The README's token_create line, its [optional] parts left out or taken in."""
    (line,) = [line for line in shell_blocks()[token_block()].splitlines() if "token_create" in line]
    options = r" \1" if with_options else ""
    return re.sub(r" \[([^]]*)\]", options, line).replace(".venv/bin/python", shlex.quote(sys.executable))


@dataclass(frozen=True)
class Step:
    says: str  # the comment above it
    command: str  # on one line

    @property
    def method(self) -> str:
        words = shlex.split(self.command)
        if "-X" in words:
            return words[words.index("-X") + 1]
        return "POST" if {"-d", "--data-binary"} & set(words) else "GET"

    @property
    def path(self) -> str:
        match = re.search(rf"http://{re.escape(README_ADDRESS)}(/[^\s\"'?]*)", self.command)
        assert match, f"no memsite URL in {self.command!r}"
        return match.group(1)

    def sent(self) -> dict:
        words = shlex.split(self.command)
        return json.loads(words[words.index("-d") + 1])


def walkthrough() -> list[Step]:
    """The commands of the block after the token's, each with the comment that says what it does."""
    block = re.sub(r"\\\n\s*", " ", shell_blocks()[token_block() + 1])
    steps, says = [], ""
    for line in block.splitlines():
        if line.startswith("#"):
            says = line.lstrip("# ")
        elif line.strip():
            steps.append(Step(says, line.strip()))
    return steps


# -- memsite as `make run` starts it -------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def environment(var: Path, port: int) -> dict[str, str]:
    """`make run`'s: the user's environment, DEBUG on, PORT, the .venv first on the PATH; var/ the test's."""
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^run: export DJANGO_DEBUG = true$", makefile, re.MULTILINE)
    env = {name: value for name, value in os.environ.items() if not OUTSIDE.match(name)}
    return {
        **env,
        "DJANGO_DEBUG": "true",
        "PORT": str(port),
        "PATH": f"{VENV_BIN}:{env.get('PATH', '/usr/bin:/bin')}",
        "MEMSITE_VAR_DIR": str(var),
        "PYTHONPATH": str(ROOT),  # this checkout's code, wherever the .venv was installed from
    }


def set_up_commands(port: int, env: dict[str, str]) -> list[list[str]]:
    """The manage.py commands `make run` runs before honcho, as make shows them."""
    shown = subprocess.run(
        ["make", "--no-print-directory", "-n", "-o", "install", "run", f"PORT={port}"],
        cwd=ROOT,
        # Under `make test` the outer make's flags would reach this one.
        env={name: value for name, value in env.items() if name not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")},
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    ).stdout.splitlines()
    honcho = next(index for index, line in enumerate(shown) if "honcho start -f Procfile.dev" in line)
    commands = [shlex.split(line) for line in shown[:honcho]]
    assert commands and all(command[:2] == [".venv/bin/python", "manage.py"] for command in commands), shown
    return [command[2:] for command in commands]


# The set-up commands in one interpreter, as manage.py runs each: Django starts once, not three times.
SET_UP = """
import json, os, sys
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memsite.settings")
import django
django.setup()
from django.core.management import call_command
for command in json.loads(sys.argv[1]):
    call_command(*command)
"""


@dataclass
class Memsite:
    url: str
    env: dict[str, str]
    log: Path
    honcho: subprocess.Popen
    demo_search: int  # the search `seed_demo` queued

    def tail(self) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-40:])

    def wait_until_ready(self) -> None:
        deadline = time.monotonic() + START_S
        while time.monotonic() < deadline:
            assert self.honcho.poll() is None, f"honcho stopped:\n{self.tail()}"
            if " ready." in self.log.read_text(errors="replace") and self.answers("/healthz"):
                return
            time.sleep(0.2)
        raise AssertionError(f"memsite did not start in {START_S} s:\n{self.tail()}")

    def answers(self, path: str) -> bool:
        try:
            with urllib.request.urlopen(self.url + path, timeout=5) as response:
                return response.status == 200
        except OSError:
            return False

    def get(self, path: str, key: str) -> bytes:
        request = urllib.request.Request(self.url + path, headers={"Authorization": f"Token {key}"})
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.read()

    def demo_search_ended(self, key: str) -> str:
        """The demo search's status once the worker has ended it: what `make run` queued is done,
        as it is by the time someone reads the README."""
        deadline = time.monotonic() + START_S
        while time.monotonic() < deadline:
            status = json.loads(self.get(f"/api/searches/{self.demo_search}/", key))["status"]
            if status not in ("queued", "running"):
                return status
            time.sleep(0.2)
        raise AssertionError(f"the worker did not end the demo search in {START_S} s:\n{self.tail()}")

    def stop(self) -> None:
        """As Ctrl-C stops it: honcho ends its processes. Were it stuck, they are killed by their
        groups (honcho starts each in a session of its own), then honcho."""
        self.honcho.send_signal(signal.SIGINT)
        try:
            self.honcho.wait(timeout=30)
        except subprocess.TimeoutExpired:
            for pid in re.findall(r"started with pid (\d+)", self.log.read_text(errors="replace")):
                try:
                    os.killpg(int(pid), signal.SIGKILL)
                except ProcessLookupError:
                    pass
            self.honcho.kill()
            self.honcho.wait(timeout=10)


@pytest.fixture(scope="module")
def memsite(tmp_path_factory) -> Iterator[Memsite]:
    var = tmp_path_factory.mktemp("var")
    port = free_port()
    env = environment(var, port)
    commands = set_up_commands(port, env)
    set_up = subprocess.run(
        [sys.executable, "-c", SET_UP, json.dumps(commands)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert set_up.returncode == 0, set_up.stderr
    demo_search = re.search(r"Demo search (\d+) queued", set_up.stdout)
    assert demo_search, set_up.stdout
    log = var / "honcho.log"
    with log.open("wb") as output:
        honcho = subprocess.Popen(
            [str(VENV_BIN / "honcho"), "start", "-f", "Procfile.dev", "web", "worker"],
            cwd=ROOT,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    served = Memsite(
        url=f"http://127.0.0.1:{port}", env=env, log=log, honcho=honcho, demo_search=int(demo_search.group(1))
    )
    try:
        yield served  # starting: the token commands need only the database
    finally:
        served.stop()


def run(command: str, memsite: Memsite, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    """`command` in bash, the README's address made the server's."""
    command = command.replace(README_ADDRESS, memsite.url.removeprefix("http://"))
    return subprocess.run(
        ["bash", "-c", CURL_FAILS + command],
        cwd=cwd,
        env={**memsite.env, **env},
        capture_output=True,
        text=True,
        timeout=COMMAND_S,
    )


# -- what each command answers ------------------------------------------------------------------

# A check reads a command's answer; `seen` keeps what later commands need of it: the values of
# the README's placeholders, and the node retrieve found first.
Check = Callable[[Step, object, dict], None]


def roots(step: Step, body, seen: dict) -> None:
    assert [root["name"] for root in body] == ["swarmstar", "user", "projects", "references"]
    assert all(root["is_folder"] and root["parent"] is None for root in body)
    seen["<id of references>"] = body[3]["id"]


def resolved(step: Step, body, seen: dict) -> None:
    (asked,) = re.findall(r"\?path=([^\"'\s]+)", step.command)
    assert body["path"] == asked and body["type"] == "document"


def created(step: Step, body, seen: dict) -> None:
    sent = step.sent()
    assert {field: body[field] for field in ("parent", "type", "name", "description")} == {
        field: sent[field] for field in ("parent", "type", "name", "description")
    }
    assert (body["path"], body["content_size"], body["version"]) == (
        f"/references/{sent['name']}",
        len(sent["content"].encode()),
        1,
    )
    seen["<id>"] = body["id"]


def retrieved(step: Step, body, seen: dict) -> None:
    results = body["results"]
    assert 1 <= len(results) <= step.sent()["k"]
    assert results[0]["path"] == "/references/http-status-codes.md"  # the demo's note on status codes
    seen["status codes"] = results[0]["node"]


def answered(step: Step, body, seen: dict) -> None:
    assert body["status"] == "done", body
    (answer,) = body["result"]["answers"]
    assert answer["question"] == step.sent()["questions"][0]
    # The offline provider answers with the passage it read, from the note on status codes.
    assert answer["answer"] and seen["status codes"] in {citation["node"] for citation in answer["citations"]}


def replaced(step: Step, body, seen: dict) -> None:
    assert (body["id"], body["version"], body["content_size"]) == (seen["<id>"], 2, len(NOTES.encode()))


CHECKS: dict[tuple[str, str], Check] = {
    ("GET", "/api/nodes/roots/"): roots,
    ("GET", "/api/nodes/resolve/"): resolved,
    ("POST", "/api/nodes/"): created,
    ("POST", "/api/retrieve/"): retrieved,
    ("POST", "/api/searches/"): answered,
    ("PUT", "/api/nodes/<id>/content/"): replaced,
}


def placed(command: str, seen: dict) -> str:
    """The command with the ids the README leaves for the reader to fill from earlier answers."""
    for placeholder in re.findall(r"<[^<>]+>", command):
        assert placeholder in seen, f"the README's {placeholder} names nothing an earlier command answered"
        command = command.replace(placeholder, seen[placeholder])
    return command


# -- the tests ----------------------------------------------------------------------------------


def test_the_token_command_with_each_of_its_options(memsite):
    done = run(token_command(with_options=True), memsite, ROOT)
    assert done.returncode == 0, done.stderr
    assert re.fullmatch(r"ms_[\w-]{20,}\n", done.stdout), done.stdout
    assert "for demo, reader in 'default'" in done.stderr


def test_the_walkthrough_answers_as_the_readme_says(memsite, tmp_path):
    made = run(token_command(with_options=False), memsite, ROOT)
    assert made.returncode == 0, made.stderr
    key = made.stdout.strip()
    assert "for demo, editor in 'default'" in made.stderr
    (tmp_path / "notes.md").write_text(NOTES)
    memsite.wait_until_ready()
    assert memsite.demo_search_ended(key) == "done"

    steps, seen = walkthrough(), {}
    assert {(step.method, step.path) for step in steps} == set(CHECKS), "the README's calls are not those checked"
    for step in steps:
        filled = Step(step.says, placed(step.command, seen))
        done = run(filled.command, memsite, tmp_path, TOKEN=key)
        assert done.returncode == 0, f"{step.says}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
        CHECKS[step.method, step.path](filled, json.loads(done.stdout), seen)

    assert memsite.get(f"/api/nodes/{seen['<id>']}/content/", key).decode() == NOTES  # the file uploaded
