"""nginx in front of gunicorn (deploy/nginx/default.conf.template): it reads every request whole
before passing it on, so a body announced and never sent does not reach gunicorn at all, and a
body larger than its URL's view takes is refused at the door. The live tests run the real nginx,
when this machine has one, against a stand-in for gunicorn on a unix socket."""

import os
import pwd
import re
import shutil
import socket
import socketserver
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from memsite.limits import body_limit_at
from tests.security.routes import site_patterns

ROOT = Path(__file__).resolve().parent.parent.parent
NGINX_TEMPLATE = ROOT / "deploy" / "nginx" / "default.conf.template"
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
needs_nginx = pytest.mark.skipif(
    not os.access(NGINX, os.X_OK), reason="nginx is not installed (apt-get install nginx-light)"
)
TIMEOUT_S = 10


def nginx_text() -> str:
    """The template, comments left out."""
    return re.sub(r"#[^\n]*", "", NGINX_TEMPLATE.read_text())


LOCATION = re.compile(r"location\s+([^{\n]+?)\s*\{(.*?)\n\s*\}", re.DOTALL)  # to the line of its `}`


def directives(text: str) -> dict[str, str]:
    """The `name value;` lines of `text`."""
    return {match[1]: match[2].strip() for match in re.finditer(r"^\s*([a-z_]+)\s+([^;\n]*);", text, re.MULTILINE)}


def nginx_directives() -> dict[str, str]:
    """The server's own directives, outside its `location` blocks."""
    return directives(LOCATION.sub("", nginx_text()))


@dataclass(frozen=True)
class Location:
    match: str  # as written: `/`, `= /mcp`, `~ ^/api/...$`
    directives: dict[str, str]


def nginx_locations() -> list[Location]:
    return [Location(block[1], directives(block[2])) for block in LOCATION.finditer(nginx_text())]


def location_for(path: str) -> Location:
    """The block nginx serves `path` from: the exact match, else the first regular expression
    that matches, else the longest prefix."""
    locations = nginx_locations()
    for location in locations:
        if location.match == f"= {path}":
            return location
    for location in locations:
        if location.match.startswith("~ ") and re.search(location.match[2:], path):
            return location
    prefixes = [location for location in locations if not location.match.startswith(("=", "~"))]
    return max((location for location in prefixes if path.startswith(location.match)), key=lambda at: len(at.match))


def nginx_bytes(size: str) -> int:
    number, unit = re.fullmatch(r"(\d+)([kmg]?)", size.lower()).groups()
    return int(number) * {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}[unit]


def nginx_body_limit(path: str) -> int:
    """The largest body nginx lets through to `path`."""
    size = location_for(path).directives.get("client_max_body_size", nginx_directives()["client_max_body_size"])
    return nginx_bytes(size)


def sample_path(route: str) -> str:
    """A path of the URL pattern `route`, with a number or a node id for each of its parts."""
    return "/" + re.sub(r"<(?!int:)[^>]+>", "N0DE", re.sub(r"<int:[^>]+>", "7", route))


def test_the_template_buffers_whole_requests_with_short_timeouts():
    directives = nginx_directives()
    assert directives["proxy_request_buffering"] == "on"
    for timeout in ("client_body_timeout", "client_header_timeout"):
        assert re.fullmatch(r"\d+s", directives[timeout]) and int(directives[timeout][:-1]) <= 15, timeout
    assert directives["listen"] == "${MEMSITE_PROXY_PORT}"
    # Everything to gunicorn, but /mcp to the MCP server (manage.py mcp_serve).
    upstreams = {location.match: location.directives["proxy_pass"] for location in nginx_locations()}
    assert upstreams["/"] == "http://${MEMSITE_UPSTREAM}"
    assert {match: to for match, to in upstreams.items() if to != "http://${MEMSITE_UPSTREAM}"} == {
        "= /mcp": "http://${MEMSITE_MCP_UPSTREAM}"
    }
    text = NGINX_TEMPLATE.read_text()
    for header in ("X-Forwarded-For $remote_addr", "X-Forwarded-Proto $scheme", "Host $http_host"):
        assert f"proxy_set_header {header};" in text
    # Rendering the three variables renders it all; nginx's own variables stay as they are.
    assert set(re.findall(r"\$\{(\w+)\}", text)) == {"MEMSITE_UPSTREAM", "MEMSITE_MCP_UPSTREAM", "MEMSITE_PROXY_PORT"}
    # One server block, which a benchmark can wrap in an http{} of its own.
    body = re.sub(r"#[^\n]*", "", text).strip()
    assert body.startswith("server {") and body.endswith("}") and body.count("server {") == 1


