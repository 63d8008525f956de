"""Property-based fuzzing of the whole REST API from its own OpenAPI schema (schemathesis).

Every operation the schema at /api/schema/ describes is called in-process through the WSGI
application with a user's token (for the spaces API, an owner's that manages the space), with
valid and invalid inputs generated from the schema (the examples, coverage and fuzzing phases). Path ids are those of a
small world (an agent with a brain and a checkpoint, a reasoning graph, a memory tree, searches
and a pending question, a space's members and tokens) about half of the time, so that most
operations get past their 404s. Every response must be below 500, have a documented status
code, content type and headers, and match the schema documented for it; input the schema
calls invalid must be refused.

Generation is derandomized: a run sends the same requests as the last one with the same
PYTHONHASHSEED (schemathesis orders some of its choices by hash). Select it with `-m fuzz`; it
runs with the rest of the suite."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
import schemathesis
from django.contrib.auth import get_user_model
from django.core import signals
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.core.parameters import ParameterLocation
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    missing_required_header,
    negative_data_rejection,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
    unsupported_method,
)

from agents.brains.services.brains import brain_create, goal_create
from agents.context import services as context_services
from agents.graphs import services as graph_services
from memory import selectors
from memory.models import Search, SearchQuestion
from memsite.spaces.logic import Role
from memsite.spaces.services import token_create
from tests.agents.graphs.api.test_graphs import INDEXED
from tests.factories import (
    AgentFactory,
    DocumentFactory,
    GraphFactory,
    NodeFactory,
    ProjectFactory,
    SearchFactory,
    SearchStepFactory,
    UserFactory,
    default_space,
    system,
    token_for,
)

pytestmark = [pytest.mark.fuzz, pytest.mark.django_db]

# Examples per operation in the fuzzing phase (the examples and coverage phases add their own).
MAX_EXAMPLES = 25
MIN_REQUESTS = 2_000
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    response_schema_conformance,
    content_type_conformance,
    response_headers_conformance,
    negative_data_rejection,  # what the schema calls invalid is refused with a 4xx
    missing_required_header,
    unsupported_method,  # a method the path does not document is a 405
]

# Loaded once, when the module is collected: the schema the running site serves.
schema = schemathesis.openapi.from_wsgi("/api/schema/", get_wsgi_application())
schema.config.generation.update(modes=["positive", "negative"])
# Ids of the test's world (below), by path parameter; filled by the `world` fixture.
WORLD: dict[str, list[Any]] = {}
SENT: Counter[str] = Counter()


def world_keys(operation, path_parameters: dict[str, Any]) -> dict[str, str] | None:
    """The WORLD key of each path parameter, or None when the world has no row for one."""
    graph = operation.path.startswith("/api/graphs/")
    keys = {name: "graph_node_id" if graph and name == "node_id" else name for name in path_parameters}
    return keys if all(WORLD.get(key) for key in keys.values()) else None


@schema.hook("flatmap_path_parameters")
def existing_ids_half_of_the_time(context, path_parameters: dict[str, Any]):
    """The fuzzing phase's path ids, or ids of rows that exist: past the 404, into the operation."""
    keys = world_keys(context.operation, path_parameters) if path_parameters else None
    # An id of the wrong type is the invalid part of a negative case: left as it is, or the case
    # would be sent with a valid path and the rest of it judged as if it were invalid.
    if keys is None or not all(type(path_parameters[name]) is type(WORLD[key][0]) for name, key in keys.items()):
        return st.just(path_parameters)
    existing = st.fixed_dictionaries({name: st.sampled_from(WORLD[key]) for name, key in keys.items()})
    return st.one_of(st.just(path_parameters), existing)


def with_existing_ids(case) -> None:
    """The coverage phase varies the query and the body around fixed path ids (`0`) and takes no
    hooks: where those ids are meant to be valid, put ids of rows that exist, in turn."""
    if not case.path_parameters or case.meta is None or case.meta.phase.name.value != "coverage":
        return
    path = case.meta.components.get(ParameterLocation.PATH)
    keys = world_keys(case.operation, case.path_parameters)
    if keys is None or path is None or not path.mode.is_positive:
        return
    turn = SENT[case.operation.label]
    case.path_parameters = {name: WORLD[key][turn % len(WORLD[key])] for name, key in keys.items()}


