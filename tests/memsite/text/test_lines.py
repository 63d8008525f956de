"""A text on one line, cut to a length."""

from memsite.text.lines import one_line


def test_whitespace_runs_and_line_breaks_become_one_space():
    assert one_line("  Ana\n\nmoved\tto   Porto. ", 100) == "Ana moved to Porto."


def test_a_longer_text_is_cut_to_the_limit_with_an_ellipsis_last():
    cut = one_line("Ana moved to Porto in May.", 14)

    assert cut == "Ana moved to\u2026" and len(cut) <= 14  # the space before the cut is dropped
    assert one_line("Ana moved", 9) == "Ana moved"  # a text of the limit exactly is whole
