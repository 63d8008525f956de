"""The retrieval benchmark's corpus, its measures and its oracle (benchmarks/corpora/retrievalcorpus.py,
benchmarks/measures/retrieval.py, benchmarks/kit/oracle.py)."""

import re

import pytest

from benchmarks.corpora import retrievalcorpus, searchtree
from benchmarks.corpora.retrievalcorpus import Evidence, Question, Sizes, generate
from benchmarks.kit.oracle import Oracle as SearchOracle
from benchmarks.kit.oracle import Target, shown_route
from benchmarks.measures.retrieval import BM25, Oracle, contains, recall, token_f1, tokens
from memory.search import prompts

SMALL = Sizes(
    sessions=12,
    people=4,
    notes=6,
    projects=1,
    tree_nodes=60,
    quotas=(("single", 6), ("multi", 3), ("temporal", 5), ("unanswerable", 4), ("files", 5), ("tree", 3)),
)


@pytest.fixture(scope="module")
def corpus():
    return generate(3, SMALL)


def test_the_same_seed_makes_the_same_corpus(corpus):
    again = generate(3, SMALL)
    assert [(d.path, d.text) for d in again.docs] == [(d.path, d.text) for d in corpus.docs]
    assert again.questions == corpus.questions
    assert [(d.path, d.text) for d in generate(4, SMALL).docs] != [(d.path, d.text) for d in corpus.docs]


def test_every_category_is_asked_and_descriptions_say_nothing_of_content(corpus):
    assert all(corpus.by_category()[category] for category in retrievalcorpus.CATEGORIES)
    for doc in corpus.docs:
        if doc.path.startswith(retrievalcorpus.LOGS + "/"):
            assert re.fullmatch(r"Session \d+, \w+ and \w+, \d{4}-\d\d-\d\d", doc.description)
        elif not doc.path.startswith("/references/"):
            assert doc.description == ""


def test_evidence_is_the_line_that_holds_the_answer(corpus):
    texts = {doc.path: doc.text for doc in corpus.docs}
    for question in corpus.questions:
        if question.category == "unanswerable":
            assert question.evidence == () and question.answer == ""
            continue
        assert question.evidence and all(part in question.answer for part in question.parts)
        for evidence in question.evidence:
            span = texts[evidence.path][evidence.start : evidence.end]
            assert evidence.says in span
            assert (
                span.splitlines()[0] in texts[evidence.path].splitlines()[evidence.line]
            )  # the tree's: a sentence of it
        if question.category != "tree":  # paraphrased: the question does not give the answer away
            assert not any(part.lower() in question.text.lower() for part in question.parts)


def test_nobody_says_what_an_unanswerable_question_asks(corpus):
    kinds = {**retrievalcorpus.NUMBERS, **retrievalcorpus.DATES}
    sessions = "\n".join(doc.text for doc in corpus.docs if doc.path.startswith(retrievalcorpus.LOGS))
    checked = 0
    for question in corpus.by_category()["unanswerable"]:
        for person in retrievalcorpus.PEOPLE:
            for kind in kinds.values():
                if question.text in {asked.format(p=person) for asked in kind.asked}:
                    said = "|".join(re.escape(template).replace(re.escape("{v}"), ".+") for template in kind.said)
                    assert not re.search(rf"^{person}: (?:{said})$", sessions, re.MULTILINE)
                    checked += 1
    assert checked


def test_bm25_ranks_the_planted_fact_first():
    documents = [
        "Ana: the weather has been grey all week. Bo: same here.",
        "Ana: we brought home a beagle, we're calling her Pickle. Bo: lovely!",
        "Bo: my neighbour's dog barked all night. Ana: the dog again?",
        "Ana: the beagle at the park was cute.",
    ]
    index = BM25(documents)
    assert index.top("Is Pickle the name of Ana's beagle?", 1) == [1]
    assert index.top("dog", 5) == [2]  # only documents sharing a word are ranked
    assert index.idf("pickle") > index.idf("beagle") > index.idf("ana")


def test_bm25_prefers_the_shorter_of_two_documents_with_the_word_as_often():
    index = BM25(["tern port 8081", "tern port 8081 and a long tail of unrelated words about the weather"])
    assert index.top("port", 2) == [0, 1]


def test_the_tokenizer_splits_code_and_drops_function_words():
    assert tokens("What is max_retries of the Tern client?") == ["max", "retries", "tern", "client"]


def test_recall_at_k():
    assert recall(["a", "b"], ["x", "a", "y", "b"], 2) == 0.5
    assert recall(["a", "b"], ["x", "a", "y", "b"]) == 1.0
    assert recall(["a", "a"], ["a"], 1) == 1.0
    assert recall(["b"], ["a", "b"], 1) == 0.0
    with pytest.raises(ValueError):
        recall([], ["a"], 1)


