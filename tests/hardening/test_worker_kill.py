"""A Celery worker killed (SIGKILL, with its beat) in the middle of a search, a tick, a memorize
and a recall, while it waits for a slow LLM reply; a new worker is started. The work resumes
or fails cleanly within a bounded time, nothing stays running or queued, and nothing is
applied twice.

These are real processes: `celery -A memsite worker --pool solo -c 1 -B` on Redis, with
tests/hardening/worker_settings.py: the test's database (a file on SQLite: the worker cannot
see an in-memory one), broker keys under a prefix of the test's own, a killed worker's task
handed out again after one second, beat's jobs every second, and leases of a few seconds.
The LLM is the fake OpenAI-compatible server, in this process.

The leases outlast the redelivery: the task a new worker gets again finds the dead worker's
lease still held and leaves the work, which only the stale sweeps then take up.

The sweeps, and a memorize stopped half-way, are also tested in this process at the end, so
that the embedded run, which has no Redis, covers them too."""

import os
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest
import redis
from django.conf import settings
from django.db import connection, connections
from django.utils import timezone

from agents.brains import services as brain_services
from agents.brains.models import Brain, Record, TickRun
from agents.brains.services.brains import brain_create
from agents.brains.services.ticks import WORKER_STOPPED
from agents.brains.tasks import tick_run
from agents.graphs import services as graph_services
from agents.graphs.models import Graph, GraphEdge, GraphNode, GraphOp
from agents.graphs.tasks import graph_work
from memory import services
from memory.models import Search, SearchStep
from memory.tasks import search_run
from memsite.celery import app
from memsite.llm.models import LLMCall
from tests.factories import AgentFactory, a_member, default_space, system
from tests.fake_openai import FakeOpenAI, Reply
from tests.memory.search.tree import build_tree, found, pick

needs_redis = pytest.mark.skipif(
    not settings.REDIS_URL,
    reason="REDIS_URL is unset (the embedded run): killing a real worker needs Redis; CI sets it.",
)

BASE_DIR = Path(__file__).resolve().parents[2]
CELERY = Path(sys.executable).parent / "celery"
LEASE_S = 6  # ticks' and graphs' leases, well past the redelivery of a killed worker's task
SLOW_S = 60  # the reply the killed worker waits for; the server stops waiting when the test ends
BOUND_S = 40  # from the kill to the work's end


