"""Turning stored content into something safe to show in a page.

Markdown is rendered with `markdown` and then sanitized with `nh3`, so a document can never
carry a script, an event handler, a `javascript:` link or an image from another server into the
dashboard."""

import nh3
from django.utils.safestring import SafeString, mark_safe
from markdown import Markdown

MARKDOWN_EXTENSIONS = ["extra", "sane_lists"]
# No images: a document could load one from any server and so report who reads it, and when.
ALLOWED_TAGS = set(nh3.ALLOWED_TAGS) - {"img"}
ALLOWED_ATTRIBUTES = {
    **{tag: attributes for tag, attributes in nh3.ALLOWED_ATTRIBUTES.items() if tag in ALLOWED_TAGS},
    "a": {"href", "hreflang", "title"},
    "th": {"align", "colspan", "rowspan", "scope"},
    "td": {"align", "colspan", "rowspan"},
    "code": {"class"},
}
URL_SCHEMES = {"http", "https", "mailto"}
# How much of a node's content a preview shows; the rest is a download or an API read away.
PREVIEW_LIMIT_BYTES = 200_000
BINARY_SNIFF_BYTES = 8192


def markdown_to_html(text: str) -> SafeString:
    """Markdown rendered to HTML that is safe to insert into a page as is."""
    html = Markdown(extensions=MARKDOWN_EXTENSIONS, output_format="html").convert(text)
    cleaned = nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        link_rel="noopener noreferrer nofollow",
    )
    return mark_safe(cleaned)


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
