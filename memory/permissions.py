"""What a principal may do to a node, the one answer the services' refusals, the dashboard's
buttons and the admin's come from; and where a principal may write (its own space, and its
token's folder), which the services refuse outside."""

from dataclasses import dataclass

from memory import selectors
from memory.models import Node
from memsite.errors import Forbidden, NotFound
from memsite.spaces.logic import Role, role_allows, write_under_refusal
from memsite.spaces.principals import Principal

# Why each action is refused. Only internal folders refuse anything: they are the tree's fixed
# frame (seed 000), which the space's owners may describe and nobody may otherwise change.
REFUSALS = {
    "edit": "Only owners may edit the internal folder '{name}', and only its description.",
    "rename": "The internal folder '{name}' cannot be renamed or retyped.",
    "set_context": "The internal folder '{name}' has no context, and none can be given to it.",
    "move": "The internal folder '{name}' cannot be moved.",
    "delete": "The internal folder '{name}' cannot be deleted.",
    "write_content": ("The internal folder '{name}' holds no content, and none can be written to it."),
}


@dataclass(frozen=True)
class NodePermissions:
    node: Node
    edit: bool  # update the node at all (what else an update may change is below)
    rename: bool  # its name and type
    set_context: bool
    move: bool
    delete: bool
    write_content: bool

    def require(self, action: str) -> None:
        """Forbidden (403), saying why, unless the principal may take `action`."""
        if not getattr(self, action):
            raise Forbidden(REFUSALS[action].format(name=self.node.name))


def node_permissions(node: Node, *, by: Principal) -> NodePermissions:
    """What `by` may do to the node, with its role in its space (a token acts with its own):
    anything to a node of the tree; to an internal folder, only an owner's description."""
    if not node.is_internal:
        return NodePermissions(node, **dict.fromkeys(REFUSALS, True))
    owner = role_allows(by.role, Role.OWNER)
    return NodePermissions(node, **{**dict.fromkeys(REFUSALS, False), "edit": owner})


def write_under_require(node: Node, *, by: Principal, into: bool = False) -> None:
    """Unless `by` may write `node`, or with `into`, put nodes into it: NotFound (404) for a node
    of another space, as for one that does not exist; Forbidden (403) outside its token's
    folder (`write_under`). Sessions and memsite itself write anywhere in their space."""
    if node.space_id != by.space.pk:
        raise NotFound(f"No memory node with id '{node.pk}'.")
    if not by.write_under:
        return  # anywhere: no path to read
    if refusal := write_under_refusal(selectors.node_path(node=node), by.write_under, into=into):
        raise Forbidden(refusal)