class Worker:
    """One worker process and its embedded beat, in a process group of their own."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.env, self.log = env, log
        self.process: subprocess.Popen | None = None

    def start(self) -> "Worker":
        command = [
            str(CELERY), "-A", "memsite", "worker", "--pool", "solo", "-c", "1", "-B",
            "--without-mingle", "--without-gossip", "--without-heartbeat", "-l", "info",
            "-n", f"kill-{uuid.uuid4().hex[:8]}@%h",
            "-Q", f"{settings.CELERY_TASK_DEFAULT_QUEUE},{settings.MEMSITE_UPKEEP_QUEUE}",  # work and beat's jobs
        ]  # fmt: skip
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                command, cwd=BASE_DIR, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        wait_for(lambda: " ready." in self.log.read_text(errors="replace"), 30, "the worker to start", self)
        return self

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        try:
            os.killpg(self.process.pid, sig)
        except ProcessLookupError:
            return
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=15)

    def tail(self) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-40:]) if self.log.exists() else ""


def wait_for(condition: Callable[[], object], seconds: float, what: str, worker: Worker | None = None):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if value := condition():
            return value
        time.sleep(0.1)
    raise AssertionError(f"Waited {seconds} s for {what}.\n{worker.tail() if worker else ''}")


@pytest.fixture
def shared_db(transactional_db, tmp_path) -> Iterator[str]:
    """The test's database, as a name the workers can open: PostgreSQL's test database, or on
    SQLite a file copy of the in-memory one that this test then uses too."""
    if connection.vendor != "sqlite":
        yield connection.settings_dict["NAME"]
        return
    path = tmp_path / "memsite.sqlite3"
    connection.ensure_connection()
    copy = sqlite3.connect(path)
    connection.connection.backup(copy)
    copy.close()
    original = connections["default"]
    on_file = original.__class__({**original.settings_dict, "NAME": str(path)}, alias="default")
    connections["default"] = on_file
    try:
        yield str(path)
    finally:
        on_file.close()
        connections["default"] = original


@pytest.fixture
def tree(shared_db) -> None:
    """The internal folders, as the migration makes them (transactional tests empty the tables)."""
    default_space()  # made again if emptied, and with it its internal folders


@pytest.fixture
def broker_prefix(monkeypatch) -> Iterator[str]:
    """A key prefix of the test's own on the Redis: the work it starts is sent there, the
    workers read only there, and every key under it is deleted at the end."""
    prefix = f"memsite-kill-test-{uuid.uuid4().hex[:12]}:"

    def sender(task):
        def delay(**kwargs):
            with app.connection_for_write(transport_options={"global_keyprefix": prefix}) as conn:
                task.apply_async(kwargs=kwargs, connection=conn)

        return delay

    for task in (search_run, tick_run, graph_work):
        monkeypatch.setattr(task, "delay", sender(task))
    yield prefix
    client = redis.Redis.from_url(settings.REDIS_URL)
    for key in client.scan_iter(match=f"{prefix}*"):
        client.delete(key)
    client.close()


@pytest.fixture
def workers(shared_db, broker_prefix, fake_openai: FakeOpenAI, tmp_path) -> Iterator[Callable[[], Worker]]:
    """Starts workers on the shared database, the prefixed broker and the fake LLM; each is
    killed when the test ends, whatever happened."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.hardening.worker_settings",
        "MEMSITE_TEST_DATABASE_NAME": shared_db,
        "MEMSITE_TEST_BROKER_PREFIX": broker_prefix,
        "MEMSITE_TEST_VISIBILITY_S": "1",
        "MEMSITE_VAR_DIR": str(tmp_path / "var"),
        "MEMSITE_LLM_PROVIDER": "openai",
        "OPENAI_API_KEY": "sk-test",
        "OPENAI_BASE_URL": fake_openai.url,
        "MEMSITE_LLM_MAX_RETRIES": "0",
        "MEMSITE_LLM_MAX_REPAIRS": "0",
        "MEMSITE_LLM_TIMEOUT_MS": str((SLOW_S + 10) * 1000),
        "MEMSITE_LLM_REQUEST_TIMEOUT_MS": str((SLOW_S + 10) * 1000),
        "MEMSITE_SEARCH_TOOLS": "false",
        "MEMSITE_SEARCH_SHORTCUT_HITS": "0",  # the scripted walks follow the tree
        "MEMSITE_SEARCH_FIRST_READ_TOKENS": "0",
        "MEMSITE_EMBEDDINGS": "off",
        "MEMSITE_SEARCH_MAX_RESTARTS": "0",
        "MEMSITE_SEARCH_STALE_S": "2",
        "MEMSITE_TICK_LEASE_S": str(LEASE_S),
        "MEMSITE_GRAPH_LEASE_S": str(LEASE_S),
        "MEMSITE_TICK_DEEP_REFLECT_EVERY": "1000",
    }
    (tmp_path / "var").mkdir()
    started: list[Worker] = []

    def start() -> Worker:
        worker = Worker(env, tmp_path / f"worker-{len(started) + 1}.log")
        started.append(worker)
        return worker.start()

    try:
        yield start
    finally:
        for worker in started:
            worker.kill()


def kill_when(worker: Worker, llm: FakeOpenAI, requests: int, written: Callable[[], bool]) -> None:
    """SIGKILL the worker once it has written its first steps and sent request number
    `requests`, the slow one, whose reply it is waiting for."""
    wait_for(lambda: len(llm.requests) >= requests and written(), 30, "the worker to get half-way", worker)
    worker.kill()


# A search ---------------------------------------------------------------------------------------


@needs_redis
def test_a_search_whose_worker_is_killed_resumes_from_its_last_step(tree, workers, fake_openai):
    build_tree()
    fake_openai.script(
        pick("references"),
        Reply.slow(SLOW_S),  # the killed worker waits here, at the second step
        pick("databases"),
        pick("pg-tuning.md"),
        found("A quarter of the RAM."),
    )
    first = workers()
    search = services.search_start(by=system(), questions=["How large should shared_buffers be?"])
    kill_when(first, fake_openai, 2, lambda: SearchStep.objects.filter(search=search).exists())
    search.refresh_from_db()
    assert (search.status, search.steps_taken) == (Search.Status.RUNNING, 1), "killed half-way"

    second = workers()
    wait_for(lambda: not Search.objects.filter(status__in=Search.ACTIVE).exists(), BOUND_S, "the search to end", second)

    search.refresh_from_db()
    assert search.status == Search.Status.DONE and search.ended_because == "answered", second.tail()
    assert search.result["answers"][0]["answer"] == "A quarter of the RAM."
    # Each step once, in order: the one the killed worker was taking is taken again, once.
    steps = list(search.steps.values_list("number", "kind"))
    assert steps == [(1, "route"), (2, "route"), (3, "route"), (4, "read"), (5, "finish")]
    calls = LLMCall.objects.filter(served_id=search.pk)
    assert search.llm_calls == calls.count() == 4 and set(calls.values_list("status", flat=True)) == {"ok"}
    assert fake_openai.pending == 0


