"""What the memory page's tree shows, as its forms report it, and what a write may swap into it.
htmx can only swap an element that is on the page: a swap for an item the tree does not show
would fail in the browser (htmx:oobErrorNoTarget)."""

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

# The panel's write forms send the ids of the items the tree shows, space-separated in one
# field, and those of its folders that offer "Load more" in another (static/js/memory-tree.js).
# More than this is not a tree anyone has open: the rest are ignored, and not refreshed.
MAX_SHOWN = 5000
ITEM_ID = re.compile(r"^[\w-]{1,64}$")


def shown_ids(values: Iterable[str]) -> frozenset[str]:
    """The ids of the items a form says its page's tree shows, from fields of space-separated
    ids; malformed ones are dropped."""
    kept: set[str] = set()
    for item in (item for value in values for item in value.split()):
        if len(kept) >= MAX_SHOWN:
            break
        if ITEM_ID.match(item):
            kept.add(item)
    return frozenset(kept)


@dataclass(frozen=True)
class TreeChange:
    """The ids a write changed in the tree: items added to folders (folder id, item id), items
    removed, folders whose children count changed, items renamed, folders refilled whole; and
    what the page's tree shows: its items, and its folders that offer "Load more" (`paged`)."""

    added: tuple[tuple[str, str], ...] = ()
    removed: tuple[str, ...] = ()
    counted: tuple[str, ...] = ()
    renamed: tuple[str, ...] = ()
    refilled: tuple[str, ...] = ()
    shown: frozenset[str] = field(default_factory=frozenset)
    paged: frozenset[str] = field(default_factory=frozenset)

    def visible(self) -> "TreeChange":
        """The part of the change the page's tree can take: what it shows, each item once."""
        shown = self.shown
        # An item the tree shows is added again only once it is removed (a move).
        added = [
            (folder, item)
            for folder, item in self.added
            if folder in shown and (item not in shown or item in self.removed)
        ]
        # A new item goes last, in the pages "Load more" brings: appended to a folder that offers
        # it, the item would be shown twice. Such a folder shows its first page again.
        refilled = [folder for folder in self.refilled if folder in shown]
        refilled += [folder for folder, _ in added if folder in self.paged]
        return TreeChange(
            added=tuple((folder, item) for folder, item in added if folder not in self.paged),
            removed=tuple(item for item in self.removed if item in shown),
            counted=tuple(dict.fromkeys(folder for folder in self.counted if folder in shown)),
            renamed=tuple(item for item in self.renamed if item in shown),
            refilled=tuple(dict.fromkeys(refilled)),
            shown=shown,
            paged=self.paged,
        )
