"""The tables of a run: per set and category, the tuned part and the untouched slice side by
side in each cell (`tuned / untouched`), then costs, searches and answers; and each question's
outcome as a row of JSON."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from benchmarks.kit.harness import Stats, TablesReport, TitledTable
from benchmarks.measures.retrieval import mean, recall
from benchmarks.realdata.ablation import VARIANTS
from benchmarks.realdata.bench import DEPTH, METHODS, Asked, SetRun
from benchmarks.realdata.measures import KS, document_recall, holds_answer, unit_recall
from benchmarks.realdata.shape import Dataset

# A whole document covers no unit of its own.
UNIT_METHODS = ("retrieve", "retrieve nodes", "BM25 units", "dense units")
OURS = ("retrieve", "retrieve nodes")
# Whose best item is a passage or a unit: the best node is a whole document, which holds more.
ANSWER_METHODS = ("retrieve", "BM25 units", "dense units")


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.0f}%"


def _num(value: float | None) -> str:
    return "—" if value is None else (f"{value:,.0f}" if value >= 100 else f"{value:.1f}")


def parts(asked: Sequence[Asked]) -> tuple[list[Asked], list[Asked]]:
    return [a for a in asked if not a.question.untouched], [a for a in asked if a.question.untouched]


def side_by_side(asked: Sequence[Asked], measure: Callable[[Asked], float | None], shown=_pct) -> str:
    """The measure's mean over the tuned part, then over the untouched slice."""
    cells = []
    for part in parts(asked):
        values = [value for a in part if (value := measure(a)) is not None]
        cells.append(shown(mean(values)))
    return " / ".join(cells)


def counts(asked: Sequence[Asked]) -> str:
    tuned, untouched = parts(asked)
    return f"{len(tuned)} / {len(untouched)}"


def groups(run: SetRun) -> list[tuple[str, list[Asked]]]:
    categories = sorted({a.question.category for a in run.asked})
    rows = [(category, [a for a in run.asked if a.question.category == category]) for category in categories]
    return rows + [("all", run.asked)] if len(categories) > 1 else rows


@dataclass(frozen=True)
class Level:
    """What recall is counted at: the set's unit, or the document; the methods ranked there."""

    name: str
    title: str
    methods: tuple[str, ...]
    recall_at: Callable[[Asked, str, int], float]  # of a question, by a method, at k
    ours: Callable[[Dataset], str]  # which of OURS a node wanting this level asks for


UNIT = Level(
    "unit",
    "Recall at the set's unit (a passage counts when its span overlaps a gold unit's), tuned / untouched",
    UNIT_METHODS,
    lambda a, method, k: unit_recall(a.question, a.rankings[method], k),
    lambda dataset: "retrieve nodes" if dataset.whole_documents else "retrieve",
)
DOCUMENT = Level(
    "document",
    "Recall at the document (the gold units' documents among the first k distinct documents of a ranking), "
    "tuned / untouched",
    METHODS,
    lambda a, method, k: document_recall(a.gold_documents, a.rankings[method], k),
    lambda dataset: "retrieve nodes",
)


def recall_table(runs: Sequence[SetRun], level: Level) -> TitledTable:
    table = TitledTable(
        level.title, ("set", "category", "questions", *(f"{m} @{k}" for m in level.methods for k in KS))
    )
    for run in runs:
        for category, asked in groups(run):
            cells = [
                side_by_side(asked, lambda a, m=method, k=k: level.recall_at(a, m, k))
                for method in level.methods
                for k in KS
            ]
            table.rows.append((run.dataset.name, category, counts(asked), *cells))
    return table


def ablation_table(runs: Sequence[SetRun]) -> TitledTable:
    """R@5 of retrieve at the set's unit with each piece of its ranking off in turn, per set and
    over every set's questions together (a piece earns its place there, not on one set)."""
    table = TitledTable(
        "Each piece of retrieve's ranking off in turn: recall at the set's unit @5 (passages, or the best nodes "
        "where the unit is a whole document), tuned / untouched",
        ("set", "questions", *VARIANTS),
    )

    def row(name: str, asked: Sequence[Asked]) -> tuple[str, ...]:
        cells = (side_by_side(asked, lambda a, v=v: unit_recall(a.question, a.pieces_off[v], 5)) for v in VARIANTS)
        return (name, counts(asked), *cells)

    measured = [run for run in runs if all(a.pieces_off for a in run.asked)]
    table.rows.extend(row(run.dataset.name, run.asked) for run in measured)
    if len(measured) > 1:
        table.rows.append(row("every set's questions", [a for run in measured for a in run.asked]))
    return table


