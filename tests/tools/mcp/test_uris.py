"""Node URIs (tools/logic/resources.py): a readable path there and back, whatever its names hold."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tools.logic.resources import node_uri, uri_path

NAMES = st.text(min_size=1, max_size=20).filter(lambda name: "/" not in name and name not in (".", ".."))


@given(st.lists(NAMES, min_size=1, max_size=5))
def test_a_path_comes_back_from_its_uri(names):
    path = "/" + "/".join(names)
    assert uri_path(node_uri(path)) == path


def test_names_are_percent_encoded_and_slashes_kept():
    assert node_uri("/user/a b é?#%.md") == "memsite://node/user/a%20b%20%C3%A9%3F%23%25.md"


@pytest.mark.parametrize("uri", ["memsite://node/", "memsite://other/x", "file:///etc/passwd", "memsite:node/x"])
def test_other_uris_name_no_node(uri):
    assert uri_path(uri) is None


def test_a_name_sent_unencoded_is_read_as_it_is():
    assert uri_path("memsite://node/references/what?.md") == "/references/what?.md"
