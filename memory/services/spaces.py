"""A space's memory: made with the space (its internal folders), deleted with it."""

from django.db import transaction

from memory.internal_folders import INTERNAL_FOLDERS, USER_DOCUMENTS
from memory.models import Node
from memory.services.nodes import node_create
from memsite.spaces.models import Space
from memsite.spaces.principals import system_principal


@transaction.atomic
def space_memory_create(*, space: Space) -> None:
    """The space's four internal folders, as roots, and the user's documents in `user`. Roots
    are only ever made here (and by the migration that made the default space's)."""
    folders = {
        name: Node.objects.add_root(
            instance=Node(type="internal_folder", is_folder=True, name=name, description=description, space=space)
        )
        for name, description in INTERNAL_FOLDERS
    }
    for name, description, text in USER_DOCUMENTS:
        node_create(
            parent=folders["user"],
            type="document",
            name=name,
            description=description,
            content=text.encode(),
            by=system_principal(space),
        )


def space_saved(sender: type[Space], instance: Space, created: bool, raw: bool = False, **kwargs: object) -> None:
    """post_save of a space: a new one gets its memory (a fixture being loaded brings its own)."""
    if created and not raw:
        space_memory_create(space=instance)


def space_memory_delete(sender: type[Space], space: Space, **kwargs: object) -> None:
    """A space being deleted takes its memory with it: the nodes first, whose rows the
    space's own deletion cannot cascade to (their space is PROTECT)."""
    Node.objects.filter(space=space).delete()
