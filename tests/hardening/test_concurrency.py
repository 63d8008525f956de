"""Concurrency: operations that really overlap. Each thread works on its own database connection,
opened before a barrier releases all of them at once, round after round. Whoever wins a race,
the tree stays valid, a stale version gets 409, brain writes and counters add up, and one
graph's operations run one at a time."""

import itertools
import random
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from django.db import connection
from django.urls import reverse
from rest_framework.test import APIClient

from agents.brains import services as brain_services
from agents.brains.logic.caps import cap
from agents.brains.models import Brain, Explored, Goal, Neuron, Record, RecordKind, Synapse, TickRun
from agents.brains.services.brains import goal_create
from agents.context.models import Message
from agents.graphs import selectors as agent_selectors
from agents.graphs import services as graph_services
from agents.graphs.logic.snapshot import snapshot_read
from agents.graphs.models import GraphEdge, GraphNode, GraphOp, Turn
from memory import selectors, services
from memory.models import Node, NodeContent
from memsite.errors import Conflict, InvalidInput
from tests.factories import AgentFactory, UserFactory, default_space, system, ticked_by, token_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("sqlite_waits_for_locks")]

THREAD_TIMEOUT_S = 60


@pytest.fixture(autouse=True)
def every_request_at_once(settings):
    """The races are between one user's own requests, more at once than a process lets one caller
    have (tests/memsite/test_concurrency.py tests that limit)."""
    settings.MEMSITE_USER_CONCURRENCY = 100


@dataclass
class Outcome:
    value: Any = None
    error: BaseException | None = None
    trace: str = ""


def race(*calls: Callable[[], Any]) -> list[Outcome]:
    """Run each call in a thread of its own, all released together once every thread holds its
    own database connection; the outcomes in the calls' order."""
    barrier = threading.Barrier(len(calls))
    outcomes = [Outcome() for _ in calls]

    def run(call: Callable[[], Any], outcome: Outcome) -> None:
        try:
            connection.ensure_connection()
            barrier.wait(timeout=THREAD_TIMEOUT_S)
            outcome.value = call()
        except BaseException as exc:  # noqa: BLE001 - every outcome is checked by the test
            outcome.error, outcome.trace = exc, traceback.format_exc()
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=pair, daemon=True) for pair in zip(calls, outcomes, strict=True)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=THREAD_TIMEOUT_S)
    assert not any(thread.is_alive() for thread in threads), "a thread never finished: a deadlock?"
    return outcomes


def assert_no_errors_but(outcomes: list[Outcome], *allowed: type[BaseException]) -> None:
    """No call failed, or only with an error of the `allowed` kinds; the others' tracebacks."""
    errors = [
        outcome.trace for outcome in outcomes if outcome.error is not None and not isinstance(outcome.error, allowed)
    ]
    assert not errors, "\n".join(errors)


@pytest.fixture
def tree():
    """The internal folders and the user documents, as the migration makes them (transactional
    tests empty the tables)."""
    default_space()  # made again if emptied, and with it its internal folders
    return {
        name: selectors.node_internal_folder(space=default_space(), name=name)
        for name in ("swarmstar", "user", "projects", "references")
    }


@pytest.fixture
def token() -> str:
    return token_for(UserFactory())


def api_client(token: str) -> APIClient:
    """A client of the calling thread's own."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return client


def assert_tree_valid() -> None:
    """treebeard finds no problem (bad characters or path lengths, orphans, wrong depths or
    child counts), and every node's parent is the node its path names."""
    assert Node.objects.find_problems() == ([], [], [], [], [])
    rows = list(Node.objects.values_list("pk", "path", "depth", "parent_id"))
    by_path = {path: pk for pk, path, _, _ in rows}
    for pk, path, depth, parent_id in rows:
        assert depth == len(path) // Node.steplen
        expected_parent = by_path[path[: -Node.steplen]] if depth > 1 else None
        assert parent_id == expected_parent, f"{pk} at {path} names {parent_id} as its parent"


# 1. Moves --------------------------------------------------------------------------------------


