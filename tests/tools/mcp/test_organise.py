"""A swarm node organises its own memory over MCP, through the SDK's client and a real token:
it makes a folder, writes into folders that do not exist yet, moves, renames at the version it
read and deletes; each answer and the tree the services then read agree, and a stale version
is refused in words that say what to do, with nothing changed."""

import json

import pytest

from memory import selectors
from memory.models import Node
from memsite.errors import NotFound
from tests.factories import default_space, token_for
from tests.tools.mcp.conftest import with_session


def at(path: str):
    return selectors.node_resolve(space=default_space(), path=path)


def children(path: str) -> list[str]:
    return [child.name for child in selectors.node_children(node=at(path))]


def answer(result) -> dict:
    """A tool's answer, as structure; it says the same as its text."""
    assert not result.isError, result.content[0].text
    assert json.loads(result.content[0].text) == result.structuredContent
    return result.structuredContent


async def organise(session) -> dict:
    """The node's calls, in the order a node makes them, each with its answer."""
    call = session.call_tool
    done = {"folder": answer(await call("memory_folder", {"path": "/swarmstar/nodes/a"}))}
    done["write"] = answer(
        await call(
            "memory_write",
            {
                "parent": "/swarmstar/nodes/a/runs/1",
                "name": "findings.md",
                "content": "# Findings\n\nStaging listens on 8443.",
                "description": "What node a found",
            },
        )
    )
    written = done["write"]["node"]
    done["move"] = answer(await call("memory_move", {"node": "/swarmstar/nodes/a/runs", "parent": "/references"}))
    done["rename"] = answer(
        await call("memory_update", {"node": written["id"], "name": "staging.md", "version": written["version"]})
    )
    stale = {"node": written["id"], "name": "late.md", "version": written["version"]}
    done["stale"] = await call("memory_update", stale)
    return done


def test_a_node_makes_writes_moves_renames_and_deletes_its_memory(mcp_url, user):
    key = token_for(user)
    done = with_session(mcp_url, key, organise)

    folder = done["folder"]["node"]
    assert (folder["path"], folder["type"], folder["children_ids"]) == ("/swarmstar/nodes/a", "folder", [])
    assert at("/swarmstar/nodes/a").pk == folder["id"]

    assert done["write"]["created"] is True
    written = done["write"]["node"]
    assert (written["path"], written["type"], written["created_by"]) == (
        "/swarmstar/nodes/a/runs/1/findings.md",
        "document",
        user.username,
    )

    moved = done["move"]["node"]
    assert (moved["path"], moved["parent"]) == ("/references/runs", at("/references").pk)
    assert children("/swarmstar/nodes/a") == []

    renamed = done["rename"]["node"]
    assert (renamed["id"], renamed["path"]) == (written["id"], "/references/runs/1/staging.md")
    assert renamed["version"] > written["version"]
    document = at("/references/runs/1/staging.md")
    assert selectors.node_content(node=document) == b"# Findings\n\nStaging listens on 8443."
    assert document.description == "What node a found"

    stale = done["stale"]
    assert stale.isError
    assert json.loads(stale.content[0].text) == {
        "status": 409,
        "detail": f"The node was changed by someone else: it is at version {renamed['version']}, "
        f"not {written['version']}. Reload it and try again.",
    }
    assert children("/references/runs/1") == ["staging.md"]

    nodes_before = Node.objects.count()
    deleted = with_session(
        mcp_url, key, lambda session: session.call_tool("memory_delete", {"node": "/references/runs"})
    )
    assert answer(deleted) == {"deleted": "/references/runs"}
    for gone in ("/references/runs", "/references/runs/1/staging.md"):
        with pytest.raises(NotFound):
            at(gone)
    assert "runs" not in children("/references")
    assert at("/swarmstar/nodes/a").pk == folder["id"]  # what was not deleted stays
    assert Node.objects.count() == nodes_before - 3  # runs, 1 and staging.md