def test_each_url_admits_the_largest_body_its_view_takes_and_little_more():
    """The sizes of the template and the limits of the URLconf cannot drift apart: a form's
    1 MiB, and at the few URLs whose views take more, their limit rounded up to a MiB."""
    routes = [pattern.route for pattern in site_patterns() if "(?" not in pattern.route and "^" not in pattern.route]
    assert len(routes) > 50
    for path in map(sample_path, routes):
        limit = body_limit_at(path)
        assert limit <= nginx_body_limit(path) <= limit + 1024**2, path
    assert nginx_body_limit("/login/") == 1024**2
    assert nginx_body_limit("/memory/N0DE/content/") > 30 * 1024**2  # the editor's save
    assert nginx_body_limit("/user/preferences/preview/") == 256 * 1024


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


class Upstream(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    """A stand-in for gunicorn: records each request it gets and answers 200."""

    daemon_threads = True

    def __init__(self, path: str) -> None:
        self.received: list[Received] = []
        super().__init__(path, UpstreamHandler)


class UpstreamHandler(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        path = self.rfile.readline().split()[1].decode()
        headers = {}
        while line := self.rfile.readline().decode().strip():
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        # Recorded as soon as its head arrives: a request passed on before its body is seen.
        received = Received(path, headers, b"")
        self.server.received.append(received)
        received.body = self.rfile.read(int(headers.get("content-length", "0")))
        self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")


def nginx_config(folder: Path, sockets: Path) -> Path:
    """The template rendered for a unix socket, in an http{} with this test's own paths."""
    rendered = NGINX_TEMPLATE.read_text()
    rendered = rendered.replace("${MEMSITE_UPSTREAM}", f"unix:{sockets}/upstream.sock:")
    rendered = rendered.replace("${MEMSITE_MCP_UPSTREAM}", f"unix:{sockets}/mcp.sock:")
    rendered = rendered.replace("${MEMSITE_PROXY_PORT}", f"unix:{sockets}/nginx.sock")
    (folder / "memsite.conf").write_text(rendered)
    temp_paths = "\n".join(
        f"    {kind}_temp_path {folder}/{kind};" for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    user = f"user {pwd.getpwuid(os.geteuid()).pw_name};" if os.geteuid() == 0 else ""  # workers reach this test's files
    config = folder / "nginx.conf"
    config.write_text(
        f"{user}\nworker_processes 1;\npid {folder}/nginx.pid;\nerror_log stderr;\n"
        f"events {{ worker_connections 64; }}\nhttp {{\n    access_log off;\n{temp_paths}\n"
        f"    include {folder}/memsite.conf;\n}}\n"
    )
    return config


@pytest.fixture
def sockets() -> Iterator[Path]:
    """A short folder of the test's own: a unix socket's path has at most 107 bytes."""
    folder = Path(tempfile.mkdtemp(prefix="nginx-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def nginx_command(config: Path, *args: str) -> list[str]:
    return [NGINX, "-p", str(config.parent), "-c", str(config), "-e", "stderr", *args]


@needs_nginx
def test_nginx_accepts_the_rendered_template(tmp_path, sockets):
    result = subprocess.run(
        nginx_command(nginx_config(tmp_path, sockets), "-t"), capture_output=True, text=True, timeout=30
    )
    assert result.returncode == 0, result.stderr


@contextmanager
def upstream_at(path: Path) -> Iterator[Upstream]:
    """An Upstream serving on the unix socket `path` for the block."""
    upstream = Upstream(str(path))
    thread = threading.Thread(target=upstream.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield upstream
    finally:
        upstream.shutdown()
        upstream.server_close()


@pytest.fixture
def proxy(tmp_path, sockets) -> Iterator[tuple[Upstream, Path]]:
    """nginx on a unix socket in front of an upstream that records what reaches it."""
    config = nginx_config(tmp_path, sockets)
    with upstream_at(sockets / "upstream.sock") as upstream:
        with (tmp_path / "nginx.log").open("wb") as log:
            process = subprocess.Popen(nginx_command(config, "-g", "daemon off;"), stdout=log, stderr=subprocess.STDOUT)
        try:
            wait_until_listening(sockets / "nginx.sock", process, tmp_path / "nginx.log")
            yield upstream, sockets / "nginx.sock"
        finally:
            process.terminate()
            process.wait(timeout=TIMEOUT_S)


def wait_until_listening(path: Path, process: subprocess.Popen, log: Path) -> None:
    """Until a connection to `path` is taken: nginx makes the socket's file when it binds, a
    moment before it listens, and a connection in between is refused."""
    deadline = time.monotonic() + TIMEOUT_S
    while True:
        assert process.poll() is None, log.read_text()
        try:
            connect(path).close()
            return
        except (FileNotFoundError, ConnectionRefusedError):
            assert time.monotonic() < deadline, f"nginx did not start: {log.read_text()}"
            time.sleep(0.02)


def connect(path: Path) -> socket.socket:
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.settimeout(TIMEOUT_S)
    client.connect(str(path))
    return client


def request_head(path: str, length: int, *extra: str) -> bytes:
    lines = [f"POST {path} HTTP/1.1", "Host: memsite.test", f"Content-Length: {length}", "Connection: close", *extra]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def status_line(client: socket.socket) -> bytes:
    """The response's first line (after a 413 nginx lingers, reading what the client still sends)."""
    received = b""
    while b"\r\n" not in received and (chunk := client.recv(65536)):
        received += chunk
    client.close()
    return received.partition(b"\r\n")[0]


@needs_nginx
def test_a_body_announced_and_not_sent_never_reaches_gunicorn(proxy):
    upstream, address = proxy
    slow = connect(address)
    slow.sendall(request_head("/login/", 1000) + b"x" * 10)  # 990 bytes still owed

    quick = connect(address)
    quick.sendall(request_head("/healthz", 5, "X-Forwarded-For: 203.0.113.9", "X-Forwarded-Proto: https") + b"hello")
    assert status_line(quick) == b"HTTP/1.1 200 OK"
    # The complete request went through while the slow one is still with nginx, whole or not at all.
    assert [(item.path, item.body) for item in upstream.received] == [("/healthz", b"hello")]
    headers = upstream.received[0].headers
    assert headers["x-forwarded-for"] != "203.0.113.9"  # the client's own claims are replaced
    assert headers["x-forwarded-proto"] == "http" and headers["host"] == "memsite.test"

    slow.sendall(b"x" * 990)
    assert status_line(slow) == b"HTTP/1.1 200 OK"
    assert [(item.path, len(item.body)) for item in upstream.received] == [("/healthz", 5), ("/login/", 1000)]


@needs_nginx
@pytest.mark.parametrize("path", ["/login/", "/api/nodes/", "/memory/N0DE/content/", "/user/preferences/preview/"])
def test_a_body_larger_than_its_view_takes_is_refused_by_nginx(proxy, path):
    upstream, address = proxy
    client = connect(address)
    client.sendall(request_head(path, body_limit_at(path) + 1024**2))
    assert status_line(client) == b"HTTP/1.1 413 Request Entity Too Large"
    assert upstream.received == []


@needs_nginx
def test_the_editors_save_passes_a_body_larger_than_a_forms(proxy):
    upstream, address = proxy
    body = b"x" * (2 * 1024**2)
    client = connect(address)
    client.sendall(request_head("/memory/N0DE/content/", len(body)) + body)
    assert status_line(client) == b"HTTP/1.1 200 OK"
    assert [(item.path, len(item.body)) for item in upstream.received] == [("/memory/N0DE/content/", len(body))]


@needs_nginx
def test_nginx_sends_mcp_to_the_mcp_server_and_the_rest_to_gunicorn(proxy, sockets):
    web, address = proxy
    with upstream_at(sockets / "mcp.sock") as mcp:
        for path in ("/mcp", "/mcp/", "/mcpx", "/api/nodes/"):
            client = connect(address)
            client.sendall(request_head(path, 2) + b"{}")
            assert status_line(client) == b"HTTP/1.1 200 OK"
    assert [(item.path, item.body) for item in mcp.received] == [("/mcp", b"{}")]
    assert [item.path for item in web.received] == ["/mcp/", "/mcpx", "/api/nodes/"]
