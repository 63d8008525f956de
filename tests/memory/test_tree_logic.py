"""What a write may swap into the memory page's tree: only what the tree shows."""

from memory.logic.tree import MAX_SHOWN, TreeChange, shown_ids


def test_shown_ids_keep_well_formed_ids_up_to_the_bound():
    assert shown_ids(["memory_a memory_a  <x> memory_b", "", "memory_c"]) == {"memory_a", "memory_b", "memory_c"}
    assert len(shown_ids(f"memory_{number}" for number in range(MAX_SHOWN + 10))) == MAX_SHOWN


def test_a_change_keeps_only_what_the_tree_shows():
    change = TreeChange(
        added=(("shown folder", "new"), ("hidden folder", "other")),
        removed=("shown item", "hidden item"),
        counted=("shown folder", "hidden folder", "shown folder"),
        renamed=("hidden item",),
        refilled=("shown folder",),
        shown=frozenset({"shown folder", "shown item"}),
    )
    visible = change.visible()
    assert visible.added == (("shown folder", "new"),)
    assert visible.removed == ("shown item",)
    assert visible.counted == ("shown folder",)
    assert (visible.renamed, visible.refilled) == ((), ("shown folder",))


def test_a_shown_item_is_added_again_only_once_removed():
    shown = frozenset({"from", "to", "item"})
    assert TreeChange(added=(("to", "item"),), shown=shown).visible().added == ()
    moved = TreeChange(added=(("to", "item"),), removed=("item",), shown=shown).visible()
    assert (moved.removed, moved.added) == (("item",), (("to", "item"),))


def test_an_item_added_to_a_folder_showing_its_first_page_refills_it():
    shown = frozenset({"paged", "whole", "item"})
    change = TreeChange(
        added=(("paged", "new"), ("whole", "other"), ("paged", "item")),
        removed=("item",),
        refilled=("paged",),
        shown=shown,
        paged=frozenset({"paged", "hidden"}),
    )
    visible = change.visible()
    assert visible.added == (("whole", "other"),)  # appended after "Load more", it would come twice
    assert visible.refilled == ("paged",)
    assert TreeChange(added=(("hidden", "new"),), shown=shown, paged=frozenset({"hidden"})).visible().refilled == ()