def cost_table(runs: Sequence[SetRun]) -> TitledTable:
    table = TitledTable(
        "Tokens and latency of /api/retrieve/ (tokens of the hits' snippets; one prompt: the question and every "
        "candidate document), tuned / untouched",
        ("set", "questions", "top 5 tokens", "top 10 tokens", "one prompt tokens", "retrieve p50 ms", "p95 ms"),
    )
    for run in runs:
        millis = [Stats.of([a.retrieve_ms for a in part]) for part in parts(run.asked)]
        table.rows.append(
            (
                run.dataset.name,
                counts(run.asked),
                side_by_side(run.asked, lambda a: a.tokens[5], _num),
                side_by_side(run.asked, lambda a: a.tokens[10], _num),
                side_by_side(run.asked, lambda a: a.one_prompt, _num),
                " / ".join(f"{stats.p50:.0f}" if stats.count else "—" for stats in millis),
                " / ".join(f"{stats.p95:.0f}" if stats.count else "—" for stats in millis),
            )
        )
    return table


def search_table(runs: Sequence[SetRun]) -> TitledTable:
    table = TitledTable(
        "Offline searches, output=node, on a sample: evidence recall of the nodes returned (documents), beside "
        "retrieve's and BM25's over documents on the same questions; tuned / untouched, costs over both",
        (
            "set",
            "questions",
            "search recall",
            "retrieve nodes @5",
            "BM25 documents @5",
            "nodes returned",
            "LLM calls, mean",
            "tokens, mean",
            "wall p50 ms",
            "ended because",
        ),
    )
    for run in runs:
        asked = [a for a in run.asked if "node" in a.searches]
        if not asked:
            continue
        searched = [a.searches["node"] for a in asked]
        ended: dict[str, int] = {}
        for search in searched:
            ended[search.ended] = ended.get(search.ended, 0) + 1
        table.rows.append(
            (
                run.dataset.name,
                counts(asked),
                side_by_side(asked, lambda a: recall(a.gold_documents, a.searches["node"].documents)),
                side_by_side(asked, lambda a: document_recall(a.gold_documents, a.rankings["retrieve nodes"], 5)),
                side_by_side(asked, lambda a: document_recall(a.gold_documents, a.rankings["BM25 documents"], 5)),
                _num(mean([len(s.documents) for s in searched])),
                _num(mean([s.llm_calls for s in searched])),
                _num(mean([s.tokens for s in searched])),
                f"{Stats.of([s.wall_ms for s in searched]).p50:,.0f}",
                ", ".join(f"{why} {n}" for why, n in sorted(ended.items(), key=lambda item: -item[1])),
            )
        )
    return table


def answer_table(runs: Sequence[SetRun]) -> TitledTable:
    table = TitledTable(
        "Gold answer contained: the offline search's answer (output=answer) beside the best item of each ranking "
        "(retrieve: its first passage; BM25 and dense: their first unit), tuned / untouched",
        ("set", "questions", "search answer", *(f"{method} best" for method in ANSWER_METHODS)),
    )
    for run in runs:
        asked = [a for a in run.asked if "answer" in a.searches]
        if not asked:
            continue
        cells = [
            side_by_side(asked, lambda a, m=method: holds_answer(a.best.get(m, ""), a.question))
            for method in ANSWER_METHODS
        ]
        searched = side_by_side(asked, lambda a: holds_answer(a.searches["answer"].answer, a.question))
        table.rows.append((run.dataset.name, counts(asked), searched, *cells))
    return table


def sets_table(runs: Sequence[SetRun]) -> TitledTable:
    table = TitledTable(
        "The sets as loaded (after --max-questions)",
        (
            "set",
            "folders",
            "documents",
            "units",
            "passages",
            "questions tuned / untouched",
            "written through the API",
            "passages embedded",
            "units embedded (dense baseline)",
        ),
    )
    for run in runs:
        dataset = run.dataset
        table.rows.append(
            (
                dataset.name,
                f"{len(dataset.folders):,}",
                f"{len(dataset.documents):,}",
                f"{len(dataset.units):,}",
                f"{run.passages:,}",
                counts(run.asked),
                f"{run.written.nodes:,} nodes in {run.written.seconds:,.0f} s",
                f"{run.embedded / run.embed_seconds:,.0f} /s" if run.embedded else "none",
                f"{len(dataset.units) / run.dense_seconds:,.1f} /s" if run.dense_seconds else "none",
            )
        )
    return table


def _best_at(asked: Sequence[Asked], level: Level, k: int) -> dict[str, float]:
    return {method: mean([level.recall_at(a, method, k) for a in asked]) or 0.0 for method in level.methods}


