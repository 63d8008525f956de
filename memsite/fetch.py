"""Fetching a web page for an agent, from the hosts on `MEMSITE_FETCH_ALLOWED_HOSTS` only.
Explained in docs/memsite.md."""

import codecs
import dataclasses
import http.client
import ipaddress
import re
import socket
import ssl
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from html.parser import HTMLParser
from typing import Any
from urllib.parse import quote, urljoin, urlsplit

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from memsite.errors import ServiceError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
VettedAddress = tuple[int, tuple[Any, ...]]  # (address family, socket address) as getaddrinfo gives them

SCHEMES = ("http", "https")
DEFAULT_PORTS = frozenset({80, 443})
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
TEXT_APPLICATION_TYPES = frozenset({"application/json", "application/xml", "application/xhtml+xml"})
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
READ_CHUNK = 64 * 1024
USER_AGENT = "memsite-fetch/0.1"
ACCEPT = "text/html, text/plain;q=0.9, application/json;q=0.9, application/xml;q=0.8, text/*;q=0.7"

# Not covered by `is_global` in every Python version: shared address space (carrier-grade NAT).
SHARED_ADDRESS_SPACE = ipaddress.IPv4Network("100.64.0.0/10")
# IPv6 addresses that carry an IPv4 address the packet ends up at: judged by that address.
NAT64_WELL_KNOWN = ipaddress.IPv6Network("64:ff9b::/96")


class FetchRefused(ServiceError):
    """The URL, a redirect or the response breaks a fetch rule; nothing more is requested."""

    status = 422


class FetchFailed(ServiceError):
    """The fetch was allowed but did not succeed: resolution, connection, timeout, HTTP error."""

    status = 502


@dataclass(frozen=True)
class FetchedPage:
    url: str  # the URL that answered, after redirects
    status: int
    content_type: str  # the media type, without parameters
    charset: str  # the encoding the body was decoded with
    text: str  # for HTML, the text of the page (see `html_to_text`)
    truncated: bool  # the body was longer than MEMSITE_FETCH_MAX_BYTES and was cut there
    # Every URL that answered with a redirect, in order, starting with the one asked for.
    redirects: tuple[str, ...]


@dataclass(frozen=True)
class AllowedHost:
    """One allow-list entry: `docs.example.org`, `.example.org` (it and its subdomains), either
    with `:port` to allow that port instead of 80 and 443."""

    name: str
    subdomains: bool
    ports: frozenset[int]

    def matches(self, host: str) -> bool:
        return host == self.name or (self.subdomains and host.endswith("." + self.name))


@dataclass(frozen=True)
class _Hop:
    url: str
    scheme: str
    host: str
    port: int
    target: str  # the request target: path and query, percent-encoded


def fetch_url(url: str) -> FetchedPage:
    allow_list = allowed_hosts()
    max_redirects: int = settings.MEMSITE_FETCH_MAX_REDIRECTS
    redirects: list[str] = []
    current = url
    while True:
        try:
            answer = _fetch_hop(_check_url(current, allow_list))
        except FetchRefused as exc:
            if not redirects:
                raise
            raise FetchRefused(
                f"{exc.message} (redirected to {current} from {redirects[-1]})",
                data={**exc.data, "url": url, "redirects": redirects},
            ) from None
        if isinstance(answer, FetchedPage):
            return dataclasses.replace(answer, redirects=tuple(redirects))
        redirects.append(current)
        following = urljoin(current, answer)
        if following in redirects:
            raise FetchRefused(
                f"redirect loop: {current} redirects to {following}, which was already visited",
                data={"url": url, "redirects": redirects},
            )
        if len(redirects) > max_redirects:
            raise FetchRefused(
                f"too many redirects (more than {max_redirects})",
                data={"url": url, "redirects": redirects},
            )
        current = following


def allowed_hosts() -> list[AllowedHost]:
    return [_parse_allowed_host(entry) for entry in settings.MEMSITE_FETCH_ALLOWED_HOSTS]


def address_is_public(address: IPAddress) -> bool:
    """Whether a connection to `address` reaches the public internet and nothing closer."""
    embedded = _embedded_ipv4(address)
    if embedded is not None:
        return address_is_public(embedded)
    if isinstance(address, ipaddress.IPv6Address) and (address.is_site_local or address.teredo):
        return False
    if address in SHARED_ADDRESS_SPACE:
        return False
    return address.is_global and not (
        address.is_private
        or address.is_loopback
        or address.is_link_local
        or address.is_multicast
        or address.is_reserved
        or address.is_unspecified
    )


