from memory import selectors, services
from memory.models import Node, Search
from memory.services.demo import demo_memory_seed
from tests.factories import default_space, system
from tests.memory.search.conftest import run_search


def test_offline_search_finds_the_demo_status_codes(db):
    demo_memory_seed(by=system())
    search = run_search(["Which HTTP status code means a conflicting resource?"], output="node")
    assert search.status == Search.Status.DONE, search.ended_because
    names = [node["name"] for node in search.result["nodes"]]
    assert "http-status-codes.md" in names


def test_numbered_lines_in_the_context_are_not_taken_for_options(db):
    demo_memory_seed(by=system())
    context = "My plan:\n1. Read the notes on HTTP\n2. Then read them again\n3. And once more"
    search = run_search(["Which HTTP status code means a conflicting resource?"], context=context, output="node")

    assert search.status == Search.Status.DONE and search.ended_because == "answered"
    assert "http-status-codes.md" in [node["name"] for node in search.result["nodes"]]


def test_the_demo_search_is_answered_from_the_status_codes_note(db):
    from memory.services.demo import DEMO_SEARCH_QUESTIONS

    demo_memory_seed(by=system())
    search = run_search(DEMO_SEARCH_QUESTIONS)

    [answer] = search.result["answers"]
    assert search.ended_because == "answered" and answer["complete"]
    assert "409 | conflicts with the current state" in answer["answer"]
    assert search.steps.count() <= 5


def test_an_offline_answer_quotes_the_text_not_its_keyword_description(db):
    # A description made offline starts with the text's keywords: read as part of the text it
    # holds every word of a question, and was quoted as the answer.
    demo_memory_seed(by=system())
    services.node_create(
        parent=selectors.node_internal_folder(space=default_space(), name="references"),
        type="document",
        name="team.md",
        description="ana, leads, payments, runs, data \u2014 Bo runs the data pipeline.",
        content=b"# Team\n\nBo runs the data pipeline.\n\nAna leads payments.",
        by=system(),
    )
    search = run_search(["Who leads payments?"])

    [answer] = search.result["answers"]
    assert answer["answer"] == "Ana leads payments."


def test_an_offline_answer_to_when_says_the_day_of_its_evidence_and_cites_it(db):
    demo_memory_seed(by=system())
    text = "Date: 2023-05-08\n\nAna: We moved the office to Porto yesterday.\n\nBo: Good, the old one was cramped."
    session = services.node_create(
        parent=selectors.node_internal_folder(space=default_space(), name="references"),
        type="document",
        name="session-17.md",
        description="A session of Ana and Bo",
        content=text.encode(),
        by=system(),
    )
    search = run_search(["When did Ana move the office to Porto?"])

    [answer] = search.result["answers"]
    quote = "Ana: We moved the office to Porto yesterday."
    assert answer["answer"] == f"2023-05-08: {quote}"
    at = text.index(quote)
    assert {"node": session.pk, "start": at, "end": at + len(quote), "date": "2023-05-08"} in answer["citations"]


def test_the_best_passages_read_first_answer_in_one_call_and_cite_their_node(db, settings):
    from memory.services.demo import DEMO_SEARCH_QUESTIONS

    settings.MEMSITE_SEARCH_FIRST_READ_TOKENS = 1_500
    demo_memory_seed(by=system())
    search = run_search(DEMO_SEARCH_QUESTIONS)

    [answer] = search.result["answers"]
    assert search.ended_because == "answered" and search.llm_calls == 1
    assert "409 | conflicts with the current state" in answer["answer"]
    [node] = Node.objects.filter(pk__in=answer["node_ids"])
    assert node.name == "http-status-codes.md" and {c["node"] for c in answer["citations"]} == {node.pk}


def test_one_reading_of_the_best_passages_finds_every_node_an_answer_quotes(db, settings):
    settings.MEMSITE_SEARCH_FIRST_READ_TOKENS = 1_500
    folder = selectors.node_internal_folder(space=default_space(), name="user")
    sessions = {
        name: services.node_create(
            parent=folder, type="document", name=name, description="A session", content=text.encode(), by=system()
        )
        for name, text in [
            ("session-1.md", "Ana: I adopted a greyhound called Pixel.\n\nBo: What a lovely name."),
            ("session-2.md", "Bo: I adopted a greyhound too, called Comet.\n\nAna: They should meet."),
            ("session-3.md", "Ana: The office moves to Porto in May.\n\nBo: Good, the old one was cramped."),
        ]
    }
    search = run_search(["What are the adopted greyhounds called?"], output="node")

    assert search.ended_because == "answered" and search.llm_calls == 1
    found = [node["name"] for node in search.result["nodes"] if node["found_by"] == "reading"]
    assert sorted(found) == ["session-1.md", "session-2.md"]
    first = search.steps.get(number=1)
    assert first.kind == "read" and set(first.detail["answered"]) == {"What are the adopted greyhounds called?"}
    assert sessions["session-3.md"].pk not in search.result["answers"][0]["node_ids"]


def test_a_node_the_best_passages_showed_whole_is_not_read_again(db, settings):
    settings.MEMSITE_SEARCH_FIRST_READ_TOKENS = 1_500
    folder = selectors.node_internal_folder(space=default_space(), name="user")
    for name, text in [
        ("session-1.md", "Ana: I adopted a greyhound called Pixel.\n\nBo: A greyhound needs long walks."),
        ("session-2.md", "Ana: Pixel sleeps all day.\n\nBo: The office moves to Porto in May."),
    ]:
        services.node_create(
            parent=folder, type="document", name=name, description="A session", content=text.encode(), by=system()
        )
    search = run_search(["Which vet does Pixel the greyhound see, and how often?"])

    # Nothing says which vet: the walk goes on past the best passages. They showed session-1
    # whole, and session-2 in part: session-2 is read, session-1 is not read again.
    reads = list(search.steps.filter(kind="read").values_list("node__name", flat=True))
    assert reads == [None, "session-2.md"]