def verdicts(runs: Sequence[SetRun]) -> list[str]:
    """Per set, retrieve's recall at 5 against the best baseline's, at the unit and at the
    document, over all its questions (both parts): retrieve asked as a node wanting that level
    asks, for passages or for the best nodes."""
    lines = []
    for run in runs:
        for level in (UNIT, DOCUMENT):
            scores = _best_at(run.asked, level, 5)
            ours = level.ours(run.dataset)
            rival = max((m for m in level.methods if m not in OURS), key=lambda m: scores[m])
            lead = scores[ours] - scores[rival]
            verdict = "ahead" if lead > 0 else "level" if lead == 0 else "BEHIND"
            lines.append(
                f"{run.dataset.name}, R@5 at the {level.name}: {ours} {_pct(scores[ours])}, best baseline "
                f"{rival} {_pct(scores[rival])} → {verdict}."
            )
    return lines


def question_rows(runs: Sequence[SetRun]) -> list[dict]:
    """Each question's outcome, for finding what a change of ranking won or lost."""
    rows = []
    for run in runs:
        for a in run.asked:
            q = a.question
            rows.append(
                {
                    "set": run.dataset.name,
                    "question": q.key,
                    "category": q.category,
                    "untouched": q.untouched,
                    "gold": list(q.gold),
                    "gold_documents": list(a.gold_documents),
                    **{m: [[f.document, sorted(f.units)] for f in ranking] for m, ranking in a.rankings.items()},
                    "retrieve_ms": round(a.retrieve_ms, 1),
                    "searches": {
                        output: {"documents": s.documents, "answer": s.answer[:300], "tokens": s.tokens}
                        for output, s in a.searches.items()
                    },
                }
            )
    return rows


def notes(runs: Sequence[SetRun], skipped: Sequence[str]) -> list[str]:
    lines = [
        "Each set is written through the REST API with a token, as a swarm node writes: a folder per chat, persona, "
        "user, topic or hundred files, described only by number; a document per session, memory, preference, "
        "paragraph or function (CoSQA's as one project's files, imported as archives). Then every passage is "
        "embedded (local all-MiniLM-L6-v2) before any question is asked.",
        "A question is asked within its scope (its chat, persona or user; the whole set for PrefEval, CoSQA, HotpotQA "
        "and MuSiQue) with `POST /api/retrieve/`, k=10; where the set restricts the candidates (RealMem: the sessions "
        "before the query's, in the file's order) k=100 and the hits outside them are left out before the first ten "
        "are read. Long queries (MADial's dialogues, some RealMem turns) are cut to their last 2,000 characters "
        "(1,000 for searches), from a line's start.",
        "Baselines, in the same scope and among the same candidates: BM25 (Okapi, k1 1.2, b 0.75, the retrieval "
        "benchmark's) over the units and over whole documents; dense: the cosine of each unit's embedding by "
        "memsite's model (which reads a text's first 256 tokens) to the query's.",
        "Latency: each question once, its embedding not cached, after 5 untimed calls; the API in this process "
        "(Django's test client), so no HTTP or server time.",
        "Searches: `POST /api/searches/` (fallback none) on a sample of each set (a fifth from the untouched slice), "
        "run to the end in this process on the offline provider; recall counts the documents of `result.nodes` "
        "(within the candidates); output=answer only where the set has a short gold answer (BEAM's rubric's 'should "
        "state' items where it gives an answer, HotpotQA's answer, MuSiQue's answer or an alias).",
    ]
    for run in runs:
        dropped = ", ".join(f"{why}: {n}" for why, n in run.dataset.dropped.items())
        left_out = f" Left out: {dropped}." if dropped else ""
        lines.append(f"{run.dataset.name}: untouched slice = {run.dataset.split}.{left_out}")
        restricted = [a for a in run.asked if a.question.candidates is not None]
        short = sum(len(a.rankings["retrieve"]) < DEPTH for a in restricted)
        if restricted:
            lines.append(
                f"{run.dataset.name}: retrieve cannot be told the candidates; its 100 hits held fewer than {DEPTH} "
                f"among them for {short} of {len(restricted)} questions (the baselines rank the candidates alone)."
            )
    lines += [f"Skipped: {why}." for why in skipped]
    return lines


def build(runs: Sequence[SetRun], *, title: str, preamble: list[str], skipped: Sequence[str]) -> TablesReport:
    return TablesReport(
        title=title,
        preamble=preamble,
        tables=[
            table
            for table in (
                sets_table(runs),
                recall_table(runs, UNIT),
                recall_table(runs, DOCUMENT),
                ablation_table(runs),
                cost_table(runs),
                search_table(runs),
                answer_table(runs),
            )
            if table.rows
        ],
        targets=verdicts(runs),
        notes=notes(runs, skipped),
    )
