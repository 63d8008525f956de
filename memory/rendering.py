"""Turning stored content into something safe to show in a page.
Explained in docs/memory.md."""

import html
import logging
import re

import cmarkgfm
import nh3
from cmarkgfm.cmark import Options
from django.utils.html import escape, format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from memory.index.fulltext import query_words
from memsite.text.stems import root
from memsite.text.words import WORD

logger = logging.getLogger(__name__)

MARKDOWN_EXTENSIONS = ["table", "strikethrough", "autolink"]
# Raw HTML is passed on for nh3 to sanitize, so an author's own <a href> or <details> still works.
MARKDOWN_OPTIONS = Options.CMARK_OPT_UNSAFE | Options.CMARK_OPT_FOOTNOTES
# No images: a document could load one from any server and so report who reads it, and when.
ALLOWED_TAGS = set(nh3.ALLOWED_TAGS) - {"img"}
ALLOWED_ATTRIBUTES = {
    **{tag: names for tag, names in nh3.ALLOWED_ATTRIBUTES.items() if tag in ALLOWED_TAGS},
    "a": {"href", "hreflang", "title", "id"},
    "li": {"id"},
    "th": {"align", "colspan", "rowspan", "scope"},
    "td": {"align", "colspan", "rowspan"},
    "code": {"class"},
}
# Footnotes link by id ("fn-1", "fnref-1"); any other id gets this prefix, so a document cannot
# take the id of one of the page's own elements.
ID_PREFIX = "fn"
URL_SCHEMES = {"http", "https", "mailto"}
# How much of a node's content a preview shows; the rest is a download or an API read away.
PREVIEW_LIMIT_BYTES = 200_000
BINARY_SNIFF_BYTES = 8192

# The bounds of a document that is rendered. Real documents of 200 KB (release notes, API
# references) hold up to 12 K markup characters and 6 K lines, give HTML 1.2x their size and nest
# a few levels deep; within these bounds the worst shapes render and sanitize in well under 100 ms.
RENDER_LIMIT_CHARS = 200_000
MARKUP_CHARS = '*_[]<>&|~!`\\"'
MAX_MARKUP_CHARS = 20_000
MAX_LINES = 20_000
MAX_HTML_CHARS = 400_000
MAX_HTML_ENTITIES = 40_000
MAX_HTML_DEPTH = 100
# Elements that do not nest: void elements, and those whose next sibling closes them
# (<p>, <li>, <td> ...), so an author's unclosed <li>s do not count as depth.
_FLAT_ELEMENTS = frozenset(
    {
        "area",
        "base",
        "br",
        "col",
        "embed",
        "hr",
        "img",
        "input",
        "link",
        "meta",
        "param",
        "source",
        "track",
        "wbr",
        "p",
        "li",
        "dt",
        "dd",
        "option",
        "optgroup",
        "tr",
        "td",
        "th",
        "thead",
        "tbody",
        "tfoot",
        "colgroup",
        "caption",
        "rb",
        "rt",
        "rp",
        "rtc",
    }
)
_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9-]*)")


class Unrenderable(Exception):
    """A document outside the bounds of what is rendered; the message says which bound."""


def markdown_to_html(text: str) -> SafeString:
    """Markdown rendered to HTML that is safe to insert into a page as is; a document that
    cannot be rendered comes back as escaped text."""
    shown = text[:RENDER_LIMIT_CHARS]
    try:
        rendered = _render(shown)
    except Unrenderable as exc:
        rendered = _as_text(shown, reason=str(exc))
    except Exception:
        # A page must show its document whatever the renderer does with it; the log keeps the bug.
        logger.exception("markdown could not be rendered; shown as text")
        rendered = _as_text(shown, reason="it could not be rendered")
    left_out = len(text) - len(shown)
    if left_out > 0:
        rendered += f'<p class="muted">{left_out:,} more characters are not shown.</p>'
    return mark_safe(rendered)


def _render(text: str) -> str:
    if sum(text.count(char) for char in MARKUP_CHARS) > MAX_MARKUP_CHARS:
        raise Unrenderable(f"it has more than {MAX_MARKUP_CHARS:,} markup characters")
    if text.count("\n") > MAX_LINES:
        raise Unrenderable(f"it has more than {MAX_LINES:,} lines")
    rendered = cmarkgfm.markdown_to_html_with_extensions(text, options=MARKDOWN_OPTIONS, extensions=MARKDOWN_EXTENSIONS)
    _check_html_shape(rendered)
    return nh3.clean(
        rendered,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        link_rel="noopener noreferrer nofollow",
        id_prefix=ID_PREFIX,
    )


def _check_html_shape(rendered: str) -> None:
    """Raises Unrenderable if the HTML is too large, too rich in entities or too deep to
    sanitize quickly."""
    if len(rendered) > MAX_HTML_CHARS:
        raise Unrenderable(f"its HTML would be over {MAX_HTML_CHARS:,} characters")
    if rendered.count("&") > MAX_HTML_ENTITIES:
        raise Unrenderable(f"its HTML would hold over {MAX_HTML_ENTITIES:,} entities")
    if html_depth(rendered) > MAX_HTML_DEPTH:
        raise Unrenderable(f"it nests more than {MAX_HTML_DEPTH} levels deep")


def html_depth(rendered: str) -> int:
    """How deep the elements of an HTML fragment nest, counting stray end tags as nothing."""
    depth = deepest = 0
    for closing, name in _TAG.findall(rendered):
        if name.lower() in _FLAT_ELEMENTS:
            continue
        if closing:
            depth = max(depth - 1, 0)
        else:
            depth += 1
            deepest = max(deepest, depth)
    return deepest


def _as_text(text: str, *, reason: str) -> str:
    note = f'<p class="muted">Shown as plain text: {html.escape(reason)}.</p>'
    return f"{note}<pre>{html.escape(text, quote=False)}</pre>"


def is_binary(data: bytes) -> bool:
    if b"\x00" in data[:BINARY_SNIFF_BYTES]:
        return True
    try:
        data[:BINARY_SNIFF_BYTES].decode("utf-8")
    except UnicodeDecodeError as exc:
        # A multi-byte character cut at the sniff boundary is still text.
        return exc.start < len(data[:BINARY_SNIFF_BYTES]) - 3
    return False


def text_preview(data: bytes) -> tuple[str, bool]:
    """The start of the content as text, and whether it was cut."""
    truncated = len(data) > PREVIEW_LIMIT_BYTES
    return data[:PREVIEW_LIMIT_BYTES].decode("utf-8", errors="replace"), truncated


def marked(text: str, query: str) -> SafeString:
    """`text` escaped, with each word that shares its Snowball root with one of the query's in
    <mark> ("moved", "moving" for "move"): the stemming of PostgreSQL's full text, which SQLite's
    Porter stemmer mostly agrees with. Each piece is escaped on its own, so nothing of the text
    is ever read as HTML."""
    roots = {root(word) for word in query_words(query)}
    pieces: list[SafeString] = []
    last = 0
    for match in WORD.finditer(text):
        if root(match.group().lower()) in roots:
            pieces += [escape(text[last : match.start()]), format_html("<mark>{}</mark>", match.group())]
            last = match.end()
    pieces.append(escape(text[last:]))
    return format_html_join("", "{}", ((piece,) for piece in pieces))
