"""The world the abuse benchmark's attacks run against (seeded by benchmarks/abuse.py), and a
`Target`: where an attack goes, as which user, with the requests of an API client and of a
logged-in browser, each as the TLS proxy passes it on. Needs Django set up."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from urllib.parse import urlencode

from django.conf import settings

from benchmarks.kit.harness import MCP_HEADERS
from benchmarks.kit.httpclients import Answer, announced, fetch
from benchmarks.kit.liveserver import origin, proxy_headers


@dataclass
class World:
    password: str
    tokens: dict[str, str]  # by user name: each attack has a user of its own
    agents: list[int]
    graph: int
    upload_project: str  # empty: the long-name archives are uploaded into it
    export_project: str
    export_upload_bytes: int
    export_bytes: int
    documents: dict[str, str]  # hostile markdown documents' ids, by label
    markdown: dict[str, str]  # their text, by label
    long_names: dict[str, bytes] = field(default_factory=dict)  # the .tar.gz uploads, by header kind


@dataclass
class Target:
    """Where an attack goes (gunicorn, or nginx in front of it), as which user."""

    port: int
    world: World
    user: str
    session: dict[str, str] = field(default_factory=dict)
    mcp_port: int = 0  # the MCP server's, for the attacks that start one
    proxied: bool = False  # nginx: plain HTTP, which it passes on as such

    def origin(self) -> str:
        """The Origin a browser of this target sends, as Django checks it against CSRF."""
        return f"http://127.0.0.1:{self.port}" if self.proxied else origin(self.port)

    def fetch(
        self,
        method: str,
        url: str,
        *,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
        timeout: float = 30.0,
    ) -> Answer:
        """A request as the TLS proxy passes it on."""
        headers = {**proxy_headers(), **(headers or {})}
        return fetch(self.port, method, url, body=body, headers=headers, timeout=timeout)

    def login(self) -> dict[str, str]:
        """The headers of the user's logged-in browser: its session and CSRF cookies and the CSRF header."""
        username = f"abuse-{self.user}"
        csrf = secrets.token_hex(16)  # a CSRF secret of the length and alphabet Django's own has
        cookie = f"{settings.CSRF_COOKIE_NAME}={csrf}"
        form = urlencode({"username": username, "password": self.world.password, "csrfmiddlewaretoken": csrf})
        headers = {"Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded", "Origin": self.origin()}
        answer = self.fetch("POST", "/login/", body=form.encode(), headers=headers)
        prefix = f"{settings.SESSION_COOKIE_NAME}="
        session = next((c.split(";")[0] for c in answer.cookies if c.startswith(prefix)), None)
        if answer.status != 302 or session is None:
            raise SystemExit(f"Logging in as {username} answered {answer.label}: {answer.body!r}")
        return {"Cookie": f"{cookie}; {session}", "X-CSRFToken": csrf, "Origin": self.origin()}

    def api(
        self,
        method: str,
        url: str,
        body: bytes | None = None,
        *,
        content_type: str = "application/json",
        timeout: float = 30.0,
    ) -> Answer:
        headers = {"Authorization": f"Token {self.world.tokens[self.user]}", "Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = content_type
        return self.fetch(method, url, body=body, headers=headers, timeout=timeout)

    def announce(self, method: str, url: str, body: bytes, headers: dict[str, str]) -> Answer:
        """`body` announced whole in the head, and only its first 64 KiB sent: the answer of a
        server that refuses it from its length."""
        headers = {**proxy_headers(), **headers, "Host": f"127.0.0.1:{self.port}", "Content-Length": str(len(body))}
        head = f"{method} {url} HTTP/1.1\r\n" + "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        return announced(self.port, f"{head}\r\n".encode(), body[: 64 * 1024])

    def mcp(self, body: bytes, *, timeout: float = 60.0) -> Answer:
        """A POST of `body` to the MCP server, with the user's token."""
        headers = {**MCP_HEADERS, "Authorization": f"Token {self.world.tokens[self.user]}"}
        headers["Content-Type"] = "application/json"
        return fetch(self.mcp_port, "POST", "/mcp", body=body, headers=headers, timeout=timeout)

    def page(self, method: str, url: str, form: dict[str, str] | None = None, *, timeout: float = 30.0) -> Answer:
        headers, body = dict(self.session), None
        if form is not None:
            headers["Content-Type"] = "application/x-www-form-urlencoded"
            body = urlencode(form).encode()
        return self.fetch(method, url, body=body, headers=headers, timeout=timeout)
