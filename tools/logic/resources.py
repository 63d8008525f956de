"""MCP resource URIs of memory's nodes: `memsite://node/` and a node's readable path, its names
percent-encoded. Explained in docs/mcp.md."""

from urllib.parse import quote, unquote

NODE_URI = "memsite://node/"
NODE_URI_TEMPLATE = NODE_URI + "{path}"


def node_uri(path: str) -> str:
    """The URI of the node at a readable path such as `/user/notes.md`."""
    return NODE_URI + quote(path.lstrip("/"), safe="/")


def uri_path(uri: str) -> str | None:
    """The readable path a node's URI names, `/` and its names decoded; None for a URI that
    names no node. What follows the prefix is all path: a name may hold `?` or `#`."""
    if not uri.startswith(NODE_URI) or uri == NODE_URI:
        return None
    return "/" + unquote(uri[len(NODE_URI) :])
