"""The bad-input catalogue's world: one of everything the write endpoints name, built through
the services; and a dump of the whole database to compare before and after a refused request."""

from dataclasses import dataclass
from decimal import Decimal

from django.apps import apps
from django.core import serializers

from agents.brains.models import Goal
from agents.brains.services.brains import goal_complete, goal_create
from agents.context import services as context_services
from agents.context.models import Agent, Checkpoint
from agents.graphs import services as graph_services
from agents.graphs.models import Graph
from memory import selectors, services
from memory.models import Node, Search, SearchQuestion
from memsite.llm.models import LLMCall
from memsite.llm.services import llm_call_record
from tests.factories import SearchFactory, StaffFactory, UserFactory, acting, default_space, system

# Every app whose rows a request could change: memsite's own, and the users, memberships and
# tokens it authenticates with. Proxy models are their concrete model's rows again.
DUMPED_APPS = ("memory", "agents", "llm", "auth", "spaces", "admin")


def database_dump() -> str:
    """Every row of every model of `DUMPED_APPS`, model by model in pk order, as Django's JSON
    serialization: equal dumps mean nothing was written. No column is left out: a refused
    request must not touch a timestamp, a counter or the LLM ledger either."""
    parts = []
    for label in DUMPED_APPS:
        for model in sorted(apps.get_app_config(label).get_models(), key=lambda model: model.__name__):
            if model._meta.proxy:
                continue
            rows = model._default_manager.order_by("pk")
            parts.append(f"-- {model._meta.label}\n" + serializers.serialize("json", rows, indent=1))
    return "\n".join(parts)


@dataclass
class World:
    user: object
    staff: object
    internal: dict[str, Node]
    folder: Node  # /user/notes
    child: Node  # /user/notes/drafts
    grandchild: Node  # /user/notes/drafts/old
    document: Node  # /user/notes/plan.md
    accented: Node  # /user/notes/café.md, its name NFC-composed
    destination: Node  # /references/archive, holding a folder named "drafts"
    project: Node  # /projects/todo-api
    project_file: Node  # src/main.py in the project
    other_project_folder: Node  # /projects/web/lib, holding the file src/main.py/x.py of that project
    agent: Agent  # with a conversation, a brain, goals and a checkpoint
    other_agent: Agent  # with a checkpoint, no brain
    checkpoint: Checkpoint
    foreign_checkpoint: Checkpoint  # the other agent's
    goal: Goal  # active
    done_goal: Goal
    graph: Graph
    ended_search: Search
    waiting_search: Search
    question: SearchQuestion  # pending
    answered_question: SearchQuestion
    llm_call: LLMCall