# A tick -----------------------------------------------------------------------------------------


def decide(action: str, **arguments) -> Reply:
    return Reply.json({"action": action, "arguments": arguments, "reason": "It is the next step."})


REFLECT = Reply.json({"thought": "The user folder holds preferences.", "inner_thought": None})


@needs_redis
def test_a_tick_whose_worker_is_killed_is_failed_and_the_brain_ticks_again(tree, workers, fake_openai):
    agent = AgentFactory(name="scout", model="gpt-4")
    brain_create(agent=agent)
    fake_openai.script(Reply.slow(SLOW_S))  # the decision the killed worker waits for
    first = workers()
    brain_services.tick_request(agent=agent, by=a_member())
    kill_when(first, fake_openai, 1, lambda: TickRun.objects.filter(brain_id=agent.pk).exists())
    dead = TickRun.objects.get(brain_id=agent.pk)
    assert dead.status == TickRun.Status.RUNNING and [step["name"] for step in dead.steps] == ["read"]

    second = workers()  # it gets the tick again, finds the lease held, and leaves it to the sweep
    wait_for(
        lambda: TickRun.objects.filter(pk=dead.pk, status=TickRun.Status.FAILED).exists(),
        BOUND_S,
        "the dead tick's run to be failed",
        second,
    )
    dead.refresh_from_db()
    assert dead.error == WORKER_STOPPED and dead.ended_at is not None

    # The brain is free again: the next tick runs whole.
    fake_openai.script(decide("list_dir", path="/user"), REFLECT, Reply.json({"steps": ["idle"]}))
    brain_services.tick_request(agent=agent, by=a_member())
    wait_for(
        lambda: (
            TickRun.objects.filter(brain_id=agent.pk, status=TickRun.Status.DONE).exists()
            and Brain.objects.filter(pk=agent.pk, lease_until__isnull=True).exists()
        ),
        BOUND_S,
        "the next tick",
        second,
    )
    assert not TickRun.objects.filter(status=TickRun.Status.RUNNING).exists()
    runs = list(TickRun.objects.filter(brain_id=agent.pk).order_by("number").values_list("number", "status"))
    assert runs == [(1, "failed"), (2, "done")]
    brain = Brain.objects.get(pk=agent.pk)
    assert brain.tick_count == 2 and brain.lease_until is None
    assert Record.objects.filter(brain_id=agent.pk, kind="episode").count() == 1  # the dead tick recorded nothing
    assert fake_openai.pending == 0


# A memorize and a recall --------------------------------------------------------------------------


def patch(label: str) -> Reply:
    return Reply.json(
        {
            "add_nodes": [
                {"tmp_id": "s", "kind": "subtask", "thought": [{"role": "assistant", "content": f"look up {label}"}]},
                {"tmp_id": "e", "kind": "evidence", "thought": [{"role": "tool", "content": f"{label}: port 8001"}]},
            ],
            "add_edges": [{"src": "1", "dst": "s", "rationale": "decompose"}, {"src": "e", "dst": "s"}],
        }
    )


def step(number: int) -> list[dict]:
    return [
        {"role": "assistant", "content": f"I look up service {number}."},
        {"role": "tool", "content": f"Service {number} listens on port {8000 + number}."},
    ]


def graph_settled(graph: Graph) -> bool:
    return not GraphOp.objects.filter(graph=graph, status=GraphOp.Status.QUEUED).exists()