def html_to_text(html: str) -> str:
    """The readable text of an HTML document: no tags, scripts or styles; one line per block,
    whitespace collapsed."""
    parser = _TextExtractor()
    parser.feed(html)
    parser.close()
    lines = (" ".join(line.split()) for line in "".join(parser.parts).split("\n"))
    return "\n".join(line for line in lines if line)


def _parse_allowed_host(entry: str) -> AllowedHost:
    name, ports = entry.strip().lower(), DEFAULT_PORTS
    if name.startswith("["):  # an IPv6 address, as [2001:db8::1] or [2001:db8::1]:8080
        name, _, rest = name[1:].partition("]")
        port = rest.removeprefix(":") if rest.startswith(":") else None
    elif name.count(":") == 1:
        name, _, port = name.partition(":")
    else:
        port = None
    if port is not None:
        if not port.isdigit() or not 0 < int(port) < 65536:
            raise ImproperlyConfigured(f"MEMSITE_FETCH_ALLOWED_HOSTS: {entry!r} names an invalid port.")
        ports = frozenset({int(port)})
    subdomains = name.startswith(".")
    try:
        name = _normal_host(name.removeprefix("."))
    except ValueError:
        raise ImproperlyConfigured(f"MEMSITE_FETCH_ALLOWED_HOSTS: {entry!r} is not a host name.") from None
    return AllowedHost(name=name, subdomains=subdomains, ports=ports)


def _normal_host(host: str) -> str:
    """Lower case, ASCII (IDNA) and without a trailing dot, so `Docs.Example.org.` matches."""
    host = host.lower().rstrip(".")
    if not host:
        raise ValueError("empty host")
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        raise ValueError(f"{host} is not a valid host name") from None


def _refused(url: str, message: str, **data: object) -> FetchRefused:
    return FetchRefused(message, data={"url": url, **data})


def _failed(url: str, message: str, **data: object) -> FetchFailed:
    return FetchFailed(message, data={"url": url, **data})