def build_world() -> World:
    user = UserFactory(username="reader")
    staff = StaffFactory(username="keeper")
    internal = {
        name: selectors.node_internal_folder(space=default_space(), name=name)
        for name in ("swarmstar", "user", "projects", "references")
    }

    folder = services.node_create(
        parent=internal["user"], type="folder", name="notes", description="Notes.", by=acting(user)
    )
    child = services.node_create(parent=folder, type="folder", name="drafts", by=acting(user))
    grandchild = services.node_create(parent=child, type="folder", name="old", by=acting(user))
    document = services.node_create(
        parent=folder, type="document", name="plan.md", description="The plan.", content=b"# Plan", by=acting(user)
    )
    accented = services.node_create(
        parent=folder, type="document", name="caf\u00e9.md", content=b"# Coffee", by=acting(user)
    )
    destination = services.node_create(parent=internal["references"], type="folder", name="archive", by=acting(user))
    services.node_create(parent=destination, type="folder", name="drafts", by=acting(user))
    project = services.node_create(
        parent=internal["projects"], type="project_root_folder", name="todo-api", by=system()
    )
    project_file = services.node_create(
        parent=project,
        type="project_file_bytes",
        name="main.py",
        context={"file_path": "src/main.py"},
        content=b"print('hello')\n",
        by=system(),
    )
    other_project = services.node_create(
        parent=internal["projects"], type="project_root_folder", name="web", by=system()
    )
    other_project_folder = services.node_create(parent=other_project, type="folder", name="lib", by=system())
    services.node_create(
        parent=other_project_folder,
        type="project_file_bytes",
        name="x.py",
        context={"file_path": "src/main.py/x.py"},
        by=system(),
    )

    agent = context_services.agent_create(
        space=default_space(),
        name="scout",
        model="gpt-4",
        instructions="Help $user.",
        context_variables={"user": "Ada"},
    )
    context_services.message_append(agent=agent, role="user", content="Hello.")
    context_services.message_append(agent=agent, role="assistant", content="Hello, Ada.")
    checkpoint = context_services.checkpoint_create(agent=agent)
    other_agent = context_services.agent_create(space=default_space(), name="builder", model="gpt-4")
    foreign_checkpoint = context_services.checkpoint_create(agent=other_agent)
    goal = goal_create(agent=agent, text="Learn the user's habits.")
    done_goal = goal_complete(agent=agent, goal_id=goal_create(agent=agent, text="Read the notes.").pk)

    graph = graph_services.graph_create(
        space=default_space(), task="Find the port", model="gpt-4", trigger_tokens=8_000, target_tokens=4_000
    )
    graph_services.graph_snapshot_import(
        graph=graph,
        document={
            "nodes": {
                "1": {"node_id": 1, "kind": "task", "thought": "Find the port", "related_turn_ids": [], "active": True},
                "2": {
                    "node_id": 2,
                    "kind": "subtask",
                    "thought": "Read the config",
                    "related_turn_ids": [0],
                    "active": True,
                },
                "3": {"node_id": 3, "kind": "evidence", "thought": "8443", "related_turn_ids": [1], "active": True},
            },
            "edges": [{"src": 1, "dst": 2, "rationale": "decompose"}, {"src": 3, "dst": 2, "rationale": "support"}],
        },
    )
    graph_services.graph_memorize(
        by=system(),
        graph=graph,
        messages=[{"role": "assistant", "content": "cat config"}, {"role": "tool", "content": "port=8443"}],
    )

    ended_search = SearchFactory(questions=["Where is the plan?"], created_by=user, status=Search.Status.DONE)
    waiting_search = SearchFactory(questions=["What does the user prefer?"], status=Search.Status.WAITING)
    question = SearchQuestion.objects.create(search=waiting_search, questions=waiting_search.questions)
    answered_search = SearchFactory(questions=["Which editor?"], status=Search.Status.DONE)
    answered_question = SearchQuestion.objects.create(
        search=answered_search, questions=answered_search.questions, status=SearchQuestion.Status.ANSWERED, answer="vim"
    )
    llm_call = llm_call_record(
        purpose="route",
        provider="offline",
        model="gpt-4o-mini",
        ok=True,
        messages=[{"role": "user", "content": "Where is the plan?"}],
        reply="{}",
        prompt_tokens=10,
        completion_tokens=2,
        tokens_reported=False,
        tokens_approximate=True,
        latency_ms=1,
        cost_usd=Decimal(0),
        retries=0,
        repairs=0,
        response_mode="offline",
        schema_name="RouteReply",
        served=ended_search,
        by=system(),
    )
    return World(
        user=user,
        staff=staff,
        internal=internal,
        folder=folder,
        child=child,
        grandchild=grandchild,
        document=document,
        accented=accented,
        destination=destination,
        project=project,
        project_file=project_file,
        other_project_folder=other_project_folder,
        agent=agent,
        other_agent=other_agent,
        checkpoint=checkpoint,
        foreign_checkpoint=foreign_checkpoint,
        goal=goal,
        done_goal=done_goal,
        graph=graph,
        ended_search=ended_search,
        waiting_search=waiting_search,
        question=question,
        answered_question=answered_question,
        llm_call=llm_call,
    )
