"""One of everything a URL can name, written through the services as real writes make them:
nodes in a user folder and a project, an agent with its conversation, a brain, a checkpoint and
a summary, a reasoning graph with nodes, edges, turns and an operation, a search with a step and
its LLM call, a question waiting for the user, a tool call, the users that call them, and
their spaces and tokens.

Every user-written text goes through `Words`: the authorization tests use plain words, the XSS
tests a script payload in every one of them."""

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta

from django.contrib.auth.models import Group
from django.utils import timezone

from agents.brains.models import Goal, TickRun
from agents.brains.services.brains import brain_writing, goal_create
from agents.context import services as context_services
from agents.context.models import Agent, Checkpoint, Message, Summary
from agents.graphs import services as graph_services
from agents.graphs.models import Graph, GraphOp, Turn
from memory import selectors, services
from memory.models import Node, Search, SearchQuestion, SearchStep, ToolCall
from memsite.llm.models import LLMCall
from memsite.spaces import services as space_services
from tests.factories import (
    SearchFactory,
    SearchStepFactory,
    StaffFactory,
    UserFactory,
    acting,
    default_space,
    system,
    token_for,
)
from tests.llm.factories import make_call


@dataclass(frozen=True)
class Words:
    """The texts a world is written with. `text` for free text; `name` for names and other
    one-line fields that refuse '/' (node names, file paths); `short` for fields of at most 64
    characters (a turn's role)."""

    text: Callable[[str], str] = lambda label: label
    name: Callable[[str], str] = lambda label: label
    short: Callable[[str], str] = lambda label: label


PLAIN = Words()


@dataclass
class World:
    user: object
    staff: object
    user_token: str  # an editor's
    staff_token: str  # an owner's, with the manage scope
    internal: dict[str, Node]
    folder: Node  # a folder in the `user` internal folder
    document: Node  # a document in `folder`
    user_document: Node  # a document directly in the `user` folder (a tab of user preferences)
    destination: Node  # a folder in `references`, to move nodes into
    project: Node
    project_file: Node
    agent: Agent
    message: Message
    checkpoint: Checkpoint
    summary: Summary
    goal: Goal
    graph: Graph
    graph_node_id: int
    turn: Turn
    graph_op: GraphOp
    search: Search
    step: SearchStep
    question: SearchQuestion
    llm_call: LLMCall
    tool_call: ToolCall
    group: Group
    tick: TickRun
    words: Words = field(default=PLAIN)


def llm_call(words: Words, **overrides) -> LLMCall:
    """A ledger row whose prompts, reply and schema name are `words`' texts."""
    messages = [
        {"role": "system", "content": words.text("system prompt")},
        {"role": "user", "content": words.text("user prompt")},
    ]
    return make_call(
        messages=messages, reply=words.text("the reply"), schema_name=words.name("RouteReply"), **overrides
    )


