"""fetch_url against a scripted web server on 127.0.0.1. Host names such as docs.example.org
resolve through a fake getaddrinfo; nothing leaves loopback."""

import ipaddress
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.core.exceptions import ImproperlyConfigured

from memsite import fetch
from memsite.errors import ServiceError
from memsite.fetch import (
    FetchedPage,
    FetchFailed,
    FetchRefused,
    address_is_public,
    fetch_url,
    html_to_text,
)

LOOPBACK = ("127.0.0.1", "::1")


@pytest.fixture(autouse=True)
def no_internet(monkeypatch):
    """Any connection beyond loopback fails the test at once."""
    original = socket.socket.connect

    def loopback_only(sock, address):
        if sock.family in (socket.AF_INET, socket.AF_INET6) and address[0] not in LOOPBACK:
            raise AssertionError(f"A test tried to reach {address!r}.")
        return original(sock, address)

    monkeypatch.setattr(socket.socket, "connect", loopback_only)


@pytest.fixture(autouse=True)
def fetch_settings(settings):
    settings.MEMSITE_FETCH_ALLOWED_HOSTS = []
    settings.MEMSITE_FETCH_MAX_BYTES = 1_000_000
    settings.MEMSITE_FETCH_MAX_REDIRECTS = 3
    settings.MEMSITE_FETCH_TIMEOUT_S = 5
    return settings


@dataclass
class FakeDNS:
    """Names to addresses, each lookup answered from the next list of a name's script (the last
    one repeats); unknown names do not resolve."""

    answers: dict[str, list[list[str]]] = field(default_factory=dict)
    lookups: list[str] = field(default_factory=list)

    def add(self, name: str, *addresses: str) -> None:
        self.answers.setdefault(name, []).append(list(addresses))

    def getaddrinfo(self, host, port, family=0, type=0, proto=0, flags=0):
        self.lookups.append(host)
        try:  # an address literal is its own answer, as the system resolver gives it
            self.answers.setdefault(host, [[str(ipaddress.ip_address(host))]])
        except ValueError:
            pass
        if host not in self.answers:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        script = self.answers[host]
        addresses = script.pop(0) if len(script) > 1 else script[0]
        infos = []
        for address in addresses:
            if ":" in address:
                infos.append((socket.AF_INET6, socket.SOCK_STREAM, 6, "", (address, port, 0, 0)))
            else:
                infos.append((socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port)))
        return infos


@pytest.fixture
def dns(monkeypatch) -> FakeDNS:
    fake = FakeDNS()
    monkeypatch.setattr(fetch.socket, "getaddrinfo", fake.getaddrinfo)
    return fake


@pytest.fixture
def loopback_is_public(monkeypatch):
    """The test server's 127.0.0.1 counts as public; every other address is judged as usual."""
    judge = fetch.address_is_public
    monkeypatch.setattr(fetch, "address_is_public", lambda address: str(address) == "127.0.0.1" or judge(address))


Respond = Callable[[BaseHTTPRequestHandler], None]


