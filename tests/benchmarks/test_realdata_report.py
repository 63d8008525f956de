"""The real-data benchmark's recall tables and verdicts on runs made by hand: a row per set and
category (and one for all of a set's categories when it has several), each cell the tuned part's
mean and the untouched slice's (benchmarks/realdata/report.py)."""

from dataclasses import replace

from benchmarks.realdata.ablation import VARIANTS
from benchmarks.realdata.bench import Asked, SetRun
from benchmarks.realdata.measures import Found
from benchmarks.realdata.node import Written
from benchmarks.realdata.report import DOCUMENT, UNIT, ablation_table, recall_table, verdicts
from benchmarks.realdata.shape import Dataset, Document, Question, Unit

MISS = Found("elsewhere", frozenset())
HIT4 = Found("q4", frozenset({"q4"}))


def asked(key: str, category: str, *, untouched: bool = False) -> Asked:
    """A question whose gold is unit `key` of document `key`. retrieve finds it first, but on the
    untouched slice not at all; retrieve's nodes first, but only after another passage of the
    document that missed the unit; BM25 over units second; BM25 over documents first; dense
    never."""
    hit = Found(key, frozenset({key}))
    rankings = {
        "retrieve": [MISS] if untouched else [hit],
        "retrieve nodes": [Found(key, frozenset()), hit],
        "BM25 units": [MISS, hit],
        "BM25 documents": [Found(key, frozenset())],
        "dense units": [MISS],
    }
    question = Question(key=key, text="?", category=category, gold=(key,), untouched=untouched)
    return Asked(question, (key,), rankings, best={}, retrieve_ms=1.0, tokens={}, one_prompt=0)


def run(name: str, *questions: Asked) -> SetRun:
    dataset = Dataset(name=name, where="user", folders=(), documents=(), units=(), questions=(), split="")
    written = Written(root="", folders={}, prefix="", nodes=0, seconds=0.0)
    return SetRun(dataset, written, passages=0, embedded=0, embed_seconds=0.0, dense_seconds=0.0, asked=list(questions))


RUNS = [
    run("chat", asked("q1", "a"), asked("q2", "a", untouched=True), asked("q3", "b")),
    run("code", asked("q4", "c")),
]
K = (1, 5, 10)
# Cells at each k, tuned / untouched: where the chat's category a and all its questions have
# both parts, and where (category b, the code set) the untouched slice has no question.
FIRST_BUT_UNTOUCHED, FIRST_TUNED = ["100% / 0%"] * 3, ["100% / —"] * 3
SECOND, SECOND_TUNED = ["0% / 0%", "100% / 100%", "100% / 100%"], ["0% / —", "100% / —", "100% / —"]
FIRST, NEVER, NEVER_TUNED = ["100% / 100%"] * 3, ["0% / 0%"] * 3, ["0% / —"] * 3


def test_the_unit_table_has_a_row_per_set_and_category_and_one_for_all():
    table = recall_table(RUNS, UNIT)
    assert table.title == (
        "Recall at the set's unit (a passage counts when its span overlaps a gold unit's), tuned / untouched"
    )
    methods = ("retrieve", "retrieve nodes", "BM25 units", "dense units")
    assert table.header == ("set", "category", "questions", *(f"{method} @{k}" for method in methods for k in K))
    assert table.rows == [
        ("chat", "a", "1 / 1", *FIRST_BUT_UNTOUCHED, *SECOND, *SECOND, *NEVER),
        ("chat", "b", "1 / 0", *FIRST_TUNED, *SECOND_TUNED, *SECOND_TUNED, *NEVER_TUNED),
        ("chat", "all", "2 / 1", *FIRST_BUT_UNTOUCHED, *SECOND, *SECOND, *NEVER),
        ("code", "c", "1 / 0", *FIRST_TUNED, *SECOND_TUNED, *SECOND_TUNED, *NEVER_TUNED),
    ]


def test_the_document_table_counts_every_method_at_the_document():
    table = recall_table(RUNS, DOCUMENT)
    assert table.title == (
        "Recall at the document (the gold units' documents among the first k distinct documents of a ranking), "
        "tuned / untouched"
    )
    methods = ("retrieve", "retrieve nodes", "BM25 units", "BM25 documents", "dense units")
    assert table.header == ("set", "category", "questions", *(f"{method} @{k}" for method in methods for k in K))
    assert table.rows == [
        ("chat", "a", "1 / 1", *FIRST_BUT_UNTOUCHED, *FIRST, *SECOND, *FIRST, *NEVER),
        ("chat", "b", "1 / 0", *FIRST_TUNED, *FIRST_TUNED, *SECOND_TUNED, *FIRST_TUNED, *NEVER_TUNED),
        ("chat", "all", "2 / 1", *FIRST_BUT_UNTOUCHED, *FIRST, *SECOND, *FIRST, *NEVER),
        ("code", "c", "1 / 0", *FIRST_TUNED, *FIRST_TUNED, *SECOND_TUNED, *FIRST_TUNED, *NEVER_TUNED),
    ]


def test_the_verdicts_weigh_retrieve_as_a_node_asks_against_the_best_baseline_at_5():
    # Units that are not whole documents are asked for as passages; documents as nodes.
    chat = run("chat", asked("q1", "a"), asked("q2", "a", untouched=True), asked("q3", "b"))
    chat.dataset = Dataset(
        name="chat",
        where="user",
        folders=(),
        documents=tuple(Document(key, "", "one\ntwo") for key in ("q1", "q2", "q3")),
        units=tuple(Unit(key, key, 0, 3) for key in ("q1", "q2", "q3")),
        questions=(),
        split="",
    )
    assert verdicts([chat, *RUNS[1:]]) == [
        "chat, R@5 at the unit: retrieve 67%, best baseline BM25 units 100% → BEHIND.",
        "chat, R@5 at the document: retrieve nodes 100%, best baseline BM25 units 100% → level.",
        "code, R@5 at the unit: retrieve nodes 100%, best baseline BM25 units 100% → level.",
        "code, R@5 at the document: retrieve nodes 100%, best baseline BM25 units 100% → level.",
    ]


def test_the_ablation_table_has_a_column_per_variant_and_a_row_for_every_set_together():
    with_pieces = [
        run("chat", replace(asked("q1", "a"), pieces_off={v: [Found("q1", frozenset({"q1"}))] for v in VARIANTS})),
        run("code", replace(asked("q4", "c"), pieces_off={v: [MISS] for v in VARIANTS} | {"no vectors": [HIT4]})),
    ]
    table = ablation_table(with_pieces)
    assert table.header == ("set", "questions", *VARIANTS)
    off = list(VARIANTS).index("no vectors")
    assert table.rows[0] == ("chat", "1 / 0", *["100% / —"] * len(VARIANTS))
    assert table.rows[1] == ("code", "1 / 0", *["100% / —" if v == "no vectors" else "0% / —" for v in VARIANTS])
    assert table.rows[2] == (
        "every set's questions",
        "2 / 0",
        *["100% / —" if v == "no vectors" else "50% / —" for v in VARIANTS],
    )
    assert table.rows[2][2 + off] == "100% / —"
