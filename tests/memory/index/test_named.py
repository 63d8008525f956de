"""The named ranking: passages about what a question names, ranked by the rest of it."""

import pytest

from memory.index.fulltext import Scope
from memory.index.retrieve import named_nodes, retrieve
from memory.index.writes import embed_pending
from tests.factories import DocumentFactory, NodeFactory, system

pytestmark = pytest.mark.django_db
# Each turn is longer than a passage's joining length, so each is a passage of its own.
SMALL_TALK = [
    "Tell me more, I want to hear all about it, honestly!",
    "Really? I had no idea, nobody ever tells me anything.",
    "Good to know, I will keep that in mind for next time.",
    "The weather has been grey all week here, and windy too.",
    "I know what you mean, this week has been endless for me.",
]


@pytest.fixture
def sessions(settings):
    """Sessions described by who spoke only, where Elif and Bo say little but once their jobs."""
    settings.MEMSITE_EMBEDDINGS = "local"
    logs = NodeFactory(name="logs", description="")
    made = []
    for number in range(6):
        lines = [f"{speaker}: {line}" for line in SMALL_TALK for speaker in ("Elif", "Bo")]
        if number == 4:
            lines.insert(3, "Elif: These days I'm a pharmacist at a small firm in town, the hours are long.")
        if number == 1:
            lines.insert(5, "Bo: Big news, I'm a carpenter at the city council now.")
        content = "\n".join(lines).encode()
        made.append(
            DocumentFactory(
                parent=logs, name=f"session-{number}", description=f"Session {number}, Elif and Bo", content=content
            )
        )
    embed_pending()
    return logs, made


def test_a_question_naming_someone_finds_what_they_said_of_it_first(sessions):
    _, made = sessions
    top = retrieve(by=system(), query="What is Elif's occupation?", k=3)
    job = [hit for hit in top if "pharmacist" in hit.text]
    assert job and job[0].node_id == made[4].pk
    assert max(hit.named for hit in top) == job[0].named  # the best of hers by the rest of the question
    # Her short lines hold her name and nothing else of the question; each comes once at most.
    assert len({hit.text for hit in top}) == 3


def test_a_repeated_line_comes_once_before_its_repeats(sessions):
    line = f"Elif: {SMALL_TALK[0]}"
    texts = [hit.text for hit in retrieve(by=system(), query=line, k=4)]
    assert texts[0] == line and texts.count(line) == 1


def test_a_question_naming_a_node_ranks_its_subtree_by_the_rest(settings):
    settings.MEMSITE_EMBEDDINGS = "local"
    deploys = {}
    for name, day in (("tern", "Thursday"), ("quarry", "Monday"), ("brook", "Friday")):
        project = NodeFactory(name=name, description="")
        docs = NodeFactory(parent=project, name="docs", description="")
        deploys[name] = DocumentFactory(
            parent=docs,
            name="deploy.md",
            description="",
            content=f"# Deploying\n\nReleases go out every {day} after the standup.\n".encode(),
        )
    embed_pending()
    top = retrieve(by=system(), query="On which day of the week is quarry shipped?", k=1)[0]
    assert top.node_id == deploys["quarry"].pk and "Monday" in top.text


def test_the_named_ranking_keeps_to_the_scope(sessions):
    logs, made = sessions
    elsewhere = NodeFactory(name="elsewhere", description="")
    DocumentFactory(
        parent=elsewhere, name="cv.md", description="", content=b"Elif: I am a pharmacist, my occupation is pharmacy."
    )
    embed_pending()
    hits = retrieve(by=system(), query="What is Elif's occupation?", start=made[4], k=10)
    assert hits and {hit.node_id for hit in hits} == {made[4].pk}
    within = retrieve(by=system(), query="What is Elif's occupation?", start=logs, k=20)
    assert within and all(hit.path.startswith("/swarmstar/logs") for hit in within)


def test_without_embeddings_full_text_alone_ranks_a_named_question(settings, sessions):
    settings.MEMSITE_EMBEDDINGS = "off"
    hits = retrieve(by=system(), query="What is Elif's occupation?", k=5)
    assert hits and all(hit.named is None and hit.vector is None for hit in hits)


def test_a_word_naming_many_nodes_names_none_in_particular():
    projects = [NodeFactory(name=name, description="") for name in ("tern", "quarry", "brook", "gable")]
    docs = [NodeFactory(parent=project, name="docs", description="") for project in projects]
    tern = NodeFactory(parent=projects[0], name="Tern", description="")  # inside the other: one subtree
    named = named_nodes(["docs", "tern", "ferry"], scope=Scope())
    assert named == {"tern": [projects[0].path]} and tern.path.startswith(projects[0].path)
    assert named_nodes(["docs"], scope=Scope(path=projects[1].path)) == {"docs": [docs[1].path]}
