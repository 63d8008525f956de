"""The real-data benchmark's measures on cases made by hand: which units a passage covers, recall
at the unit and at the document, answers held, long queries cut, and the questions a bounded
run takes (benchmarks/realdata/measures.py, shape.py, report.py)."""

from benchmarks.realdata.bench import Asked
from benchmarks.realdata.measures import Found, Units, document_recall, holds_answer, tail, unit_recall
from benchmarks.realdata.report import side_by_side
from benchmarks.realdata.shape import Dataset, Document, Folder, Question, Unit, bounded, sample, untouched

UNITS = [Unit("a", "doc", 0, 10), Unit("b", "doc", 12, 20), Unit("c", "doc", 22, 30), Unit("d", "other", 0, 5)]


def question(gold, **fields):
    return Question(key=fields.pop("key", "q"), text="?", category="c", gold=tuple(gold), untouched=False, **fields)


def test_a_passage_covers_the_units_its_span_overlaps():
    units = Units(UNITS)
    assert units.overlapping("doc", 5, 13) == {"a", "b"}
    assert units.overlapping("doc", 10, 12) == set()  # between two messages
    assert units.overlapping("doc", 0, 12) == {"a"}  # ends where b starts: no character of b
    assert units.overlapping("doc", 29, 40) == {"c"}
    assert units.overlapping("doc", 0, 100) == {"a", "b", "c"}
    assert units.overlapping("other", 0, 1) == {"d"}
    assert units.overlapping("nowhere", 0, 100) == set()


def test_unit_recall_counts_the_gold_units_the_first_k_items_cover():
    found = [Found("doc", frozenset()), Found("doc", frozenset({"x", "a"})), Found("doc", frozenset({"b"}))]
    gold = question(["a", "b"])
    assert [unit_recall(gold, found, k) for k in (1, 2, 3, 10)] == [0.0, 0.5, 1.0, 1.0]
    assert unit_recall(gold, [], 5) == 0.0


def test_document_recall_counts_the_gold_documents_among_the_first_k_distinct_documents():
    found = [
        Found("one", frozenset()),
        Found("one", frozenset()),
        Found("two", frozenset()),
        Found("three", frozenset()),
    ]
    assert [document_recall(("two", "three"), found, k) for k in (1, 2, 3)] == [0.0, 0.5, 1.0]


def test_an_answer_is_held_when_one_accepted_form_is_whole():
    hall = question(["p"], accepted=(("G. Stanley Hall",), ("Stanley Hall",)))
    assert holds_answer("It was Stanley Hall, the psychologist.", hall)
    assert not holds_answer("It was Hall.", hall)
    two_parts = question(["p"], accepted=(("April 19", "sprint two"),))
    assert holds_answer("Sprint two now ends on April 19.", two_parts)
    assert not holds_answer("It ends on April 19.", two_parts)
    assert not holds_answer("anything", question(["p"]))  # no gold answer: nothing holds it


def test_a_long_query_keeps_its_last_lines():
    text = "Bart: first line\nAssistant: second line\nBart: the last line"
    assert tail(text, 100) == text
    assert tail(text, 30) == "Bart: the last line"
    assert tail("one two three four", 9) == "four"


def folders_set(folders: int, per_folder: int) -> Dataset:
    keys = [f"chat-{n:02d}" for n in range(folders)]
    documents = tuple(Document(f"{key}/session-1.md", "", "text") for key in keys)
    questions = tuple(
        Question(f"{key}:{i}", "?", "c", (f"{key}:u",), untouched("s", key), scope=key)
        for key in keys
        for i in range(per_folder)
    )
    return Dataset(
        name="s",
        where="user",
        folders=tuple(Folder(key, "") for key in keys),
        documents=documents,
        units=tuple(Unit(f"{key}:u", f"{key}/session-1.md", 0, 4) for key in keys),
        questions=questions,
        split="",
        by_folder=True,
    )


def test_the_untouched_slice_is_a_stable_fifth():
    keys = [f"chat-{n}" for n in range(2_000)]
    chosen = [key for key in keys if untouched("set", key)]
    assert 0.17 < len(chosen) / len(keys) < 0.23
    assert chosen == [key for key in keys if untouched("set", key)]
    assert chosen != [key for key in keys if untouched("other set", key)]


def test_a_bounded_set_asked_by_folder_keeps_whole_folders_and_a_fifth_untouched():
    dataset = folders_set(folders=40, per_folder=6)
    small = bounded(dataset, 20)
    assert len(small.questions) == 20
    assert sum(q.untouched for q in small.questions) == 4
    kept = {f.key for f in small.folders}
    assert kept == {q.scope for q in small.questions}
    assert len(kept) == 4  # the 4 untouched questions come from one folder, the 16 tuned from three (6, 6, 4)
    assert {d.folder for d in small.documents} == kept and {u.document for u in small.units} == {
        d.key for d in small.documents
    }
    assert bounded(dataset, 20) == small  # the same questions every run
    assert bounded(dataset, 1_000) is dataset


def test_a_sample_takes_a_fifth_from_the_untouched_slice():
    # Half of the pool is untouched: the sample's fifth is its own rule, not the pool's share.
    questions = [Question(f"q{n}", "?", "c", ("u",), untouched=n % 2 == 0) for n in range(50)]
    chosen = sample("s", questions, 10)
    assert len(chosen) == 10 and sum(q.untouched for q in chosen) == 2
    keys = {q.key for q in chosen}
    assert [q.key for q in chosen] == [q.key for q in questions if q.key in keys]  # in the set's order


def asked(key: str, untouched_: bool) -> Asked:
    q = Question(key, "?", "c", ("u",), untouched=untouched_)
    return Asked(q, (), {}, {}, retrieve_ms=0.0, tokens={}, one_prompt=0)


def test_cells_put_the_tuned_part_beside_the_untouched_slice():
    values = {"t1": 1.0, "t2": 0.0, "u1": 0.25, "none": None}
    rows = [asked("t1", False), asked("t2", False), asked("u1", True)]

    def measure(a):
        return values[a.question.key]

    assert side_by_side(rows, measure) == "50% / 25%"
    assert side_by_side(rows[:2], measure) == "50% / —"
    assert side_by_side([asked("none", False)], measure) == "— / —"