def page(
    body: bytes | str = b"",
    *,
    status: int = 200,
    content_type: str | None = "text/plain; charset=utf-8",
    headers: dict | None = None,
) -> Respond:
    data = body.encode() if isinstance(body, str) else body

    def respond(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(status)
        if content_type:
            handler.send_header("Content-Type", content_type)
        for name, value in (headers or {}).items():
            handler.send_header(name, value)
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    return respond


def redirect(location: str, status: int = 302) -> Respond:
    return page(status=status, content_type=None, headers={"Location": location})


@dataclass
class Site:
    """A web server on 127.0.0.1 answering each path with its scripted response."""

    server: ThreadingHTTPServer
    routes: dict[str, Respond] = field(default_factory=dict)
    requests: list[dict] = field(default_factory=list)
    stopping: threading.Event = field(default_factory=threading.Event)

    @property
    def port(self) -> int:
        return self.server.server_address[1]

    def url(self, path: str = "/", host: str = "docs.example.org") -> str:
        return f"http://{host}:{self.port}{path}"


@pytest.fixture
def site(dns, loopback_is_public, fetch_settings) -> Iterator[Site]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            served.requests.append({"path": self.path, "host": self.headers["Host"], "peer": self.client_address[0]})
            respond = served.routes.get(self.path, page("not here", status=404))
            try:
                respond(self)
            except OSError:
                pass  # the client gave up first

        def log_message(self, format, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    served = Site(server=server)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    dns.add("docs.example.org", "127.0.0.1")
    fetch_settings.MEMSITE_FETCH_ALLOWED_HOSTS = [f"docs.example.org:{served.port}"]
    yield served
    served.stopping.set()
    server.shutdown()
    server.server_close()


# Fetching from an allowed host


def test_fetches_text_from_an_allowed_host(site):
    site.routes["/notes.txt"] = page("Plain notes.\n", content_type="text/plain; charset=utf-8")
    fetched = fetch_url(site.url("/notes.txt"))
    assert fetched == FetchedPage(
        url=site.url("/notes.txt"),
        status=200,
        content_type="text/plain",
        charset="utf-8",
        text="Plain notes.\n",
        truncated=False,
        redirects=(),
    )
    assert site.requests == [{"path": "/notes.txt", "host": f"docs.example.org:{site.port}", "peer": "127.0.0.1"}]


def test_html_is_returned_as_its_text(site):
    site.routes["/page"] = page(
        "<!doctype html><html><head><title>Docs</title><style>body { color: red }</style>"
        "<script>var secret = 1;</script></head><body><h1>Hello &amp; welcome</h1>"
        "<p>First   paragraph\n  spread over   lines.</p><noscript>enable js</noscript>"
        "<ul><li>one</li><li>two</li></ul><table><tr><td>a</td><td>b</td></tr></table></body></html>",
        content_type="text/html; charset=utf-8",
    )
    fetched = fetch_url(site.url("/page"))
    assert fetched.content_type == "text/html"
    assert fetched.text == "Docs\nHello & welcome\nFirst paragraph spread over lines.\none\ntwo\na b"


def test_json_is_returned_as_is(site):
    site.routes["/api"] = page('{"answer": 42, "name": "caf\u00e9"}', content_type="application/json")
    fetched = fetch_url(site.url("/api"))
    assert fetched.content_type == "application/json"
    assert fetched.charset == "utf-8"
    assert fetched.text == '{"answer": 42, "name": "caf\u00e9"}'


@pytest.mark.parametrize(
    ("content_type", "body", "charset"),
    [
        ("text/plain; charset=iso-8859-1", "caf\u00e9".encode("latin-1"), "iso8859-1"),
        ("text/html", b'<meta charset="windows-1252"><p>caf\xe9</p>', "cp1252"),
        (
            "application/xml",
            b'<?xml version="1.0" encoding="iso-8859-15"?><a>caf\xe9</a>',
            "iso8859-15",
        ),
        ("text/plain", b"\xef\xbb\xbfcaf\xc3\xa9", "utf-8-sig"),
        ("text/plain; charset=base64", "caf\u00e9".encode(), "utf-8"),
    ],
)
def test_the_body_is_decoded_with_its_charset(site, content_type, body, charset):
    site.routes["/doc"] = page(body, content_type=content_type)
    fetched = fetch_url(site.url("/doc"))
    assert fetched.charset == charset
    assert "caf\u00e9" in fetched.text


def test_a_path_with_spaces_and_non_ascii_is_percent_encoded(site):
    site.routes["/a%20b/caf%C3%A9?q=x%20y"] = page("found")
    assert fetch_url(site.url("/a b/caf\u00e9?q=x y")).text == "found"


# The allow-list


def test_nothing_can_be_fetched_with_an_empty_allow_list(dns, fetch_settings):
    fetch_settings.MEMSITE_FETCH_ALLOWED_HOSTS = []
    with pytest.raises(FetchRefused) as refused:
        fetch_url("https://docs.example.org/")
    assert refused.value.message == "host docs.example.org is not on the allow-list"
    assert dns.lookups == []


def test_a_host_not_on_the_allow_list_is_refused_before_it_is_resolved(site, dns):
    dns.add("other.example.org", "127.0.0.1")
    with pytest.raises(FetchRefused) as refused:
        fetch_url(site.url("/", host="other.example.org"))
    assert refused.value.message == "host other.example.org is not on the allow-list"
    assert refused.value.status == 422
    assert dns.lookups == [] and site.requests == []


@pytest.mark.parametrize(
    "host",
    ["api.docs.example.org", "example.org", "notdocs.example.org", "docs.example.org.evil.com"],
)
def test_an_exact_entry_does_not_allow_other_names(site, host):
    with pytest.raises(FetchRefused, match=f"host {host} is not on the allow-list"):
        fetch_url(site.url("/", host=host))


@pytest.mark.parametrize("host", ["example.org", "api.example.org", "a.b.example.org", "API.Example.ORG."])
def test_a_leading_dot_entry_allows_the_domain_and_its_subdomains(site, dns, fetch_settings, host):
    fetch_settings.MEMSITE_FETCH_ALLOWED_HOSTS = [f".example.org:{site.port}"]
    dns.add(host.lower().rstrip("."), "127.0.0.1")
    site.routes["/"] = page("hello")
    assert fetch_url(site.url("/", host=host)).text == "hello"


@pytest.mark.parametrize("host", ["example.com", "badexample.org", "example.org.evil.com"])
def test_a_leading_dot_entry_allows_nothing_else(site, fetch_settings, host):
    fetch_settings.MEMSITE_FETCH_ALLOWED_HOSTS = [f".example.org:{site.port}"]
    with pytest.raises(FetchRefused, match=f"host {host} is not on the allow-list"):
        fetch_url(site.url("/", host=host))


@pytest.mark.parametrize(
    ("url", "scheme"),
    [
        ("ftp://docs.example.org/file", "ftp"),
        ("file:///etc/passwd", "file"),
        ("gopher://docs.example.org/", "gopher"),
        ("javascript:alert(1)", "javascript"),
        ("docs.example.org/page", "(none)"),
    ],
)
def test_only_http_and_https_are_allowed(site, url, scheme):
    with pytest.raises(FetchRefused) as refused:
        fetch_url(url)
    assert refused.value.message == f"scheme {scheme} is not allowed (only http and https)"


@pytest.mark.parametrize(
    "netloc",
    [
        "user:secret@docs.example.org",
        "user@docs.example.org",
        "evil.com\\@docs.example.org",
        ":@docs.example.org",
    ],
)
def test_user_information_in_the_url_is_refused(site, netloc):
    with pytest.raises(FetchRefused, match=r"user information in the URL \(user:password@\) is not allowed"):
        fetch_url(f"http://{netloc}:{site.port}/")
    assert site.requests == []


def test_an_entry_without_a_port_allows_only_80_and_443(site, fetch_settings):
    fetch_settings.MEMSITE_FETCH_ALLOWED_HOSTS = ["docs.example.org"]
    with pytest.raises(FetchRefused) as refused:
        fetch_url(site.url("/"))
    assert refused.value.message == f"port {site.port} is not allowed for host docs.example.org (allowed: 80, 443)"
    assert site.requests == []


def test_an_entry_with_a_port_allows_only_that_port(site):
    site.routes["/"] = page("on the named port")
    assert fetch_url(site.url("/")).text == "on the named port"
    for url in (
        "http://docs.example.org/",
        "https://docs.example.org/",
        "http://docs.example.org:8080/",
    ):
        with pytest.raises(
            FetchRefused,
            match=f"is not allowed for host docs.example.org \\(allowed: {site.port}\\)",
        ):
            fetch_url(url)


@pytest.mark.parametrize("entry", ["docs.example.org:http", "docs.example.org:0", "docs.example.org:70000", "a..b"])
def test_a_malformed_allow_list_entry_is_a_configuration_error(fetch_settings, entry):
    fetch_settings.MEMSITE_FETCH_ALLOWED_HOSTS = [entry]
    with pytest.raises(ImproperlyConfigured, match="MEMSITE_FETCH_ALLOWED_HOSTS"):
        fetch_url("http://docs.example.org/")


# Addresses


@pytest.mark.parametrize(
    ("address", "kind", "embedded"),
    [
        ("10.0.0.1", "private", None),
        ("10.255.255.254", "private", None),
        ("172.16.0.1", "private", None),
        ("172.31.255.1", "private", None),
        ("192.168.1.1", "private", None),
        ("127.0.0.1", "loopback", None),
        ("127.1.2.3", "loopback", None),
        ("169.254.0.1", "link-local", None),
        ("169.254.169.254", "link-local", None),
        ("0.0.0.0", "unspecified", None),
        ("100.64.0.1", "shared (carrier-grade NAT)", None),
        ("100.127.255.254", "shared (carrier-grade NAT)", None),
        ("224.0.0.1", "multicast", None),
        ("240.0.0.1", "private", None),
        ("255.255.255.255", "private", None),
        ("192.0.2.1", "private", None),
        ("::1", "loopback", None),
        ("::", "unspecified", None),
        ("fe80::1", "link-local", None),
        ("fc00::1", "private", None),
        ("fd12:3456::1", "private", None),
        ("fec0::1", "site-local", None),
        ("ff02::1", "multicast", None),
        ("::ffff:127.0.0.1", "loopback", "127.0.0.1"),
        ("::ffff:10.0.0.1", "private", "10.0.0.1"),
        ("::ffff:169.254.169.254", "link-local", "169.254.169.254"),
        ("64:ff9b::a00:1", "private", "10.0.0.1"),
        ("2002:a00:1::1", "private", "10.0.0.1"),
        ("2001:db8::1", "private", None),
    ],
)
def test_a_host_resolving_to_a_non_public_address_is_refused(dns, fetch_settings, address, kind, embedded):
    fetch_settings.MEMSITE_FETCH_ALLOWED_HOSTS = ["docs.example.org"]
    dns.add("docs.example.org", address)
    ip = ipaddress.ip_address(address)
    assert not address_is_public(ip)
    with pytest.raises(FetchRefused) as refused:
        fetch_url("http://docs.example.org/")
    shown = f"{ip} ({embedded})" if embedded else str(ip)  # IPv6 as Python spells it, e.g. ::ffff:7f00:1
    assert refused.value.message == f"docs.example.org resolves to a {kind} address {shown}"
    assert ipaddress.ip_address(refused.value.data["address"]) == ip


@pytest.mark.parametrize("address", ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.8.8", "2002:808:808::1"])
def test_public_addresses_are_public(address):
    assert address_is_public(ipaddress.ip_address(address))


def test_a_host_resolving_to_public_and_private_addresses_is_refused(dns, fetch_settings):
    fetch_settings.MEMSITE_FETCH_ALLOWED_HOSTS = ["docs.example.org"]
    dns.add("docs.example.org", "8.8.8.8", "2606:4700:4700::1111", "192.168.0.10")
    with pytest.raises(FetchRefused, match="^docs.example.org resolves to a private address 192.168.0.10$"):
        fetch_url("http://docs.example.org/")


def test_a_host_that_does_not_resolve_fails(dns, fetch_settings):
    fetch_settings.MEMSITE_FETCH_ALLOWED_HOSTS = ["docs.example.org"]
    with pytest.raises(FetchFailed, match="could not resolve docs.example.org") as failed:
        fetch_url("http://docs.example.org/")
    assert failed.value.status == 502


def test_the_connection_goes_to_the_vetted_address_not_a_second_lookup(site, dns):
    dns.answers["docs.example.org"] = [["127.0.0.1"], ["10.0.0.1"]]
    site.routes["/"] = page("from the vetted address")
    fetched = fetch_url(site.url("/"))
    assert fetched.text == "from the vetted address"
    assert dns.lookups == ["docs.example.org"]
    assert site.requests[0]["host"] == f"docs.example.org:{site.port}"


def test_a_rebinding_name_is_connected_to_at_the_address_that_was_checked(dns, fetch_settings, monkeypatch):
    fetch_settings.MEMSITE_FETCH_ALLOWED_HOSTS = ["docs.example.org"]
    dns.answers["docs.example.org"] = [["93.184.216.34"], ["127.0.0.1"]]
    connected = []

    def record(sock, address):
        connected.append(address[:2])
        raise ConnectionRefusedError(111, "Connection refused")

    monkeypatch.setattr(socket.socket, "connect", record)
    with pytest.raises(FetchFailed, match="Connection refused"):
        fetch_url("http://docs.example.org/")
    assert connected == [("93.184.216.34", 80)]
    assert dns.lookups == ["docs.example.org"]


def test_https_names_the_host_for_sni_and_the_certificate_while_connecting_to_the_vetted_address(
    site, fetch_settings, monkeypatch
):
    wrapped = []

    class RecordingContext:
        def wrap_socket(self, sock, server_hostname):
            wrapped.append((sock.getpeername()[0], server_hostname))
            return sock  # the test server speaks plain HTTP

    monkeypatch.setattr(fetch, "_tls_context", RecordingContext)
    site.routes["/secure"] = page("over tls")
    fetched = fetch_url(f"https://docs.example.org:{site.port}/secure")
    assert fetched.text == "over tls"
    assert wrapped == [("127.0.0.1", "docs.example.org")]
    assert site.requests[0]["host"] == f"docs.example.org:{site.port}"


def test_tls_verifies_certificates_and_host_names():
    context = fetch._tls_context()
    assert context.verify_mode.name == "CERT_REQUIRED"
    assert context.check_hostname is True


# Redirects


def test_redirects_are_followed_and_reported(site):
    site.routes["/old"] = redirect("/middle", status=301)
    site.routes["/middle"] = redirect(site.url("/new"), status=308)
    site.routes["/new"] = page("moved here")
    fetched = fetch_url(site.url("/old"))
    assert fetched.text == "moved here"
    assert fetched.url == site.url("/new")
    assert fetched.redirects == (site.url("/old"), site.url("/middle"))
    assert [request["path"] for request in site.requests] == ["/old", "/middle", "/new"]


def test_a_redirect_to_a_host_not_on_the_allow_list_is_refused(site, dns):
    dns.add("evil.example.com", "127.0.0.1")
    site.routes["/go"] = redirect(site.url("/steal", host="evil.example.com"))
    with pytest.raises(FetchRefused) as refused:
        fetch_url(site.url("/go"))
    assert refused.value.message == (
        f"host evil.example.com is not on the allow-list "
        f"(redirected to {site.url('/steal', host='evil.example.com')} from {site.url('/go')})"
    )
    assert refused.value.data["redirects"] == [site.url("/go")]
    assert [request["path"] for request in site.requests] == ["/go"]


def test_a_redirect_to_an_allowed_host_resolving_to_a_private_address_is_refused(site, dns, fetch_settings):
    fetch_settings.MEMSITE_FETCH_ALLOWED_HOSTS += ["metadata.example.org"]
    dns.add("metadata.example.org", "169.254.169.254")
    site.routes["/go"] = redirect("http://metadata.example.org/latest/meta-data/")
    with pytest.raises(
        FetchRefused,
        match=r"^metadata.example.org resolves to a link-local address 169.254.169.254 \(redirected to",
    ):
        fetch_url(site.url("/go"))


@pytest.mark.parametrize("location", ["ftp://docs.example.org/file", "file:///etc/passwd"])
def test_a_redirect_to_another_scheme_is_refused(site, location):
    site.routes["/go"] = redirect(location)
    with pytest.raises(FetchRefused, match="is not allowed \\(only http and https\\) \\(redirected to"):
        fetch_url(site.url("/go"))


def test_a_redirect_loop_is_refused(site):
    site.routes["/a"] = redirect("/b")
    site.routes["/b"] = redirect("/a")
    with pytest.raises(FetchRefused, match="^redirect loop: .*/b redirects to .*/a, which was already visited$"):
        fetch_url(site.url("/a"))
    assert [request["path"] for request in site.requests] == ["/a", "/b"]


def test_more_redirects_than_the_limit_are_refused(site, fetch_settings):
    for hop in range(1, 6):
        site.routes[f"/{hop}"] = redirect(f"/{hop + 1}")
    site.routes["/6"] = page("the end")
    fetch_settings.MEMSITE_FETCH_MAX_REDIRECTS = 3
    with pytest.raises(FetchRefused, match=r"^too many redirects \(more than 3\)$"):
        fetch_url(site.url("/1"))
    assert [request["path"] for request in site.requests] == ["/1", "/2", "/3", "/4"]
    assert fetch_url(site.url("/3")).redirects == (site.url("/3"), site.url("/4"), site.url("/5"))


def test_a_redirect_without_a_location_fails(site):
    site.routes["/go"] = page(status=302, content_type=None)
    with pytest.raises(FetchFailed, match="answered HTTP 302 without a Location"):
        fetch_url(site.url("/go"))


# Other spellings of private addresses


@pytest.fixture
def numeric_resolver(monkeypatch) -> list[str]:
    """The system's own parser of address literals (inet_aton's decimal, octal, hex and short
    forms), and no DNS at all: a name that is not an address does not resolve."""
    real = socket.getaddrinfo
    lookups: list[str] = []

    def resolve(host, port, family=0, type=0, proto=0, flags=0):
        lookups.append(host)
        return real(host, port, family, type, proto, flags | socket.AI_NUMERICHOST)

    monkeypatch.setattr(fetch.socket, "getaddrinfo", resolve)
    return lookups


LOOPBACK_SPELLINGS = ["2130706433", "017700000001", "0x7f000001", "0x7f.0.0.1", "0177.0.0.1", "127.1", "0"]


@pytest.mark.parametrize("host", LOOPBACK_SPELLINGS)
def test_an_address_spelt_otherwise_is_not_an_allowed_host(numeric_resolver, fetch_settings, host):
    fetch_settings.MEMSITE_FETCH_ALLOWED_HOSTS = ["docs.example.org", "127.0.0.1"]
    with pytest.raises(FetchRefused, match=f"^host {host} is not on the allow-list$"):
        fetch_url(f"http://{host}/")
    assert numeric_resolver == []


@pytest.mark.parametrize("host", LOOPBACK_SPELLINGS)
def test_an_allowed_host_spelt_as_a_number_is_judged_by_the_address_it_means(numeric_resolver, fetch_settings, host):
    fetch_settings.MEMSITE_FETCH_ALLOWED_HOSTS = [host]
    with pytest.raises(
        FetchRefused, match=r"^\S+ resolves to a (loopback|unspecified) address (127\.0\.0\.1|0\.0\.0\.0)$"
    ):
        fetch_url(f"http://{host}/")
    assert numeric_resolver == [host]


@pytest.mark.parametrize(
    "host",
    ["127.0.0.1", "10.0.0.5", "169.254.169.254", "[::1]", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "[fe80::1]"],
)
def test_an_allowed_address_literal_that_is_not_public_is_refused(numeric_resolver, fetch_settings, host):
    fetch_settings.MEMSITE_FETCH_ALLOWED_HOSTS = [host]
    with pytest.raises(FetchRefused, match=r"resolves to a (loopback|private|link-local) address"):
        fetch_url(f"http://{host}/")


@pytest.mark.parametrize(
    "address",
    [
        "::127.0.0.1",  # IPv4-compatible, deprecated
        "::ffff:0:7f00:1",  # IPv4-translated (SIIT)
        "64:ff9b:1::a00:1",  # local-use NAT64
        "2002:7f00:1::1",  # 6to4 of loopback
        "2001:0:4136:e378:8000:63bf:3fff:fdd2",  # Teredo
        "fe80::1%eth0",  # link-local with a zone
        "198.18.0.1",  # benchmarking
        "192.0.0.170",  # NAT64 discovery
        "100::1",  # discard-only
    ],
)
def test_other_ipv6_and_special_purpose_addresses_are_refused(dns, fetch_settings, address):
    fetch_settings.MEMSITE_FETCH_ALLOWED_HOSTS = ["docs.example.org"]
    dns.add("docs.example.org", address)
    assert not address_is_public(ipaddress.ip_address(address))
    with pytest.raises(FetchRefused, match="^docs.example.org resolves to a .* address"):
        fetch_url("http://docs.example.org/")


@pytest.mark.parametrize("private", ["127.0.0.1", "10.1.2.3", "169.254.169.254", "::1", "::ffff:10.1.2.3", "fd00::1"])
def test_a_name_resolving_to_a_private_address_is_refused_before_any_connection(
    dns, fetch_settings, monkeypatch, private
):
    fetch_settings.MEMSITE_FETCH_ALLOWED_HOSTS = [".example.org"]
    dns.add("intranet.example.org", private)
    monkeypatch.setattr(socket.socket, "connect", lambda sock, address: pytest.fail(f"connected to {address}"))
    with pytest.raises(FetchRefused, match="^intranet.example.org resolves to a"):
        fetch_url("https://intranet.example.org/admin")


@pytest.mark.parametrize(
    "location",
    [
        "http://127.0.0.2/",
        "http://2130706434/",
        "http://0x7f.2/",
        "http://[::1]/",
        "http://[::ffff:127.0.0.2]/",
        "//127.0.0.2/",
        "http://docs.example.org@127.0.0.2/",
        "http://127.0.0.2\t/",
        "http://10.0.0.5/latest/meta-data/",
    ],
)
def test_a_redirect_from_an_allowed_host_to_a_private_address_is_refused(site, fetch_settings, location):
    # Even with the private address itself on the list, as an operator might put it by mistake.
    # (127.0.0.1 is the test server, which `site` counts as public; 127.0.0.2 is loopback too.)
    fetch_settings.MEMSITE_FETCH_ALLOWED_HOSTS += ["10.0.0.5", "127.0.0.2", "[::1]"]
    site.routes["/go"] = redirect(location)
    with pytest.raises(FetchRefused, match=r"\(redirected to .* from "):
        fetch_url(site.url("/go"))
    assert [request["path"] for request in site.requests] == ["/go"]


def test_a_redirect_to_an_allowed_name_that_rebinds_to_a_private_address_is_refused(site, dns, fetch_settings):
    fetch_settings.MEMSITE_FETCH_ALLOWED_HOSTS += ["cdn.example.org"]
    dns.answers["cdn.example.org"] = [["::ffff:169.254.169.254"]]
    site.routes["/go"] = redirect("http://cdn.example.org/meta")
    with pytest.raises(FetchRefused, match=r"^cdn.example.org resolves to a link-local address"):
        fetch_url(site.url("/go"))


# Responses


def test_a_body_over_the_cap_is_truncated_at_the_cap(site, fetch_settings):
    fetch_settings.MEMSITE_FETCH_MAX_BYTES = 1_000
    site.routes["/big"] = page("x" * 5_000)
    site.routes["/exact"] = page("y" * 1_000)
    big = fetch_url(site.url("/big"))
    assert big.truncated is True
    assert big.text == "x" * 1_000
    exact = fetch_url(site.url("/exact"))
    assert exact.truncated is False
    assert exact.text == "y" * 1_000


def test_a_multibyte_character_cut_by_the_cap_is_dropped(site, fetch_settings):
    fetch_settings.MEMSITE_FETCH_MAX_BYTES = 5
    site.routes["/accents"] = page("\u00e9\u00e9\u00e9\u00e9")  # 2 bytes each
    fetched = fetch_url(site.url("/accents"))
    assert fetched.truncated is True
    assert fetched.text == "\u00e9\u00e9"


def test_a_body_without_a_length_is_capped_too(site, fetch_settings):
    fetch_settings.MEMSITE_FETCH_MAX_BYTES = 100

    def endless(handler):
        handler.send_response(200)
        handler.send_header("Content-Type", "text/plain")
        handler.end_headers()
        for _ in range(1_000):
            handler.wfile.write(b"z" * 1_000)

    site.routes["/endless"] = endless
    fetched = fetch_url(site.url("/endless"))
    assert fetched.truncated is True
    assert fetched.text == "z" * 100


@pytest.mark.parametrize(
    "content_type",
    ["image/png", "application/octet-stream", "application/pdf", "image/svg+xml", "video/mp4"],
)
def test_binary_content_types_are_refused(site, content_type):
    site.routes["/file"] = page(b"\x89PNG\r\n\x1a\n", content_type=content_type)
    with pytest.raises(FetchRefused) as refused:
        fetch_url(site.url("/file"))
    assert refused.value.message.startswith(f"content type {content_type} is not allowed (only text:")


@pytest.mark.parametrize(
    "content_type",
    [
        "text/markdown",
        "text/csv",
        "application/xhtml+xml",
        "application/ld+json",
        "application/rss+xml",
    ],
)
def test_other_text_content_types_are_fetched(site, content_type):
    site.routes["/doc"] = page("<p>text</p>" if "xhtml" in content_type else "text", content_type=content_type)
    assert fetch_url(site.url("/doc")).text == "text"


def test_a_response_without_a_content_type_is_refused(site):
    site.routes["/bare"] = page("what is this", content_type=None)
    with pytest.raises(FetchRefused, match="answered without a content type"):
        fetch_url(site.url("/bare"))


def test_a_compressed_response_is_refused(site):
    site.routes["/gz"] = page(b"\x1f\x8b\x08\x00", headers={"Content-Encoding": "gzip"})
    with pytest.raises(FetchRefused, match="^content encoding gzip is not supported$"):
        fetch_url(site.url("/gz"))


@pytest.mark.parametrize(
    ("status", "reason"),
    [(404, "Not Found"), (500, "Internal Server Error"), (304, "Not Modified")],
)
def test_an_http_error_fails_with_its_status(site, status, reason):
    site.routes["/broken"] = page("oops", status=status)
    with pytest.raises(FetchFailed) as failed:
        fetch_url(site.url("/broken"))
    assert failed.value.message == f"{site.url('/broken')} answered HTTP {status} {reason}"
    assert failed.value.data["status"] == status


def test_a_refused_connection_fails(dns, loopback_is_public, fetch_settings):
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    dns.add("docs.example.org", "127.0.0.1")
    fetch_settings.MEMSITE_FETCH_ALLOWED_HOSTS = [f"docs.example.org:{port}"]
    with pytest.raises(FetchFailed, match="Connection refused"):
        fetch_url(f"http://docs.example.org:{port}/")


def test_a_slow_server_times_out(site, fetch_settings):
    fetch_settings.MEMSITE_FETCH_TIMEOUT_S = 0.3

    def slow(handler):
        site.stopping.wait(5)

    site.routes["/slow"] = slow
    started = time.monotonic()
    with pytest.raises(FetchFailed) as failed:
        fetch_url(site.url("/slow"))
    assert failed.value.message == f"{site.url('/slow')}: timed out after 0.3 s"
    assert time.monotonic() - started < 2


def test_the_timeout_bounds_the_whole_hop_not_each_read(site, fetch_settings):
    fetch_settings.MEMSITE_FETCH_TIMEOUT_S = 0.5

    def trickle(handler):
        handler.send_response(200)
        handler.send_header("Content-Type", "text/plain")
        handler.send_header("Content-Length", "1000")
        handler.end_headers()
        for _ in range(1_000):
            handler.wfile.write(b".")
            handler.wfile.flush()
            if site.stopping.wait(0.05):
                return

    site.routes["/trickle"] = trickle
    started = time.monotonic()
    with pytest.raises(FetchFailed, match="timed out after 0.5 s"):
        fetch_url(site.url("/trickle"))
    assert time.monotonic() - started < 2


# The pieces


def test_errors_carry_their_status():
    assert issubclass(FetchRefused, ServiceError) and FetchRefused.status == 422
    assert issubclass(FetchFailed, ServiceError) and FetchFailed.status == 502


def test_html_to_text_drops_markup_and_collapses_whitespace():
    html = """
        <html><head><title> A  title </title><script type="module">alert("x")</script>
        <style>.a{}</style></head>
        <body><template><p>hidden</p></template><svg><text>drawn</text></svg>
        <div>Line&nbsp;one<br>Line    two</div>
        <p>caf&eacute; &lt;tag&gt;</p></body></html>
    """
    assert html_to_text(html) == "A title\nLine one\nLine two\ncaf\u00e9 <tag>"


def test_html_to_text_survives_broken_markup():
    assert html_to_text("<p>open <b>bold <script>never") == "open bold"
