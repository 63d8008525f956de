"""The real-data benchmark's run (benchmarks/realdata/run.py) in this process, on a set of a few
records of our own in BEAM's shape, since the sets' mirrors are pinned to their commits and no
machine of the suite holds them: written through the API, asked, searched, and reported."""

from benchmarks.realdata import beam, bench, report
from benchmarks.realdata.ablation import VARIANTS
from tests.benchmarks.scripts import number, tables_of
from tests.benchmarks.test_realdata_loaders import BEAM_BATCHES, BEAM_PROBING


def shares(cell: str) -> list[float]:
    """The figures of a `tuned / untouched` cell, a dash for a part with no question."""
    return [number(part) for part in cell.split("/") if part.strip() != "—"]


def test_a_small_set_is_written_asked_searched_and_reported(db, offline_llm):
    dataset = beam.dataset("beam-smoke", [beam.Chat(number=7, batches=BEAM_BATCHES, probing=BEAM_PROBING)])
    [run] = bench.run_all([dataset], searches=1)
    assert run.written.nodes >= len(dataset.documents) + 1 and run.passages > 0
    assert len(run.asked) == len(dataset.questions)
    published = report.build([run], title="Real public data", preamble=[], skipped=[])
    sets, unit, document, ablation, cost, searches = tables_of(published.markdown())
    assert sets.first_cells() == ["beam-smoke"]
    assert number(sets.column("documents")[0]) == len(dataset.documents)
    for recall in (unit, document):
        categories = [row[1] for row in recall.rows]
        assert categories[-1] == "all" and len(categories) == len({q.category for q in dataset.questions}) + 1
        for row in recall.rows:
            assert all(0 <= share <= 100 for cell in row[3:] for share in shares(cell))
            # Recall does not fall as k grows: @1, @5, @10 of each ranking, in that order.
            for at1, at5, at10 in zip(row[3::3], row[4::3], row[5::3], strict=True):
                assert all(a <= b <= c for a, b, c in zip(shares(at1), shares(at5), shares(at10), strict=True))
    assert ablation.header[2:] == list(VARIANTS)
    shipped = ablation.rows[0]
    assert shipped[2] == unit.column("retrieve @5")[-1]  # as shipped is retrieve itself, on BEAM's passages
    assert all(0 <= share <= 100 for cell in shipped[2:] for share in shares(cell))
    assert all(share > 0 for share in shares(cost.column("top 5 tokens")[0]))
    assert searches.column("questions") == ["0 / 1"]
    assert number(searches.column("LLM calls, mean")[0]) >= 1
