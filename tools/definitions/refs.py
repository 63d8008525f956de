"""How tools name what they act on, in the principal's space: a node by its path or id, an agent
by its id or name. A row of another space is as missing as one that does not exist."""

from typing import Annotated

from pydantic import Field, StringConstraints

from agents.context import selectors as agent_selectors
from agents.context.models import Agent
from memory import selectors
from memory.models import MAX_DEPTH, Node
from memory.validation import MAX_NAME_BYTES
from memsite.errors import NotFound
from memsite.spaces.principals import Principal

ROOT = "/"
# A path names at most MAX_DEPTH nodes, each after its '/'; a name is at most MAX_NAME_BYTES.
MAX_PATH_CHARS = MAX_DEPTH * (MAX_NAME_BYTES + 1)
NODE_HELP = "A node's readable path, such as /user/notes.md, or its id, memory_<32 hex>."
NodeRef = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_PATH_CHARS)]
AgentRef = Annotated[
    int | Annotated[str, StringConstraints(min_length=1, max_length=200)],
    Field(description="The agent's id (a number) or its name (a string)."),
]


def node_of(principal: Principal, ref: str) -> Node:
    """The node at a path (starting with '/') or with an id; NotFound as the API's."""
    space = principal.space
    if ref.startswith(ROOT):
        return selectors.node_resolve(space=space, path=ref)
    return selectors.node_get(space=space, node_id=ref)


def agent_of(principal: Principal, ref: int | str) -> Agent:
    """The agent with this id (a number) or name (a string); NotFound as the API's."""
    if isinstance(ref, int):
        return agent_selectors.agent_get(space=principal.space, agent_id=ref)
    agent = agent_selectors.agent_named(space=principal.space, name=ref)
    if agent is None:
        raise NotFound(f"No agent named {ref!r}.")
    return agent
