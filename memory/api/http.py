"""HTTP plumbing of the node API: raw bodies, size guards, If-Match versions, ETags, pagination."""

import re
from typing import TypeVar

from django.conf import settings
from django.http import HttpResponse
from rest_framework.parsers import BaseParser
from rest_framework.request import Request
from rest_framework.views import APIView

from memory.models import Node
from memsite.api import read_body
from memsite.errors import InvalidInput
from memsite.pagination import CheckedCursorPagination

VERSION_PATTERN = re.compile(r'(?:W/)?"?([0-9]{1,10})"?')
# Multipart framing around an uploaded file: boundaries, part headers, a long file name.
MULTIPART_SLACK_BYTES = 64 * 1024
AnyResponse = TypeVar("AnyResponse", bound=HttpResponse)


def archive_body_limit() -> int:
    """The largest archive upload: the archive at its cap, and the multipart framing."""
    return settings.MEMSITE_ARCHIVE_MAX_BYTES + MULTIPART_SLACK_BYTES


def content_body_limit() -> int:
    return settings.MEMSITE_MAX_CONTENT_BYTES


class RawBodyParser(BaseParser):
    """Accepts any content type and hands the body over as bytes."""

    media_type = "*/*"

    # request.data is then the bytes: DRF takes whatever a parser returns, its stubs a mapping.
    def parse(self, stream, media_type=None, parser_context=None) -> bytes:  # type: ignore[override]
        return stream.read() if stream is not None else b""


# For views that answer with raw bytes: a client asking for `application/octet-stream` or
# `text/markdown` must not get 406; errors are still JSON. (A comment, not a docstring, so that
# it stays out of the OpenAPI descriptions of the views.)
class AnyAcceptMixin(APIView):
    def perform_content_negotiation(self, request: Request, force: bool = False):
        return super().perform_content_negotiation(request, force=True)


def read_raw_body(request: Request) -> bytes:
    """A node's content: any bytes, none included, within the content cap."""
    return read_body(request, what="content", limit=settings.MEMSITE_MAX_CONTENT_BYTES, allow_empty=True)


def expected_version(request: Request, body_version: int | None = None) -> int | None:
    """The version the client expects the node to be at: from the body or an If-Match header
    (`3`, `"3"` or `W/"3"`; `*` means any). Both may be given only if they agree."""
    header = request.headers.get("If-Match")
    header_version = None
    if header is not None and header.strip() != "*":
        match = VERSION_PATTERN.fullmatch(header.strip())
        if match is None:
            raise InvalidInput(f'The If-Match header {header!r} is not a node version; send the version, such as "3".')
        header_version = int(match.group(1))
    if header_version is not None and body_version is not None and header_version != body_version:
        raise InvalidInput(f"The If-Match header says version {header_version} but the body says {body_version}.")
    return body_version if body_version is not None else header_version


def with_etag(response: AnyResponse, node: Node) -> AnyResponse:
    response["ETag"] = f'"{node.version}"'
    return response


class NodeChildrenPagination(CheckedCursorPagination):
    """Children in insertion order. Pages are ranges over the indexed path, so every page costs
    the same whatever its position in a huge folder; there is no count."""

    ordering = "path"

    def get_default_page_size(self) -> int:
        return settings.MEMSITE_CHILDREN_PAGE_SIZE