@needs_redis
def test_a_memorize_whose_worker_is_killed_goes_on_without_applying_a_pair_twice(shared_db, workers, fake_openai):
    graph = graph_services.graph_create(
        space=default_space(), task="Find the ports", model="gpt-4", trigger_tokens=8_000, target_tokens=4_000
    )
    fake_openai.script(patch("one"), Reply.slow(SLOW_S), patch("two"), patch("three"))
    first = workers()
    op = graph_services.graph_memorize(by=system(), graph=graph, messages=step(1) + step(2) + step(3))
    # Killed waiting for the second pair's patch, the first pair's applied.
    kill_when(first, fake_openai, 2, lambda: GraphNode.objects.filter(graph=graph).count() == 3)

    second = workers()
    wait_for(lambda: graph_settled(graph), BOUND_S, "the memorize to end", second)

    op.refresh_from_db()
    assert op.status == GraphOp.Status.APPLIED and op.rationale == "3 of 3 steps memorized", op.error
    assert [pair["turn_ids"] for pair in op.detail["pairs"]] == [[0, 1], [2, 3], [4, 5]]
    # Each pair's patch applied once: two nodes for each, ids without a gap.
    nodes = list(GraphNode.objects.filter(graph=graph).order_by("node_id").values_list("node_id", "related_turn_ids"))
    assert nodes == [(1, []), (2, [0, 1]), (3, [0, 1]), (4, [2, 3]), (5, [2, 3]), (6, [4, 5]), (7, [4, 5])]
    assert GraphEdge.objects.filter(graph=graph).count() == 6
    assert LLMCall.objects.filter(purpose="memorize", status="ok").count() == 3
    graph.refresh_from_db()
    assert graph.next_node_id == 8
    assert fake_openai.pending == 0


SNAPSHOT = {
    "nodes": {
        "1": {"node_id": 1, "kind": "task", "thought": "Find the ports", "related_turn_ids": [], "active": True},
        "2": {"node_id": 2, "kind": "subtask", "thought": "Read the config", "related_turn_ids": [], "active": True},
        "3": {"node_id": 3, "kind": "evidence", "thought": "port 8443", "related_turn_ids": [], "active": True},
        "4": {"node_id": 4, "kind": "subtask", "thought": "Ask the admin", "related_turn_ids": [], "active": True},
    },
    "edges": [
        {"src": 1, "dst": 2, "rationale": "decompose"},
        {"src": 3, "dst": 2, "rationale": "support"},
        {"src": 1, "dst": 4, "rationale": "decompose"},
    ],
}
FOLD = Reply.json(
    {
        "flush_ops": [{"id": 4, "rationale": "a dead end"}],
        "fold_ops": [
            {"ids": [2, 3], "notes": [{"role": "system", "content": "The port is 8443."}], "rationale": "done"}
        ],
    }
)


@needs_redis
def test_a_recall_whose_worker_is_killed_is_applied_once(shared_db, workers, fake_openai):
    graph = graph_services.graph_create(
        space=default_space(), task="Find the ports", model="gpt-4", trigger_tokens=8_000, target_tokens=4_000
    )
    graph_services.graph_snapshot_import(graph=graph, document=SNAPSHOT)
    fake_openai.script(Reply.slow(SLOW_S), FOLD)
    first = workers()
    recall = graph_services.graph_recall(graph=graph, by=system())
    kill_when(first, fake_openai, 1, lambda: True)
    recall.refresh_from_db()
    assert recall.status == GraphOp.Status.QUEUED

    second = workers()
    wait_for(lambda: graph_settled(graph), BOUND_S, "the recall to end", second)

    recall.refresh_from_db()
    assert recall.status == GraphOp.Status.APPLIED and recall.detail["summaries"] == [5], recall.error
    assert recall.detail["flushed"] == [4] and recall.tokens_after is not None
    states = dict(GraphNode.objects.filter(graph=graph).values_list("node_id", "state"))
    assert states == {1: "active", 2: "folded", 3: "folded", 4: "flushed", 5: "active"}  # one summary
    assert set(GraphEdge.objects.filter(graph=graph).values_list("src", "dst")) == {(1, 5), (1, 4), (3, 2)}
    assert LLMCall.objects.filter(purpose="recall").count() == 1  # the killed call left no row
    graph.refresh_from_db()
    assert graph.lease_until is None and graph.next_node_id == 6
    assert fake_openai.pending == 0


# The same, without processes ----------------------------------------------------------------------


def test_a_memorize_stopped_half_way_goes_on_from_the_pairs_it_recorded(db, monkeypatch):
    from agents.graphs.services import graphs

    monkeypatch.setattr("agents.graphs.tasks.graph_work.delay", lambda **kwargs: None)
    graph = graph_services.graph_create(
        space=default_space(), task="Find the ports", model="gpt-4", trigger_tokens=8_000, target_tokens=4_000
    )
    op = graph_services.graph_memorize(by=system(), graph=graph, messages=step(1) + step(2) + step(3))
    replies = iter([patch("one"), None, patch("two"), patch("three")])

    def llm(**kwargs):
        reply = next(replies)
        if reply is None:
            raise SystemExit("the worker is killed")  # not an Exception: nothing catches it
        return SimpleNamespace(value=kwargs["schema"].model_validate_json(reply.content))

    monkeypatch.setattr(graphs, "complete", llm)
    with pytest.raises(SystemExit):
        graph_services.graph_work(graph_id=graph.pk)
    op.refresh_from_db()
    assert op.status == GraphOp.Status.QUEUED and [pair["node_ids"] for pair in op.detail["pairs"]] == [
        {"s": 2, "e": 3}
    ]

    assert graph_services.graph_work(graph_id=graph.pk) == 1

    op.refresh_from_db()
    assert op.status == GraphOp.Status.APPLIED and op.rationale == "3 of 3 steps memorized"
    nodes = list(GraphNode.objects.filter(graph=graph).order_by("node_id").values_list("node_id", "related_turn_ids"))
    assert nodes == [(1, []), (2, [0, 1]), (3, [0, 1]), (4, [2, 3]), (5, [2, 3]), (6, [4, 5]), (7, [4, 5])]


