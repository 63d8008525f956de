"""A text cut into sentences and lines, each a unit of roots, read under its headings."""

from memsite.text.units import headed_units, sentences, unit
from memsite.text.words import roots


def test_sentences_are_cut_at_sentence_ends_and_lines_once_each():
    text = "One fish. Two fish!\nOne fish.\nx\n   Red fish? Blue fish"

    assert sentences(text) == ("One fish.", "Two fish!", "Red fish?", "Blue fish")


def test_a_unit_holds_its_roots_and_counts_their_repeats():
    item = unit("The kayak, the red kayak", under=frozenset({"boat"}))

    assert item.own == frozenset(roots("kayak red")) and item.length == 3
    assert item.terms == item.own | {"boat"} and not item.heading


def test_lines_are_read_under_the_headings_above_them():
    text = "Node: notes.md\n# Boats\n| kayak | red |\n## Colours\nA red one.\n# Cars\nA fast one."

    units = {item.text: item for item in headed_units(text)}

    headings = ["Node: notes.md", "# Boats", "## Colours", "# Cars"]
    assert [text for text, item in units.items() if item.heading] == headings
    node, boats, colours, cars = (frozenset(roots(heading)) for heading in headings)
    assert units["| kayak | red |"].under == node | boats
    assert units["A red one."].under == node | boats | colours
    assert units["A fast one."].under == node | cars  # a heading of the same level closes the one before


def test_a_repeated_sentence_is_one_unit_under_its_first_headings():
    units = headed_units("# Boats\nThe kayak leaks.\n# Cars\nThe kayak leaks.")

    assert [item.text for item in units] == ["# Boats", "The kayak leaks.", "# Cars"]
    assert units[1].under == frozenset(roots("Boats"))
