"""What another space's memory holds changes nothing in this space's rankings: a score that
moved with it would tell a member of this space which words the other space's memory holds."""

import pytest

from memory import selectors
from memory.index.retrieve import retrieve
from memsite.spaces.models import Space
from tests.factories import DocumentFactory, default_space, system

pytestmark = pytest.mark.django_db
QUERY = "alpha zqxsecret"  # the first word is ours; the second, only the other space's


def _ranked(space: Space) -> list[tuple[str, float]]:
    # The fused scores, which the API shows. (SQLite's bm25, the raw full-text score, weighs
    # words by the whole FTS5 table: PostgreSQL's ts_rank_cd, in production, reads one row.)
    return [(hit.node_id, hit.score) for hit in retrieve(query=QUERY, by=system(space), k=5)]


def test_a_word_only_another_space_holds_leaves_this_spaces_scores_as_they_were(settings):
    settings.MEMSITE_EMBEDDINGS = "off"  # full text alone ranks: its statistics are what is tested
    ours = default_space()
    DocumentFactory(name="ours.md", description="", content=b"alpha is our only word here.")
    before = _ranked(ours)
    assert before

    other = Space.objects.create(slug="other", name="Other")
    swarmstar = selectors.node_internal_folder(space=other, name="swarmstar")
    DocumentFactory(parent=swarmstar, name="theirs.md", description="", content=b"zqxsecret is their word.")

    assert _ranked(ours) == before
