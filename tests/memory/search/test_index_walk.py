"""The walk uses the content index: memory whose descriptions say nothing about content."""

import re

import pytest

from memory import selectors, services
from memory.models import Search, SearchStep
from memory.search import walk
from memory.search.prompts import Finding
from memory.search.state import QuestionAnswer
from memsite.llm.models import LLMCall
from memsite.llm.tokens import offline_counter
from memsite.spaces.principals import Principal, token_principal
from memsite.spaces.services import token_create
from tests.factories import acting, default_space, system
from tests.memory.search.conftest import run_search
from tests.memory.search.tree import NOTHING, found, pick, shown

FACT = "Ana: I finally adopted a greyhound, she is called Pixel."
FILLER = [
    "Bo: Morning! Did you sleep well?",
    "Ana: Not really, the neighbours had a party.",
    "Bo: The weather is supposed to turn tomorrow.",
    "Ana: Then I will take the bus instead of cycling.",
]


@pytest.fixture
def sessions(db, internal):
    """Twelve sessions described only by who spoke and when; the fact is in session 7."""
    folder = services.node_create(
        parent=internal["swarmstar"], type="folder", name="logs", description="Conversation logs", by=system()
    )
    nodes = {}
    for number in range(1, 13):
        turns = [*FILLER, f"Bo: Session {number} ends here."]
        if number == 7:
            turns.insert(2, FACT)
        nodes[number] = services.node_create(
            parent=folder,
            type="document",
            name=f"session-{number:02}",
            description=f"Session {number}, Ana and Bo, 2026-03-{number:02}",
            content="\n".join(turns).encode(),
            by=system(),
        )
    return folder, nodes


@pytest.fixture
def shortcut(search_settings):
    search_settings.MEMSITE_SEARCH_SHORTCUT_HITS = 5


def test_offline_the_best_passages_lead_to_the_planted_fact(sessions, shortcut):
    _, nodes = sessions
    search = run_search(["What is the greyhound called?"], output="node")
    assert search.status == Search.Status.DONE and search.ended_because == "answered", search.ended_because
    [node] = search.result["nodes"]
    assert node["id"] == nodes[7].pk and node["path"] == "/swarmstar/logs/session-07"
    assert node["found_by"] == "reading"
    text = selectors.node_content(node=nodes[7]).decode()
    [passage] = node["passages"]
    assert FACT in text[passage["start"] : passage["end"]]
    assert search.llm_calls <= 3


def test_a_node_search_that_confirms_nothing_lists_the_index_s_best_nodes(sessions, llm):
    folder, nodes = sessions
    llm.script(pick(None))  # the router gives up at once: nothing read, nothing confirmed
    search = run_search(["What is the greyhound called?"], output="node", start_node=folder)
    assert search.status == Search.Status.DONE and search.result["answers"][0]["answer"] == ""
    first, *rest = search.result["nodes"]
    assert first["id"] == nodes[7].pk and first["found_by"] == "index"
    assert len(rest) <= 2 and all(node["found_by"] == "index" for node in rest)
    text = selectors.node_content(node=nodes[7]).decode()
    assert any(FACT in text[passage["start"] : passage["end"]] for passage in first["passages"])


def test_a_node_search_that_leaves_a_question_open_adds_the_index_s_best_nodes_after_its_own(sessions, llm):
    folder, nodes = sessions
    llm.script(pick("session-02"), found("Bo: The weather is supposed to turn tomorrow.", complete=False), pick(None))
    search = run_search(["What is the greyhound called?"], output="node", start_node=folder)

    assert search.status == Search.Status.DONE and search.result["open_questions"]
    listed = [(node["id"], node["found_by"]) for node in search.result["nodes"]]
    # Full text alone ranks here: session-07 is the one other node holding the question's words.
    assert listed == [(nodes[2].pk, "reading"), (nodes[7].pk, "index")]


def test_a_node_search_that_answers_every_question_lists_only_what_it_read(sessions, llm):
    folder, nodes = sessions
    llm.script(pick("session-07"), found("She is called Pixel.", complete=True))
    search = run_search(["What is the greyhound called?"], output="node", start_node=folder)

    assert search.ended_because == "answered"
    assert [(node["id"], node["found_by"]) for node in search.result["nodes"]] == [(nodes[7].pk, "reading")]


def test_a_node_search_answered_in_other_words_lists_the_index_s_best_nodes(sessions, llm, search_settings):
    search_settings.MEMSITE_SEARCH_FIRST_READ_TOKENS = 1_500
    folder, nodes = sessions
    llm.script(found("The greyhound's name is Pixel.", complete=True))  # quotes no passage: credits no node
    search = run_search(["What is the greyhound called?"], output="node", start_node=folder)

    assert search.ended_because == "answered" and search.result["answers"][0]["node_ids"] == []
    first, *_ = search.result["nodes"]
    assert (first["id"], first["found_by"]) == (nodes[7].pk, "index")