class FakeClock:
    """Stands in for `time` in the search API's `?wait` loop: no search ever runs here (nothing
    commits), so a wait would otherwise last its whole N seconds."""

    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def world(db):
    """An agent with a conversation, a checkpoint, a brain and a goal; a reasoning graph with
    four nodes and a memorized step; a folder, a document, a project and its file; a queued
    search, one done with a step and a sub-search, and one waiting for the answer to its question;
    the space's only owner (whom the last-owner rule keeps one), a member, and a token of each."""
    agent = AgentFactory()
    context_services.message_append(agent=agent, role="user", content="Where is the deploy script?")
    checkpoint = context_services.checkpoint_create(agent=agent)
    brain_create(agent=agent)
    goal = goal_create(agent=agent, text="Keep the deploy notes current")
    graph = GraphFactory()
    graph_services.graph_snapshot_import(graph=graph, document=INDEXED)
    graph_services.graph_memorize(
        by=system(),
        graph=graph,
        messages=[
            {"role": "assistant", "content": "I look up the deploy service."},
            {"role": "tool", "content": "It listens on port 8080."},
        ],
    )

    folder = NodeFactory()
    document = DocumentFactory(parent=folder)
    project = ProjectFactory()
    project_file = NodeFactory(
        parent=project,
        type="project_file_bytes",
        name="main.py",
        context={"file_path": "main.py"},
        content=b"print('hi')\n",
    )
    queued = SearchFactory()
    done = SearchFactory(
        status=Search.Status.DONE,
        ended_because="answered",
        result={
            "answers": [{"question": "Where?", "answer": "In notes.", "node_ids": [document.pk], "complete": True}],
            "nodes": [{"id": document.pk, "name": document.name, "path": "/swarmstar/notes.md"}],
            "open_questions": [],
            "ended_because": "answered",
        },
    )
    SearchStepFactory(search=done, node=document)
    SearchFactory(parent=done, depth=1, status=Search.Status.DONE)
    waiting = SearchFactory(status=Search.Status.WAITING)
    question = SearchQuestion.objects.create(search=waiting, questions=["Which port?"])
    owner, member = UserFactory(role=Role.OWNER), UserFactory()
    WORLD.update(
        agent_id=[agent.pk],
        checkpoint_id=[checkpoint.pk],
        goal_id=[goal.pk],
        graph_id=[graph.pk],
        graph_node_id=[1, 2, 3, 4],
        node_id=[
            selectors.node_internal_folder(space=default_space(), name="swarmstar").pk,
            folder.pk,
            document.pk,
            project.pk,
            project_file.pk,
        ],
        search_id=[queued.pk, done.pk, waiting.pk],
        version=[1],  # the document's
        question_id=[question.pk],
        slug=["default"],
        username=[owner.username, member.username],
        token_id=[token_create(member=user, space=default_space(), name="fuzzed").token.pk for user in (owner, member)],
    )
    yield WORLD
    WORLD.clear()


@pytest.fixture
def quiet(settings, monkeypatch, offline_llm):
    """No throttling, no broker, no model, no waiting."""
    settings.MEMSITE_API_RATE = "1000000/min"
    for task in (
        "memory.tasks.search_run",
        "agents.brains.tasks.tick_run",
        "agents.graphs.tasks.graph_work",
        "agents.context.tasks.summary_write",
    ):
        monkeypatch.setattr(f"{task}.delay", lambda **kwargs: None)
    clock = FakeClock()
    monkeypatch.setattr("memory.selectors.searches.monotonic", clock.monotonic)
    monkeypatch.setattr("memory.selectors.searches.sleep", clock.sleep)
    # The test's transaction spans every request: Django must not close the connection at the
    # end of each one, as its own test client also arranges.
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@pytest.fixture
def token(world, quiet) -> str:
    return token_for(UserFactory())


@pytest.fixture
def owner_token(world, quiet) -> str:
    return token_for(get_user_model().objects.get(username=world["username"][0]), manage=True)


def fuzzed(max_examples: int) -> hypothesis_settings:
    """Hypothesis as every fuzz run here has it: derandomized, remembering nothing between runs."""
    return hypothesis_settings(
        max_examples=max_examples,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.filter_too_much],
    )


@schema.parametrize()
@fuzzed(MAX_EXAMPLES)
def test_every_operation_answers_within_its_schema(case, token, owner_token):
    with_existing_ids(case)
    SENT[case.operation.label] += 1
    key = owner_token if case.operation.path.startswith("/api/spaces/") else token
    case.call_and_validate(headers={"Authorization": f"Token {key}"}, checks=CHECKS)


def test_the_fuzzing_sent_enough_requests():
    """After the fuzzing above (a module's tests run in order)."""
    operations = {operation.ok().label for operation in schema.get_all_operations()}
    if set(SENT) != operations:
        pytest.skip("Not every operation was fuzzed in this run.")
    total = sum(SENT.values())
    print(f"\n{total} generated requests over {len(SENT)} operations")
    assert total >= MIN_REQUESTS