def build_world(words: Words = PLAIN) -> World:
    text, name = words.text, words.name
    user = UserFactory(username=name("reader")[:150])
    staff = StaffFactory(username=name("keeper")[:150])
    # -- spaces: the default one's name, another of the staff's to switch to, a named token --------
    space_services.space_update(space=default_space(), name=name("Default"))
    space_services.space_create(user=staff, slug="lab", name=name("The lab"))
    space_services.token_create(member=user, space=default_space(), name=name("swarm node a"))
    internal = {
        folder: selectors.node_internal_folder(space=default_space(), name=folder)
        for folder in ("swarmstar", "user", "projects", "references")
    }

    # -- the memory tree -------------------------------------------------------------------------
    folder = services.node_create(
        parent=internal["user"], type="folder", name=name("notes"), description=text("Notes folder."), by=acting(user)
    )
    document = services.node_create(
        parent=folder,
        type="document",
        name=name("plan.md"),
        description=text("The plan."),
        content=(text("# The plan") + "\n\n[open](javascript:window.__xss=1)\n\n" + text("Step one.")).encode(),
        by=acting(user),
    )
    user_document = services.node_create(
        parent=internal["user"],
        type="document",
        name=name("habits.md"),
        description=text("The user's habits."),
        content=text("Works at night.").encode(),
        by=acting(user),
    )
    destination = services.node_create(
        parent=internal["references"], type="folder", name=name("archive"), description=text("Old things."), by=system()
    )
    project = services.node_create(
        parent=internal["projects"],
        type="project_root_folder",
        name=name("todo-api"),
        description=text("A project."),
        by=system(),
    )
    project_file = services.node_create(
        parent=project,
        type="project_file_bytes",
        name=name("main.py"),
        description=text("The entry point."),
        context={"file_path": f"src/{name('main.py')}"},
        content=text("print('hello')").encode(),
        by=system(),
    )

    # -- an agent, its conversation, brain, checkpoint and summary ---------------------------------
    agent = context_services.agent_create(
        space=default_space(),
        name=text("scout")[:200],
        model="gpt-4",
        instructions=text("Help the user.") + " $user",
        context_variables={"user": text("Ada")},
    )
    message = context_services.message_append(
        agent=agent, role="user", content=text("Hello there."), sender=text("ada")
    )
    context_services.message_append(agent=agent, role="assistant", content=text("Hello, Ada."))
    # A chat reply citing a node: its label is the node's path, made of names users write.
    cited = {"id": f"node:{document.pk}", "kind": "node", "ref": document.pk, "label": "/" + name("cited notes")}
    context_services.message_append(
        agent=agent,
        role="assistant",
        content=text("A cited reply."),
        data={"provider": "offline", "citations": [cited]},
    )
    start = timezone.now() - timedelta(minutes=10)
    with brain_writing(agent=agent) as brain:
        for kind in ("thought", "inner_thought", "episode", "fact", "self_instruction", "log"):
            item = {"type": text("list_dir"), "where": text("/notes")} if kind == "episode" else {}
            brain.record(kind=kind, text=text(f"A {kind}."), item=item, at=start)
        brain.explored(kind="path", key=text("/user/notes"), summary=text("Notes of the user."), at=start)
        brain.explored(kind="url", key="https://docs.example.org/" + name("guide"), summary=text("A guide."), at=start)
        me = brain.neuron(kind="self", label="self", at=start, strength=0.5)
        concept = brain.neuron(kind="concept", label=text("cats"), at=start)
        brain.connect(me, concept, at=start, weight=0.4)
        brain.set(
            plan=[text("List the notes."), text("Read a note.")],
            plan_step=0,
            self_summary=text("I read notes."),
            last_user_message=text("Look at the notes."),
            last_error=text("read_file failed."),
            tick_count=1,
        )
    goal = goal_create(agent=agent, text=text("Learn the user's habits.")[:500])
    tick = TickRun.objects.create(
        brain_id=agent.pk,
        number=1,
        status="done",
        action="list_dir",
        arguments={"path": text("/notes")},
        outcome=text("Listed the notes."),
        error=text("No error."),
        steps=[{"name": "decide", "ms": 3, "detail": {"note": text("a step")}}],
        emotions={"joy": 0.4, "frustration": 0.1, "interest": 0.6, "confusion": 0.0},
        hormones={"dopamine": 0.5, "cortisol": 0.2, "serotonin": 0.5},
        ended_at=timezone.now(),
    )
    checkpoint = context_services.checkpoint_create(agent=agent)
    summary = Summary.objects.create(
        agent=agent, through=1, status=Summary.Status.DONE, content=text("They said hello."), error=text("none")
    )

    # -- a reasoning graph ---------------------------------------------------------------------------
    graph = graph_services.graph_create(
        space=default_space(), task=text("Find the port of the API.")[:2000], agent=agent, model="gpt-4"
    )
    memorized = graph_services.graph_memorize(
        by=system(),
        graph=graph,
        messages=[
            {"role": words.short("assistant"), "content": text("I look up the port.")},
            {"role": "tool", "content": text("The API listens on 8443.")},
        ],
    )
    graph_services.graph_snapshot_import(
        graph=graph,
        document={
            "nodes": {
                "1": {
                    "node_id": 1,
                    "kind": "task",
                    "thought": text("The task."),
                    "related_turn_ids": [],
                    "active": True,
                },
                "2": {
                    "node_id": 2,
                    "kind": "subtask",
                    "thought": [{"role": words.short("assistant"), "content": text("A note.")}],
                    "related_turn_ids": [0, 1],
                    "active": True,
                },
                "3": {
                    "node_id": 3,
                    "kind": "evidence",
                    "thought": text("8443."),
                    "related_turn_ids": [1],
                    "active": True,
                },
            },
            "edges": [
                {"src": 1, "dst": 2, "rationale": text("decompose")},
                {"src": 3, "dst": 2, "rationale": text("support")},
            ],
        },
    )
    GraphOp.objects.filter(graph=graph).update(rationale=text("Why it was done."), error=text("What went wrong."))
    graph_op = GraphOp.objects.filter(graph=graph).order_by("id").first()
    assert memorized.pk
    turn = Turn.objects.filter(graph=graph).order_by("turn_id").first()

    # -- a search, its step and LLM call, a question, a tool call ----------------------------------
    call = llm_call(words, error=text("An error."))
    search = SearchFactory(
        questions=[text("Where is the plan?")],
        context=text("Planning the week."),
        created_by=user,
        status=Search.Status.DONE,
        result={
            "answers": [
                {
                    "question": text("Where is the plan?"),
                    "answer": text("In notes."),
                    "node_ids": [document.pk],
                    "complete": True,
                }
            ],
            "nodes": [{"id": document.pk, "name": document.name, "path": f"/user/{folder.name}/{document.name}"}],
            "open_questions": [],
            "ended_because": text("answered"),
        },
        ended_because=text("answered")[:255],
    )
    search.state = {
        **(search.state or {}),
        "trail": [folder.pk],
        "visited": [document.pk],
        "unviable": [destination.pk],
    }
    search.save(update_fields=["state"])
    step = SearchStepFactory(
        search=search,
        kind="route",
        summary=text("Entered notes."),
        node=folder,
        llm_call=call,
        detail={"reason": text("the notes folder")},
    )
    waiting = SearchFactory(
        questions=[text("What does the user prefer?")], context=text("Asking."), status=Search.Status.WAITING
    )
    question = SearchQuestion.objects.create(search=waiting, questions=waiting.questions)
    tool_call = ToolCall.objects.create(
        key="0" * 64, tool="grep", arguments={"pattern": text("plan")}, result=text("found it"), search=search
    )
    group = Group.objects.create(name=name("curators")[:150])

    return World(
        user=user,
        staff=staff,
        user_token=token_for(user),
        staff_token=token_for(staff, manage=True),
        internal=internal,
        folder=folder,
        document=document,
        user_document=user_document,
        destination=destination,
        project=project,
        project_file=project_file,
        agent=agent,
        message=message,
        checkpoint=checkpoint,
        summary=summary,
        goal=goal,
        graph=graph,
        graph_node_id=2,
        turn=turn,
        graph_op=graph_op,
        search=search,
        step=step,
        question=question,
        llm_call=call,
        tool_call=tool_call,
        group=group,
        tick=tick,
        words=words,
    )