def folder(parent: Node, name: str) -> Node:
    return services.node_create(parent=parent, type="folder", name=name, by=system())


class Refused(Exception):
    """The API's refusal: its status and the `detail` that says why."""

    def __init__(self, status: int, detail: str):
        super().__init__(f"{status}: {detail}")
        self.status, self.detail = status, detail


def move_via(via: str, token: str, node: Node, new_parent: Node) -> int:
    """Move, from rows read before, through the service or the API: 200, or the service's
    error or the API's `Refused` raised."""
    if via == "service":
        services.node_move(node=node, parent=new_parent, by=system())
        return 200
    response = api_client(token).post(
        reverse("memory-api:node-move", kwargs={"node_id": node.pk}), {"parent": new_parent.pk}, format="json"
    )
    if response.status_code != 200:
        raise Refused(response.status_code, response.json().get("detail", ""))
    return 200


def test_crossed_moves_one_wins_and_the_tree_stays_valid(tree, token):
    """Two pairs of folders, one pair in one tree and one across two: in each pair, one folder
    moved into the other while the other is moved into it, one pair through the service and the
    other through the API, in turns."""
    rng = random.Random(3)
    pairs = []
    for home_a, home_b in ((tree["user"], tree["user"]), (tree["swarmstar"], tree["references"])):
        a, b = folder(home_a, f"alpha-in-{home_a.name}"), folder(home_b, f"beta-in-{home_b.name}")
        folder(folder(a, "alpha-1"), "alpha-2")
        services.node_create(parent=b, type="document", name="beta.md", content=b"# Beta", by=system())
        folder(b, "beta-1")
        pairs.append(((a, home_a), (b, home_b)))

    for round_number in range(10):
        vias = ["service", "api"] if round_number % 2 else ["api", "service"]
        moves = []
        for (a, _), (b, _) in pairs:
            a, b = (
                selectors.node_get(space=default_space(), node_id=a.pk),
                selectors.node_get(space=default_space(), node_id=b.pk),
            )
            moves += rng.sample([(a, b), (b, a)], 2)
        outcomes = race(
            *(
                lambda node=node, into=into, via=vias[number // 2]: move_via(via, token, node, into)
                for number, (node, into) in enumerate(moves)
            )
        )

        assert_no_errors_but(outcomes, Conflict, Refused)
        assert_tree_valid()
        for first in (0, 2):
            crossed = outcomes[first : first + 2]
            assert sorted(outcome.value or 0 for outcome in crossed) == [0, 200]
            [refusal] = [outcome.error for outcome in crossed if outcome.error is not None]
            message = refusal.message if vias[first // 2] == "service" else refusal.detail
            assert refusal.status == 409 and "into itself or its own branch" in message
            [(moved, host)] = [
                move for move, outcome in zip(moves[first : first + 2], crossed, strict=True) if outcome.value == 200
            ]
            # The winner sits in the other folder, with its whole branch.
            moved, host = Node.objects.get(pk=moved.pk), Node.objects.get(pk=host.pk)
            assert moved.parent_id == host.pk and moved.path.startswith(host.path) and moved.depth == host.depth + 1
            # Back home for the next round.
            home = next(home for pair in pairs for node, home in pair if node.pk == moved.pk)
            services.node_move(node=moved, parent=home, by=system())

    assert_tree_valid()
    assert all(Node.objects.get(pk=node.pk).parent_id == home.pk for pair in pairs for node, home in pair)


def test_concurrent_moves_creates_and_deletes_keep_the_tree_valid(tree, token):
    """Folders shuffled between roots and into each other by several threads at once, from rows
    read before the round (as the API reads them), while others create and delete in them."""
    rng = random.Random(7)
    roots = [tree["user"], tree["references"], tree["swarmstar"]]
    folders = [folder(roots[number % 3], f"folder-{number}") for number in range(6)]
    notes: list[str] = []

    def create(parent: Node, name: str) -> Node:
        return services.node_create(parent=parent, type="document", name=name, content=b"note", by=system())

    def delete(node_id: str) -> int:
        return services.node_delete(node=selectors.node_get(space=default_space(), node_id=node_id), by=system())

    for round_number in range(12):
        current = [selectors.node_get(space=default_space(), node_id=node.pk) for node in folders]
        calls = []
        for _ in range(4):
            node, into = rng.sample(current, 2)
            into = rng.choice([into, into, rng.choice(roots)])
            calls.append(lambda node=node, into=into: services.node_move(node=node, parent=into, by=system()))
        for number in range(2):
            parent = rng.choice(current)
            calls.append(lambda parent=parent, name=f"note-{round_number}-{number}.md": create(parent, name))
        if notes:
            oldest = notes.pop(0)
            calls.append(lambda node_id=oldest: delete(node_id))
        via_api = rng.choice(current)
        destination = rng.choice(roots)
        calls.append(lambda node=via_api, into=destination: move_via("api", token, node, into))

        outcomes = race(*calls)

        # A move may be refused (a cycle, a name taken, too deep): with a 409 or 400 that says why.
        assert_no_errors_but(outcomes, Conflict, InvalidInput, Refused)
        for outcome in outcomes:
            if isinstance(outcome.error, Refused):
                assert outcome.error.status in (400, 409) and outcome.error.detail
        notes += [outcome.value.pk for outcome in outcomes[4:6] if outcome.error is None]
        assert_tree_valid()


def test_moves_and_creates_into_one_folder_each_take_a_place_of_their_own(tree):
    """Folders moved into one folder while others are created in it: each takes a child
    position of its own (no path taken twice), and the folder counts them all."""
    target = folder(tree["user"], "target")
    expected_children = 0

    for round_number in range(6):
        movers = [folder(tree["references"], f"mover-{round_number}-{number}") for number in range(3)]
        outcomes = race(
            *(lambda node=node: services.node_move(node=node, parent=target, by=system()) for node in movers),
            *(lambda name=f"made-{round_number}-{number}": folder(target, name) for number in range(3)),
        )

        assert_no_errors_but(outcomes)
        expected_children += 6
        assert Node.objects.get(pk=target.pk).numchild == expected_children
        assert Node.objects.filter(parent=target).count() == expected_children
        assert_tree_valid()


def test_a_move_whose_node_changes_trees_as_it_takes_the_locks_starts_again(tree, monkeypatch):
    """The node goes to another tree, by another transaction, between the move reading where it
    is and locking that tree's root: the move starts again and locks the tree it is in now."""
    if connection.vendor == "sqlite":
        pytest.skip("SQLite runs one writing transaction at a time: nothing moves in between")
    from memory.services import nodes

    wanderer = folder(tree["user"], "wanderer")
    destination = folder(tree["swarmstar"], "destination")
    manager = type(Node.objects)
    real_in_bulk, real_lock_roots = manager.in_bulk, nodes._lock_roots
    attempts = []

    def in_bulk(self, *args, **kwargs):
        rows = real_in_bulk(self, *args, **kwargs)
        if len(attempts) == 1 and threading.get_ident() == attempts[0]:
            attempts.append("moved")
            [moved] = race(lambda: services.node_move(node=wanderer, parent=tree["references"], by=system()))
            assert moved.error is None, moved.trace
        return rows

    def lock_roots(*args):
        attempts.append(threading.get_ident())
        return real_lock_roots(*args)

    monkeypatch.setattr(manager, "in_bulk", in_bulk)
    monkeypatch.setattr(nodes, "_lock_roots", lock_roots)

    moved = services.node_move(node=wanderer, parent=destination, by=system())

    main = threading.get_ident()
    assert [attempt for attempt in attempts if attempt == main] == [main, main]  # it started again
    assert moved.parent_id == destination.pk and Node.objects.get(pk=wanderer.pk).version == 3
    assert_tree_valid()


def test_writes_into_a_branch_being_deleted_land_first_or_get_404(tree, token):
    """Whatever reaches a branch while it is deleted either lands before the delete (and goes
    with the branch, or left it in time) or is told the node is gone: never a 500, never a
    node left under a deleted parent."""

    def call(method: str, url: str, body: dict | bytes | None = None) -> int:
        client = api_client(token)
        if isinstance(body, bytes):
            response = client.put(url, data=body, content_type="text/markdown")
        else:
            response = getattr(client, method)(url, body, format="json")
        if response.status_code >= 300:
            detail = response.json().get("detail", "")
            assert response.status_code in (404, 409) and detail, (response.status_code, detail)
        return response.status_code

    def url(name: str, node: Node) -> str:
        return reverse(f"memory-api:{name}", kwargs={"node_id": node.pk})

    for round_number in range(8):
        doomed = folder(tree["user"], f"doomed-{round_number}")
        document = services.node_create(
            parent=doomed, type="document", name="inside.md", content=b"# Inside", by=system()
        )
        inner = folder(doomed, f"inner-{round_number}")
        elsewhere = folder(tree["references"], f"elsewhere-{round_number}")
        new = {"parent": inner.pk, "type": "document", "name": "new.md", "content": "# New"}
        requests = [
            ("delete", url("node-detail", doomed), None),
            ("post", reverse("memory-api:node-create"), new),
            ("patch", url("node-detail", document), {"description": "Edited."}),
            ("put", url("node-content", document), b"# Rewritten"),
            ("post", url("node-move", document), {"parent": elsewhere.pk}),
            ("post", url("node-move", elsewhere), {"parent": inner.pk}),
            ("post", url("node-move", inner), {"parent": tree["swarmstar"].pk}),
        ]
        outcomes = race(*(lambda request=request: call(*request) for request in requests))

        assert_no_errors_but(outcomes)
        assert outcomes[0].value == 204
        assert not Node.objects.filter(pk=doomed.pk).exists()
        assert_tree_valid()


# 2. Edits of one node --------------------------------------------------------------------------


def edit_via(kind: str, token: str, node: Node, number: int, version: int | None) -> dict:
    """One edit of the node, as its HTTP response's body; a refusal raised as `Refused`."""
    client = api_client(token)
    headers = {} if version is None else {"HTTP_IF_MATCH": f'"{version}"'}
    url = reverse("memory-api:node-detail", kwargs={"node_id": node.pk})
    if kind == "content":
        response = client.put(
            reverse("memory-api:node-content", kwargs={"node_id": node.pk}),
            data=f"# Version by writer {number}".encode(),
            content_type="text/markdown",
            **headers,
        )
    else:
        response = client.patch(url, {kind: f"{kind}-by-writer-{number}"}, format="json", **headers)
    if response.status_code != 200:
        raise Refused(response.status_code, response.json().get("detail", ""))
    return {"kind": kind, "number": number, **response.json()}


def state_of(node: Node) -> tuple[str, str, bytes, int]:
    node = Node.objects.get(pk=node.pk)
    return node.name, node.description, bytes(NodeContent.objects.get(node=node).data), node.version


def written(kind: str, number: int) -> str | bytes:
    return f"# Version by writer {number}".encode() if kind == "content" else f"{kind}-by-writer-{number}"


def test_edits_from_one_version_one_wins_the_rest_get_409(tree, token):
    """Six writers (half through the API with If-Match, half through the services) change the
    name, the description or the content of one document, all from the version they read."""
    document = services.node_create(
        parent=tree["user"], type="document", name="plan.md", content=b"# Plan", by=system()
    )
    kinds = ["name", "description", "content"]

    def edit(kind: str, tag: int, api: bool, stale: Node, version: int) -> object:
        if api:
            return edit_via(kind, token, stale, tag, version)
        if kind == "content":
            return services.node_content_set(node=stale, data=written(kind, tag), expected_version=version, by=system())
        return services.node_update(node=stale, expected_version=version, **{kind: written(kind, tag)}, by=system())

    for round_number in range(8):
        name, description, content, version = state_of(document)
        stale = selectors.node_get(space=default_space(), node_id=document.pk)
        edits = [
            (kinds[(number + round_number) % 3], round_number * 10 + number, number % 2, stale, version)
            for number in range(6)
        ]
        outcomes = race(*(lambda arguments=arguments: edit(*arguments) for arguments in edits))

        assert_no_errors_but(outcomes, Conflict, Refused)
        [(kind, tag, *_)] = [won for won, outcome in zip(edits, outcomes, strict=True) if outcome.error is None]
        for outcome in outcomes:
            if outcome.error is not None:
                message = outcome.error.detail if isinstance(outcome.error, Refused) else outcome.error.message
                assert outcome.error.status == 409 and f"it is at version {version + 1}, not {version}" in message
        # The winner's write, whole, and nothing of the others'.
        expected = {"name": name, "description": description, "content": content}
        expected[kind] = written(kind, tag)
        assert state_of(document) == (expected["name"], expected["description"], expected["content"], version + 1)


def test_blind_edits_of_different_fields_lose_nothing(tree, token):
    """Edits without a version: every write counts once in the version, and each field ends as
    its own latest write left it, whatever was written to the other fields meanwhile."""
    document = services.node_create(
        parent=tree["user"], type="document", name="notes.md", content=b"# Notes", by=system()
    )
    kinds = ["name", "name", "description", "description", "content", "content"]
    edits_per_writer = 4

    def writer(kind: str, number: int) -> list[dict]:
        return [edit_via(kind, token, document, number * 100 + edit, None) for edit in range(edits_per_writer)]

    outcomes = race(*(lambda kind=kind, number=number: writer(kind, number) for number, kind in enumerate(kinds)))

    assert_no_errors_but(outcomes)
    replies = [reply for outcome in outcomes for reply in outcome.value]
    total = len(kinds) * edits_per_writer
    # Each write saw its own version: none was overwritten by a write that read the same one.
    assert sorted(reply["version"] for reply in replies) == list(range(2, total + 2))
    name, description, content, version = state_of(document)
    assert version == total + 1
    for kind, value in (("name", name), ("description", description), ("content", content)):
        last = max((reply for reply in replies if reply["kind"] == kind), key=lambda reply: reply["version"])
        assert value == written(kind, last["number"])


# 3. Ticks, chats and goals on one agent --------------------------------------------------------


@pytest.fixture
def slow_llm(monkeypatch):
    """Every tick's and chat's LLM call takes a few milliseconds more, so that they overlap."""
    from agents.brains.services import chat, ticks

    for module in (ticks, chat):
        real = module.complete

        def slow(real=real, **kwargs):
            time.sleep(0.005)
            return real(**kwargs)

        monkeypatch.setattr(module, "complete", slow)


def log_entries_of(run: TickRun) -> int:
    """The log entries a tick run wrote, from its steps."""
    entries = 0
    for step in run.steps:
        detail = step["detail"]
        if step["name"] == "record":
            entries += len(detail["perceived"]) + 1
        elif step["name"] in ("deep_reflect", "replan") and "error" not in detail:
            entries += 1
    return entries


def test_ticks_chats_and_goals_on_one_agent_lose_no_write(tree, token, settings, slow_llm):
    # Small caps, so that the oldest neurons, synapses and paths are forgotten under the race.
    settings.MEMSITE_BRAIN_CAPS = {"neuron": 12, "synapse": 25, "path": 3, "goal": 100}
    settings.MEMSITE_TICK_DEEP_REFLECT_EVERY = 3
    agent = AgentFactory(name="racer")
    ticked_by(agent)
    chats: list[tuple[int, int]] = []  # the positions of each exchange's user and reply messages
    goals_made, goals_done = 0, 0

    def ticker() -> list[TickRun | None]:
        return [brain_services.tick_run(agent_id=agent.pk) for _ in range(2)]

    def chatter(text: str) -> tuple[int, int]:
        exchange = brain_services.chat_send(agent=agent, text=text, by=system())
        return exchange.user_message.position, exchange.reply_message.position

    def chatter_api(text: str) -> tuple[int, int]:
        url = reverse("agents-api:chat", kwargs={"agent_id": agent.pk})
        response = api_client(token).post(url, {"text": text}, format="json")
        assert response.status_code == 201, response.content
        body = response.json()
        return body["user"]["position"], body["reply"]["position"]

    def goal_maker(text: str) -> int:
        url = reverse("agents-api:goal-create", kwargs={"agent_id": agent.pk})
        response = api_client(token).post(url, {"text": text}, format="json")
        assert response.status_code == 201, response.content
        return response.json()["id"]

    def goal_completer(goal_id: int) -> int:
        response = api_client(token).post(
            reverse("agents-api:goal-complete", kwargs={"agent_id": agent.pk, "goal_id": goal_id}), format="json"
        )
        if response.status_code != 200:
            raise Refused(response.status_code, response.json()["detail"])
        return goal_id

    for round_number in range(5):
        doomed = goal_create(agent=agent, text=f"Finish round {round_number}.")
        goals_made += 1
        outcomes = race(
            ticker,
            ticker,
            lambda text=f"What did you find in round {round_number}?": chatter(text),
            lambda text=f"goal: Summarize round {round_number}": chatter(text),
            lambda text=f"Which paths did you read in round {round_number}?": chatter_api(text),
            lambda text=f"Report on round {round_number}.": goal_maker(text),
            lambda goal_id=doomed.pk: goal_completer(goal_id),
            lambda goal_id=doomed.pk: goal_completer(goal_id),
        )

        assert_no_errors_but(outcomes, Refused)
        # Two completions of one goal: one is done, the other is told it already is.
        refusals = [outcome.error for outcome in outcomes if outcome.error is not None]
        assert len(refusals) == 1 and refusals[0].status == 409 and "already done" in refusals[0].detail
        chats += [outcomes[2].value, outcomes[3].value, outcomes[4].value]
        goals_made += 2  # the goal maker's and the chat command's
        goals_done += 1

    runs = list(TickRun.objects.filter(brain_id=agent.pk).order_by("number"))
    brain = Brain.objects.get(pk=agent.pk)
    # Ticks one at a time: numbered in order, none left running, none overlapping another.
    assert [run.number for run in runs] == list(range(1, len(runs) + 1)) and brain.tick_count == len(runs)
    assert {run.status for run in runs} == {TickRun.Status.DONE} and brain.lease_until is None
    for earlier, later in itertools.pairwise(runs):
        assert earlier.ended_at <= later.started_at, f"ticks {earlier.number} and {later.number} overlap"

    # Counters on the brain's row equal the rows.
    assert brain.neuron_count == Neuron.objects.filter(brain=brain).count() <= cap("neuron")
    assert brain.synapse_count == Synapse.objects.filter(brain=brain).count() <= cap("synapse")
    assert brain.path_count == Explored.objects.filter(brain=brain, kind="path").count() <= cap("path")
    assert brain.url_count == Explored.objects.filter(brain=brain, kind="url").count()

    # Every collection numbered without a gap or a repeat, each kept to its cap.
    for kind in RecordKind.values:
        seqs = list(Record.objects.filter(brain=brain, kind=kind).order_by("seq").values_list("seq", flat=True))
        if seqs:
            assert seqs == list(range(seqs[-1] - len(seqs) + 1, seqs[-1] + 1))
            assert len(seqs) == min(seqs[-1], cap(kind))

    def count(kind: str) -> int:
        return Record.objects.filter(brain=brain, kind=kind).count()

    def steps(name: str) -> list[dict]:
        return [step["detail"] for run in runs for step in run.steps if step["name"] == name]

    # Every write is there: chat lines, thoughts, episodes, logs, goals.
    positions = [position for pair in chats for position in pair]
    assert len(set(positions)) == len(positions)
    stored = dict(Message.objects.filter(agent=agent).values_list("position", "role"))
    assert set(positions) <= set(stored) and list(stored.values()).count("user") == len(chats)
    assert count(RecordKind.THOUGHT) == sum(1 for detail in steps("reflect") if "thought" in detail)
    assert count(RecordKind.EPISODE) == len(steps("record"))
    goals_by_ticks = sum(len(detail.get("goals", [])) for detail in steps("deep_reflect"))
    assert Goal.objects.filter(brain=brain).count() == goals_made + goals_by_ticks
    assert Goal.objects.filter(brain=brain, status="done").count() == goals_done
    assert count(RecordKind.LOG) == sum(log_entries_of(run) for run in runs) + goals_made + goals_done


# 4. memorize and recall on one graph -----------------------------------------------------------


def step_messages(tag: str) -> list[dict]:
    return [
        {"role": "assistant", "content": f"I look up service {tag}. " + "detail " * 12},
        {"role": "tool", "content": f"Service {tag} listens on port {8000 + len(tag)}. " + "detail " * 12},
    ]


def test_memorize_and_recall_on_one_graph_run_one_at_a_time(tree, monkeypatch):
    monkeypatch.setattr("agents.graphs.tasks.graph_work.delay", lambda graph_id: None)
    graph = graph_services.graph_create(
        space=default_space(), task="Find the ports", model="gpt-4", trigger_tokens=900, target_tokens=500
    )
    runs: list[tuple[float, float, int, int]] = []  # start, end, thread, op

    def watched(original: Callable) -> Callable:
        def run(graph, op, *args, **kwargs):
            started = time.monotonic()
            try:
                return original(graph, op, *args, **kwargs)
            finally:
                runs.append((started, time.monotonic(), threading.get_ident(), op.pk))

        return run

    graphs_module = graph_services.graphs
    monkeypatch.setattr(graphs_module, "_memorize", watched(graphs_module._memorize))
    monkeypatch.setattr(graphs_module, "_recall", watched(graphs_module._recall))
    sent: dict[int, list[dict]] = {}  # each memorize op's messages

    def memorizer(tag: str) -> int:
        messages = step_messages(f"{tag}a") + step_messages(f"{tag}b")
        op = graph_services.graph_memorize(by=system(), graph=graph, messages=messages)
        sent[op.pk] = messages
        graph_services.graph_work(graph_id=graph.pk)
        return op.pk

    def recaller() -> int:
        op = graph_services.graph_recall(graph=graph, by=system())
        graph_services.graph_work(graph_id=graph.pk)
        return op.pk

    for round_number in range(6):
        outcomes = race(
            *(lambda tag=f"{round_number}-{number}": memorizer(tag) for number in range(3)),
            recaller,
            lambda: graph_services.graph_work(graph_id=graph.pk),
        )
        assert_no_errors_but(outcomes)
        # Whoever ran last saw every queued operation: none is left waiting for a worker.
        assert not GraphOp.objects.filter(graph=graph, status=GraphOp.Status.QUEUED).exists()

    # One operation at a time: no run of one thread overlaps a run of another (a recall that a
    # memorize starts runs inside it, in its thread).
    for (start, end, thread, op), (other_start, other_end, other, other_op) in itertools.combinations(runs, 2):
        if thread != other:
            assert end <= other_start or other_end <= start, f"operations {op} and {other_op} ran at once"
    ops = GraphOp.objects.filter(graph=graph)
    statuses = set(ops.filter(kind__in=["memorize", "recall"]).values_list("status", flat=True))
    assert statuses <= {"applied", "rejected"}
    assert ops.filter(kind="memorize").count() == len(sent) == 18
    assert ops.filter(kind="recall", status="applied").exists()

    # Turns: ids unique and consecutive, each memorize's turns its own messages in order.
    graph.refresh_from_db()
    turns = {turn.turn_id: turn for turn in Turn.objects.filter(graph=graph)}
    assert sorted(turns) == list(range(graph.next_turn_id)) and graph.next_turn_id == 18 * 4
    for op in ops.filter(kind="memorize"):
        ids = op.detail["turn_ids"]
        assert ids == list(range(ids[0], ids[0] + 4))
        assert [{"role": turns[id].role, "content": turns[id].content} for id in ids] == sent[op.pk]

    # Nodes: ids unique and consecutive, no edge to a missing node, and a valid snapshot.
    node_ids = sorted(GraphNode.objects.filter(graph=graph).values_list("node_id", flat=True))
    assert node_ids == list(range(1, graph.next_node_id))
    for src, dst in GraphEdge.objects.filter(graph=graph).values_list("src", "dst"):
        assert src in node_ids and dst in node_ids
    snapshot_read(agent_selectors.graph_snapshot(graph=graph))