def test_a_cancelled_node_search_lists_no_index_nodes(sessions, llm):
    folder, _ = sessions
    search = services.search_start(
        by=system(), questions=["What is the greyhound called?"], start_node=folder, output="node"
    )
    services.search_cancel(search=search, user=None)
    search.refresh_from_db()
    assert search.status == Search.Status.CANCELLED and search.result["nodes"] == []


def test_output_answer_cites_offsets_and_lists_no_nodes(sessions, shortcut):
    _, nodes = sessions
    search = run_search(["What is the greyhound called?"], output="answer")
    [answer] = search.result["answers"]
    assert "Pixel" in answer["answer"] and search.result["nodes"] == []
    text = selectors.node_content(node=nodes[7]).decode()
    assert [citation["node"] for citation in answer["citations"]] == [nodes[7].pk]
    citation = answer["citations"][0]
    assert "Pixel" in text[citation["start"] : citation["end"]]


def test_a_folder_s_options_come_best_passage_first_with_the_passage_shown(sessions, llm):
    folder, nodes = sessions
    llm.script(pick(None))
    run_search(["What is the greyhound called?"], start_node=folder)
    numbers = shown(llm.requests[0])
    assert numbers["session-07"] == 1
    listed = llm.requests[0].messages[-1]["content"]
    assert "session-07: Session 7, Ana and Bo, 2026-03-07 | matched: " in listed and "Pixel" in listed
    step = SearchStep.objects.get(kind=SearchStep.Kind.ROUTE)
    first = step.detail["candidates"][0]
    assert first["node"] == nodes[7].pk and first["score"] > 0 and "greyhound" in first["snippet"]
    assert all(candidate["score"] is None for candidate in step.detail["candidates"][1:])


def test_the_shortcut_is_offered_once_before_the_tree(sessions, llm, shortcut):
    _, nodes = sessions
    llm.script(pick(None), pick(None))
    search = run_search(["What is the greyhound called?"])
    first, second = llm.requests[0].messages[-1]["content"], llm.requests[1].messages[-1]["content"]
    assert "/swarmstar/logs/session-07:" in first and "swarmstar" in shown(llm.requests[1])
    assert "session-07" not in second
    assert search.steps.first().detail["candidates"][0]["node"] == nodes[7].pk


class _Forgetful(dict):
    """A query cache that keeps nothing: every retrieval embeds its query."""

    def update(self, *args, **kwargs) -> None:
        pass


@pytest.fixture
def server_embeddings(search_settings, openai_gateway, monkeypatch):
    search_settings.MEMSITE_LLM_PROVIDER = "offline"  # the walk's own calls; the server embeds
    search_settings.MEMSITE_EMBEDDINGS = "server"
    monkeypatch.setattr("memory.index.retrieve.query_cache", _Forgetful())


@pytest.fixture(params=[False, True], ids=["session", "token"])
def asker(request, user) -> Principal:
    """Who a search is for: a user, through a session or through a token."""
    return (
        token_principal(token_create(member=user, space=default_space(), name="node").token)
        if request.param
        else acting(user)
    )


def _embeddings_charged(asker: Principal, question: str, **options) -> set[tuple[int, int, int | None]]:
    """The (user, space, token) of each query embedding a search of `asker`'s made."""
    search = services.search_start(by=asker, questions=[question], output="node", **options)
    services.search_run(search_id=search.pk)
    return set(LLMCall.objects.filter(purpose="embed").values_list("user_id", "space_id", "token_id"))


def _charged_to(asker: Principal) -> set[tuple[int | None, int, int | None]]:
    return {(asker.user_id, default_space().pk, asker.token_id)}


# Answered from the shortcut's passages; and exhausted, the result then the index's best nodes.
@pytest.mark.parametrize("question", ["What is the greyhound called?", "Which boat did Bo sail?"])
def test_the_index_s_query_embeddings_are_charged_to_the_search_s_maker(
    sessions, shortcut, server_embeddings, asker, question
):
    assert _embeddings_charged(asker, question) == _charged_to(asker)


def test_the_full_text_tool_charges_the_query_s_embedding_to_the_search_s_maker(
    sessions, search_settings, openai_gateway, monkeypatch, asker
):
    search_settings.MEMSITE_EMBEDDINGS = "server"
    monkeypatch.setattr("memory.index.retrieve.query_cache", {})
    from memory.search.tools import QueryArguments, ToolInput, full_text_search

    folder, _ = sessions
    full_text_search(
        ToolInput(by=asker, node=folder, arguments=QueryArguments(query="greyhound"), questions=[], answers=[])
    )

    assert set(LLMCall.objects.filter(purpose="embed").values_list("user_id", "space_id", "token_id")) == _charged_to(
        asker
    )