def test_token_f1_and_containment():
    assert token_f1("Pickle", "pickle.") == 1.0
    assert token_f1("The answer is Pickle", "Pickle") == pytest.approx(0.5)  # "answer is pickle": precision 1/3
    assert token_f1("", "Pickle") == 0.0
    assert contains("They are called Pickle and Miso.", ("Miso", "pickle"))
    assert not contains("Pickles and Miso", ("Pickle", "Miso"))  # whole words
    assert not contains("anything", ())


def test_the_oracle_routes_to_each_piece_of_evidence_and_answers_once_all_are_read():
    first, second = "/swarmstar/logs/session-001", "/swarmstar/logs/session-002"
    texts = {first: "Ana: hi\nAna: a beagle called Pickle\n", second: "Ana: a cat called Miso\n"}
    evidence = (Evidence(first, 1, 8, 34, "Pickle"), Evidence(second, 0, 0, 22, "Miso"))
    question = Question("What are Ana's two pets called?", "multi", "Pickle and Miso", ("Pickle", "Miso"), evidence)
    ids = {first: "memory_" + "1" * 32, second: "memory_" + "2" * 32}
    oracle = Oracle([question], ids, texts)
    asked = {"questions": [question.text], "context": "", "notes": []}

    def route(where: str, labels: list[str]) -> dict:
        options = [prompts.Option(str(number), label) for number, label in enumerate(labels)]
        return oracle.route(prompts.route_prompt(**asked, where=where, options=options).messages)

    hits = route("the passages that best match the questions", ["/user/notes/todo.md: milk", f"{second}: a cat"])
    assert hits == {"choice": 2, "unviable": [1], "reason": "On the way to the evidence."}
    assert route("the top of the tree", ["user: the user", "swarmstar: data"])["choice"] == 2
    assert route("logs", ["session-009 | matched: a dog", f"{second.rsplit('/')[-1]} | matched: a cat"])["choice"] == 2
    assert route("src", ["tern", "tests"]) == {"choice": None, "unviable": [1, 2], "reason": "Nothing here."}

    def read(path: str) -> dict:
        return oracle.read_node(
            prompts.read_prompt(**asked, node_line=f"[{ids[path]}] {path}", text=texts[path]).messages
        )

    assert read(second)["findings"] == [{"question": 1, "answer": "Miso", "complete": False}]
    assert read(first)["findings"] == [{"question": 1, "answer": "Pickle and Miso", "complete": True}]


def _route_messages(where: str, labels: list[str], questions: list[str]) -> list[dict]:
    options = [prompts.Option(str(number), label) for number, label in enumerate(labels)]
    return prompts.route_prompt(questions=questions, context="", notes=[], where=where, options=options).messages


def test_a_route_prompt_names_its_options_and_the_shortcut_names_them_by_path():
    folder = shown_route(
        _route_messages(
            "logs",
            ["session-001: Session 1 | matched: Ana: hi", "session-002 | matched: Bo: a: b", "notes"],
            ["a?", "b?"],
        )
    )
    assert (folder.where, folder.asked, folder.names) == (
        "logs",
        ["a?", "b?"],
        {1: "session-001", 2: "session-002", 3: "notes"},
    )
    assert not folder.shortcut
    best = "the passages that best match the questions"
    shortcut = shown_route(
        _route_messages(best, ["/user/notes/todo.md: milk: 2", "/projects/tern/README.md: x | matched: y"], ["a?"])
    )
    assert shortcut.names == {1: "/user/notes/todo.md", 2: "/projects/tern/README.md"} and shortcut.shortcut
    assert not shown_route(_route_messages(best, [], ["a?"])).shortcut


def test_the_search_oracle_walks_the_answers_path_and_reads_only_the_answer():
    path = "/references/search-bench-60/storage/atlas-weight.md"
    question = searchtree.Question("What was the weight of atlas?", "The weight of atlas was 12 kg.", path, 2)
    node_id = "memory_" + "3" * 32
    oracle = SearchOracle([Target(question, node_id, ("search-bench-60", "storage", "atlas-weight.md"))])

    def route(where: str, labels: list[str]) -> dict:
        return oracle.route(_route_messages(where, labels, [question.text]))

    shortcut = route("the passages that best match the questions", ["/references/x/y.md: a", f"{path}: the weight"])
    assert shortcut == {"choice": 2, "unviable": [], "reason": "The answer's passage."}
    folder = route("search-bench-60", ["network: Notes on network.", "storage: Notes on storage. | matched: weight"])
    assert folder == {"choice": 2, "unviable": [1], "reason": "storage leads to the answer."}
    assert route("network", ["other.md: Other."])["choice"] is None and oracle.unparsed == 1
    read = prompts.read_prompt(
        questions=[question.text], context="", notes=[], node_line=f"[{node_id}] {path}", text="x"
    ).messages
    assert oracle.read_node(read)["findings"] == [{"question": 1, "answer": question.answer, "complete": True}]
    elsewhere = prompts.read_prompt(
        questions=[question.text], context="", notes=[], node_line=f"[memory_{'4' * 32}] /x", text="x"
    ).messages
    assert oracle.read_node(elsewhere)["findings"] == []
