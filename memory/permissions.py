"""What a user may do to a node, the one answer both the services' refusals and the dashboard's
buttons come from; and where a token may write, which the services refuse outside."""

from dataclasses import dataclass

from memory import selectors
from memory.models import Node
from memsite.errors import Forbidden
from memsite.spaces.logic import Role, role_allows, write_under_refusal
from memsite.spaces.principals import Principal
from memsite.spaces.selectors import membership_role

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
        """Forbidden (403), saying why, unless the user may take `action`."""
        if not getattr(self, action):
            raise Forbidden(REFUSALS[action].format(name=self.node.name))


def node_permissions(node: Node, user: object, *, actor: Principal | None = None) -> NodePermissions:
    """`user` may be None (the system's own writes) or anonymous. Its role is the `actor`'s,
    for a request (a token acts with its own role); else the user's in the default space,
    which holds every node for now."""
    if not node.is_internal:
        return NodePermissions(node, **dict.fromkeys(REFUSALS, True))
    role = actor.role if actor is not None else membership_role(user=user)
    owner = role_allows(role, Role.OWNER)
    return NodePermissions(node, **{**dict.fromkeys(REFUSALS, False), "edit": owner})


def write_under_require(actor: Principal | None, node: Node, *, into: bool = False) -> None:
    """Forbidden (403) unless the actor may write `node`, or with `into`, put nodes into it: a
    token limited by its write_under writes only under that folder. The system (no actor) and
    sessions write anywhere."""
    if actor is None or not actor.write_under:
        return  # anywhere: no path to read
    if refusal := write_under_refusal(selectors.node_path(node=node), actor.write_under, into=into):
        raise Forbidden(refusal)