def test_the_full_text_tool_finds_content(sessions, llm, search_settings):
    folder, nodes = sessions
    search_settings.MEMSITE_SEARCH_TOOLS = True
    from memory.search.tools import QueryArguments, ToolInput, full_text_search

    found = full_text_search(
        ToolInput(by=system(), node=folder, arguments=QueryArguments(query="greyhound"), questions=[], answers=[])
    )
    assert found.nodes == [nodes[7].pk] and "greyhound" in found.text


def test_the_findings_of_one_reading_are_cited_from_one_read_of_the_node(sessions, django_assert_num_queries):
    _, nodes = sessions
    entries = [QuestionAnswer(question="Who adopted a greyhound?"), QuestionAnswer(question="What is it called?")]
    findings = [
        Finding(question=1, answer="Ana adopted a greyhound."),
        Finding(question=2, answer="She is called Pixel.", complete=True),
    ]
    with django_assert_num_queries(1):
        walk._apply_findings(entries, findings, walk.Source(nodes[7]))
    text = selectors.node_content(node=nodes[7]).decode()
    for entry in entries:
        [citation] = entry.citations
        assert citation.node == nodes[7].pk and text[citation.start : citation.end] in FACT


def test_an_option_with_no_description_is_entered_by_its_name(sessions, llm):
    folder, nodes = sessions
    services.node_update(node=nodes[7], description="", by=system())
    llm.script(pick("session-07"))
    search = run_search(["What is the greyhound called?"], start_node=folder, max_llm_calls=1)
    step = search.steps.get(number=1)
    assert step.detail["chosen"] == nodes[7].pk and step.detail["candidates"][0]["name"] == "session-07"
    assert step.summary == "Entered session-07."


PART = re.compile(r"\(part (\d+) of (\d+)\)")


SPEAKERS = ("Bo", "Cy")


@pytest.fixture
def diary(db, internal, search_settings):
    """A dialogue of many short turns, read in chunks of 40 tokens; the fact is its first turn."""
    search_settings.MEMSITE_SEARCH_READ_TOKENS = 40
    lines = [f"{SPEAKERS[n % 2]}: Note {n}: the kettle whistled at {n} past seven." for n in range(40)]
    lines.insert(0, FACT)
    return services.node_create(
        parent=internal["swarmstar"],
        type="document",
        name="diary.md",
        description="Bo's notes",
        content="\n".join(lines).encode(),
        by=system(),
    )


def read_text(request) -> str:
    """What a reading request shows of the node, without the data block's closing line."""
    return request.messages[1]["content"].rsplit("\n</data", 1)[0]


def test_a_long_node_is_read_best_passages_first_then_every_chunk_in_turn(diary, llm):
    # The second question's words are nowhere in the node: once the first is answered, the
    # open questions alone would find no best passages, and the chunks would shift by one.
    llm.script(found("She is called Pixel.", question=1), NOTHING)
    run_search(["What is the greyhound called?", "Which museum opens on Sundays?"], start_node=diary, max_llm_calls=2)
    first, second = (read_text(request) for request in llm.requests)
    (part, total), (next_part, next_total) = PART.search(first).groups(), PART.search(second).groups()
    assert (part, next_part) == ("1", "2") and total == next_total
    assert FACT in first and "Content:\n# diary.md" not in first
    assert "Content:\n# diary.md" in second  # the text's own first chunk, none skipped


def test_a_partial_finding_read_again_in_its_own_chunk_is_kept_once(diary, llm):
    llm.script(found("She is called Pixel.", complete=False), found("She is called Pixel.", complete=False))
    search = run_search(["What is the greyhound called?"], start_node=diary, max_llm_calls=2)
    assert FACT in read_text(llm.requests[0]) and FACT in read_text(llm.requests[1])
    assert search.result["answers"][0]["answer"] == "She is called Pixel."


def test_the_best_passages_fill_one_reading_budget(db, internal, llm, search_settings):
    search_settings.MEMSITE_SEARCH_READ_TOKENS = 300
    lines = [f"{SPEAKERS[n % 2]}: Walk {n}: the greyhound ran round the {n}th tree." for n in range(60)]
    walks = services.node_create(
        parent=internal["swarmstar"],
        type="document",
        name="walks.md",
        description="",
        content="\n".join(lines).encode(),
        by=system(),
    )
    llm.script(NOTHING)
    run_search(["Where did the greyhound run?"], start_node=walks, max_llm_calls=1)
    best = read_text(llm.requests[0]).split("Content:\n", 1)[1]
    assert best.count("[characters ") > 8 and offline_counter().count(best) <= 300


def test_a_long_node_s_best_passages_are_charged_to_the_search_s_maker(diary, server_embeddings, asker):
    charged = _embeddings_charged(asker, "What is the greyhound called?", start_node=diary, max_llm_calls=1)
    assert charged == _charged_to(asker)
