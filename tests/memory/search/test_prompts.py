"""Option labels, as the router is shown them and as the walk reads their names back."""

import pytest

from memory.search.prompts import option_label, option_name


@pytest.mark.parametrize(
    ("description", "snippet"),
    [("", ""), ("Session 7, Ana and Bo", ""), ("", "Ana: I adopted a greyhound."), ("Session 7", "Bo: ok: fine")],
    ids=["name", "description", "snippet", "both"],
)
def test_the_name_comes_back_from_every_label(description, snippet):
    assert option_name(option_label("session-07.md", description, snippet)) == "session-07.md"