def _check_url(url: str, allow_list: Sequence[AllowedHost]) -> _Hop:
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        raise _refused(url, f"{url} is not a valid URL: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES:
        raise _refused(url, f"scheme {scheme or '(none)'} is not allowed (only http and https)")
    if "@" in parts.netloc:
        raise _refused(url, "user information in the URL (user:password@) is not allowed")
    if not parts.hostname:
        raise _refused(url, f"{url} names no host")
    try:
        host = _normal_host(parts.hostname)
    except ValueError:
        raise _refused(url, f"host {parts.hostname} is not a valid host name") from None
    try:
        port = parts.port if parts.port is not None else (443 if scheme == "https" else 80)
    except ValueError:
        raise _refused(url, f"{url} names an invalid port") from None
    entries = [entry for entry in allow_list if entry.matches(host)]
    if not entries:
        raise _refused(url, f"host {host} is not on the allow-list")
    if not any(port in entry.ports for entry in entries):
        allowed = ", ".join(str(p) for p in sorted(set().union(*(entry.ports for entry in entries))))
        raise _refused(url, f"port {port} is not allowed for host {host} (allowed: {allowed})")
    target = quote(parts.path or "/", safe="/%!$&'()*+,;=:@-._~")
    if parts.query:
        target += "?" + quote(parts.query, safe="/?%!$&'()*+,;=:@-._~")
    return _Hop(url=url, scheme=scheme, host=host, port=port, target=target)


def _vetted_addresses(hop: _Hop) -> list[VettedAddress]:
    """(family, socket address) of every address the host resolves to, all of them public."""
    try:
        infos = socket.getaddrinfo(hop.host, hop.port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise _failed(hop.url, f"could not resolve {hop.host}: {exc}") from None
    vetted: list[VettedAddress] = []
    for family, _, _, _, sockaddr in infos:
        if family not in (socket.AF_INET, socket.AF_INET6):
            continue
        address = ipaddress.ip_address(sockaddr[0])
        if not address_is_public(address):
            kind = _address_kind(address)
            shown = f"{address} ({embedded})" if (embedded := _embedded_ipv4(address)) else address
            raise _refused(hop.url, f"{hop.host} resolves to a {kind} address {shown}", address=str(address))
        vetted.append((family, sockaddr))
    if not vetted:
        raise _failed(hop.url, f"{hop.host} has no IPv4 or IPv6 address")
    return vetted


def _address_kind(address: IPAddress) -> str:
    judged = _embedded_ipv4(address) or address
    kinds = (
        ("unspecified", judged.is_unspecified),
        ("loopback", judged.is_loopback),
        ("link-local", judged.is_link_local),
        ("multicast", judged.is_multicast),
        ("shared (carrier-grade NAT)", judged in SHARED_ADDRESS_SPACE),
        ("site-local", isinstance(judged, ipaddress.IPv6Address) and judged.is_site_local),
        ("private", judged.is_private),
        ("reserved", judged.is_reserved),
    )
    return next((kind for kind, applies in kinds if applies), "non-public")


def _embedded_ipv4(address: IPAddress) -> ipaddress.IPv4Address | None:
    if not isinstance(address, ipaddress.IPv6Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address in NAT64_WELL_KNOWN:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return address.sixtofour


def _fetch_hop(hop: _Hop) -> FetchedPage | str:
    """The page, or where it redirects to; one request, within the hop's timeout."""
    timeout: float = settings.MEMSITE_FETCH_TIMEOUT_S
    deadline = time.monotonic() + timeout
    addresses = _vetted_addresses(hop)
    connection_class = _PinnedHTTPSConnection if hop.scheme == "https" else _PinnedHTTPConnection
    connection = connection_class(hop.host, hop.port, addresses=addresses, deadline=deadline)
    if deadline - time.monotonic() <= 0:
        raise _failed(hop.url, f"{hop.url}: timed out after {timeout} s")
    watchdog = threading.Timer(deadline - time.monotonic(), connection.abort)
    watchdog.daemon = True
    watchdog.start()
    try:
        headers = {"Accept": ACCEPT, "Accept-Encoding": "identity", "User-Agent": USER_AGENT}
        connection.request("GET", hop.target, headers=headers)
        response = connection.getresponse()
        if response.status in REDIRECT_STATUSES:
            location = response.getheader("Location")
            if not location:
                raise _failed(hop.url, f"{hop.url} answered HTTP {response.status} without a Location")
            return _header_text(location)
        if not 200 <= response.status < 300:
            raise _failed(
                hop.url,
                f"{hop.url} answered HTTP {response.status} {response.reason}".rstrip(),
                status=response.status,
            )
        media_type, html = _check_content(hop, response)
        body, truncated = _read_capped(response, settings.MEMSITE_FETCH_MAX_BYTES)
        if connection.aborted:
            raise TimeoutError("timed out")
    except (OSError, http.client.HTTPException) as exc:
        if connection.aborted or isinstance(exc, TimeoutError):
            raise _failed(hop.url, f"{hop.url}: timed out after {timeout} s") from None
        raise _failed(hop.url, f"{hop.url}: {_describe(exc)}") from None
    finally:
        watchdog.cancel()
        connection.close()
    charset = _charset(response.headers.get_content_charset(), media_type, body)
    decoder = codecs.getincrementaldecoder(charset)(errors="replace")
    text = decoder.decode(body, final=not truncated)  # a cut multi-byte character is dropped
    return FetchedPage(
        url=hop.url,
        status=response.status,
        content_type=media_type,
        charset=charset,
        text=html_to_text(text) if html else text,
        truncated=truncated,
        redirects=(),
    )


def _check_content(hop: _Hop, response: http.client.HTTPResponse) -> tuple[str, bool]:
    """The media type, and whether it is HTML; refuses what is not text before it is read."""
    header = response.getheader("Content-Type")
    if not header:
        raise _refused(hop.url, f"{hop.url} answered without a content type")
    media_type = header.split(";", 1)[0].strip().lower()
    if not _is_text(media_type):
        raise _refused(
            hop.url,
            f"content type {media_type} is not allowed (only text: text/*, application/json, "
            "application/xml, application/xhtml+xml)",
            content_type=media_type,
        )
    encoding = (response.getheader("Content-Encoding") or "identity").strip().lower()
    if encoding != "identity":
        raise _refused(hop.url, f"content encoding {encoding} is not supported")
    return media_type, media_type in HTML_TYPES


def _is_text(media_type: str) -> bool:
    if media_type.startswith("text/") or media_type in TEXT_APPLICATION_TYPES:
        return True
    return media_type.startswith("application/") and media_type.endswith(("+json", "+xml"))


def _read_capped(response: http.client.HTTPResponse, cap: int) -> tuple[bytes, bool]:
    """At most `cap` bytes; one byte more is read to tell a body of exactly `cap` from a longer one."""
    body = bytearray()
    while len(body) <= cap:
        chunk = response.read(min(READ_CHUNK, cap + 1 - len(body)))
        if not chunk:
            break
        body += chunk
    return bytes(body[:cap]), len(body) > cap


_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)""", re.IGNORECASE)
_XML_ENCODING = re.compile(rb"""^<\?xml[^>]+encoding\s*=\s*["']([A-Za-z0-9._-]+)""")
_BOMS = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def _charset(declared: str | None, media_type: str, body: bytes) -> str:
    """A byte order mark, else the Content-Type's charset, else what the document itself
    declares in its first 1024 bytes (HTML meta, XML declaration), else UTF-8."""
    bom_encoding = [encoding for bom, encoding in _BOMS if body.startswith(bom)][:1]
    candidates: list[str | None] = [*bom_encoding, declared]
    head = body[:1024]
    if media_type in HTML_TYPES and (match := _META_CHARSET.search(head)):
        candidates.append(match.group(1).decode("ascii"))
    if "xml" in media_type and (match := _XML_ENCODING.match(head)):
        candidates.append(match.group(1).decode("ascii"))
    for candidate in candidates:
        if candidate and _is_text_encoding(candidate):
            return codecs.lookup(candidate).name
    return "utf-8"


def _is_text_encoding(name: str) -> bool:
    try:
        b"a".decode(name, "ignore")  # LookupError for unknown names and bytes codecs (base64)
    except LookupError:
        return False
    return True


def _header_text(value: str) -> str:
    """http.client reads header values as Latin-1; a Location is usually UTF-8."""
    try:
        return value.encode("latin-1").decode("utf-8")
    except UnicodeError:
        return value


def _describe(exc: BaseException) -> str:
    if isinstance(exc, ssl.SSLCertVerificationError):
        return f"TLS certificate not accepted: {exc.verify_message}"
    return str(exc) or type(exc).__name__


class _PinnedHTTPConnection(http.client.HTTPConnection):
    """Connects to addresses vetted beforehand, never to what the host name resolves to by then;
    the Host header still names the host."""

    def __init__(self, host: str, port: int, *, addresses: Sequence[VettedAddress], deadline: float):
        super().__init__(host, port, timeout=max(deadline - time.monotonic(), 0.001))
        self._addresses = addresses
        self._deadline = deadline
        self._live_socket: socket.socket | None = None
        self.aborted = False

    def connect(self) -> None:
        self.sock = self._wrap(self._open_socket())
        self._live_socket = self.sock

    def abort(self) -> None:
        """Ends the hop at its deadline, whatever the socket is waiting for."""
        self.aborted = True
        if self._live_socket is not None:
            try:
                socket.socket.shutdown(self._live_socket, socket.SHUT_RDWR)
            except OSError:
                pass

    def _open_socket(self) -> socket.socket:
        error: OSError = OSError("no address to connect to")
        for family, sockaddr in self._addresses:
            remaining = self._deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("timed out")
            sock = socket.socket(family, socket.SOCK_STREAM)
            try:
                sock.settimeout(remaining)
                sock.connect(sockaddr)
            except OSError as exc:
                sock.close()
                error = exc
                continue
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            return sock
        raise error

    def _wrap(self, sock: socket.socket) -> socket.socket:
        return sock


class _PinnedHTTPSConnection(_PinnedHTTPConnection):
    """TLS to a vetted address: SNI and the certificate check use the host name."""

    default_port = http.client.HTTPS_PORT

    def _wrap(self, sock: socket.socket) -> socket.socket:
        try:
            return _tls_context().wrap_socket(sock, server_hostname=self.host)
        except BaseException:
            sock.close()
            raise


@cache
def _tls_context() -> ssl.SSLContext:
    return ssl.create_default_context()


_WHITESPACE = re.compile(r"\s+")


class _TextExtractor(HTMLParser):
    SKIPPED = frozenset({"script", "style", "noscript", "template", "svg"})
    BLOCKS = frozenset({
        "address", "article", "aside", "blockquote", "br", "caption", "dd", "details", "div",
        "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3",
        "h4", "h5", "h6", "header", "hr", "li", "main", "nav", "ol", "p", "pre", "section",
        "summary", "table", "title", "tr", "ul",
    })  # fmt: skip
    CELLS = frozenset({"td", "th"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.SKIPPED:
            self._skipping += 1
        elif tag in self.BLOCKS:
            self.parts.append("\n")
        elif tag in self.CELLS:
            self.parts.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIPPED:
            self._skipping = max(self._skipping - 1, 0)
        elif tag in self.BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._skipping:
            self.parts.append(_WHITESPACE.sub(" ", data))  # a line break in the source is a space