def test_the_sweeps_take_up_what_dead_workers_left(db, monkeypatch, settings, django_capture_on_commit_callbacks):
    queued: list[int] = []
    monkeypatch.setattr("agents.graphs.tasks.graph_work.delay", lambda graph_id: queued.append(graph_id))
    settings.MEMSITE_GRAPH_LEASE_S = 60
    now = timezone.now()
    graphs = {}
    for name, lease, age, sent in [
        ("dead worker's", now - timedelta(seconds=1), 120, True),  # its lease ran out
        ("lost message's", None, 120, False),  # the broker never took it
        ("held", now + timedelta(seconds=30), 120, True),  # a live worker on it
        ("just queued", None, 5, False),  # its task is on its way
        ("waiting its turn", None, 120, True),  # on the broker, behind other work
    ]:
        graph = graph_services.graph_create(
            space=default_space(), task=name, model="gpt-4", trigger_tokens=8_000, target_tokens=4_000
        )
        with django_capture_on_commit_callbacks():
            op = graph_services.graph_recall(graph=graph, by=system())
        created = now - timedelta(seconds=age)
        GraphOp.objects.filter(pk=op.pk).update(created_at=created, sent_at=created if sent else None)
        Graph.objects.filter(pk=graph.pk).update(lease_until=lease)
        graphs[name] = graph.pk

    with django_capture_on_commit_callbacks(execute=True):
        assert graph_services.graphs_sweep_stale() == 2
    assert sorted(queued) == sorted([graphs["dead worker's"], graphs["lost message's"]])
    # Both now wait their turn on the broker: a minute later nothing is sent again.
    assert graph_services.graphs_sweep_stale() == 0

    dead, alive = (AgentFactory(name=name) for name in ("dead", "alive"))
    for agent, lease in ((dead, now - timedelta(seconds=1)), (alive, now + timedelta(seconds=30))):
        brain_create(agent=agent)
        Brain.objects.filter(pk=agent.pk).update(lease_until=lease)
        TickRun.objects.create(brain_id=agent.pk, number=1)
    assert brain_services.ticks_sweep_stale() == 1
    statuses = dict(TickRun.objects.values_list("brain_id", "status"))
    assert statuses == {dead.pk: TickRun.Status.FAILED, alive.pk: TickRun.Status.RUNNING}
    assert TickRun.objects.get(brain_id=dead.pk).error == WORKER_STOPPED


def test_a_worker_that_lost_the_graph_to_another_writes_nothing_more(db, monkeypatch):
    """A worker stalled past its lease (a long LLM call) while another took the graph over: its
    patch is not applied, its op is left to the other, and the other's lease is left alone."""
    from agents.graphs.services import graphs

    monkeypatch.setattr("agents.graphs.tasks.graph_work.delay", lambda **kwargs: None)
    graph = graph_services.graph_create(
        space=default_space(), task="Find the ports", model="gpt-4", trigger_tokens=8_000, target_tokens=4_000
    )
    op = graph_services.graph_memorize(by=system(), graph=graph, messages=step(1))
    others = timezone.now() + timedelta(seconds=300)

    def slow_llm(**kwargs):
        Graph.objects.filter(pk=graph.pk).update(lease_until=others)  # meanwhile, another took over
        return SimpleNamespace(value=kwargs["schema"].model_validate_json(patch("one").content))

    monkeypatch.setattr(graphs, "complete", slow_llm)

    assert graph_services.graph_work(graph_id=graph.pk) == 0

    op.refresh_from_db()
    graph.refresh_from_db()
    assert op.status == GraphOp.Status.QUEUED and "pairs" not in op.detail
    assert list(GraphNode.objects.filter(graph=graph).values_list("node_id", flat=True)) == [1]
    assert graph.lease_until == others and graph.next_node_id == 2
