"""Each action on its own (`action_run`), and what a tick records of it (perception, chat)."""

import pytest
from django.contrib.auth import get_user_model

from agents.brains import services
from agents.brains.models import Brain, Explored, Neuron, Record, Synapse
from agents.brains.services.actions import ACTIONS, action_run, explore_next, note_folder_name
from agents.context.models import Message
from agents.context.services import message_append
from memory import selectors as memory_selectors
from memory import services as memory_services
from memory.models import Node, Search
from memsite.fetch import FetchedPage, FetchFailed
from memsite.spaces.principals import Principal, token_principal
from memsite.spaces.selectors import space_default
from memsite.spaces.services import token_create
from tests.factories import AgentFactory, DocumentFactory, NodeFactory, UserFactory, acting, default_space
from tests.fake_openai import Reply

pytestmark = pytest.mark.django_db


def ticker() -> Principal:
    """The member the agent acts for in these tests (who set it ticking): the same throughout a test."""
    user = get_user_model().objects.filter(username="ticker").first() or UserFactory(username="ticker")
    return acting(user)


def run(agent, action: str, **arguments):
    return action_run(agent=agent, name=action, arguments=arguments, by=ticker())


def script_tick(llm, action: str, **arguments) -> None:
    """A tick that takes `action`, reflects, and keeps its plan (no replan)."""
    llm.script(
        Reply.json({"action": action, "arguments": arguments, "reason": "To see."}),
        Reply.json({"thought": "Noted.", "inner_thought": None}),
    )


def keep_plan(agent) -> None:
    from agents.brains.services.brains import brain_writing

    with brain_writing(agent=agent) as write:
        write.set(plan=["a", "b", "c"], plan_step=0)


def connected_to_self(agent, key: str) -> bool:
    brain = Brain.objects.get(pk=agent.pk)
    me = Neuron.objects.get(brain=brain, key="self")
    neuron = Neuron.objects.get(brain=brain, key=key)
    return Synapse.objects.filter(source=me, target=neuron).exists()


# list_dir and read_file ----------------------------------------------------------------------------


def test_list_dir_names_the_children(agent, internal):
    outcome = run(agent, "list_dir", path="user/")

    assert outcome.ok
    assert outcome.summary == (
        "Listed /user: 3 children: user_preferences.md, requested_features.md, user_requirements.md."
    )
    assert outcome.where == "/user" and outcome.state == {"lastDir": "/user"}
    assert [(item.kind, item.key) for item in outcome.perceived] == [("path", "/user")]


def test_list_dir_of_the_top_lists_the_roots(agent, internal):
    outcome = run(agent, "list_dir", path="/")

    assert outcome.ok and outcome.summary.startswith("Listed /: 4 children: swarmstar/, user/, projects/, references/")


def test_list_dir_refuses_a_document_and_a_missing_path(agent, internal):
    not_a_folder = run(agent, "list_dir", path="/user/user_preferences.md")
    missing = run(agent, "list_dir", path="/nowhere")

    assert not not_a_folder.ok and "not a folder" in not_a_folder.summary
    assert not missing.ok and missing.summary == "list_dir failed: No memory node at '/nowhere'."


def test_read_file_is_clipped_to_the_read_budget(agent, internal, settings):
    settings.MEMSITE_TICK_READ_TOKENS = 50
    DocumentFactory(name="long.md", description="A long note.", content=("word " * 1_000).encode())

    outcome = run(agent, "read_file", path="/swarmstar/long.md")

    assert outcome.ok and outcome.counters == {"totalReads": 1}
    assert outcome.summary.startswith("Read /swarmstar/long.md (5000 bytes (cut to the read budget)): A long note.")
    assert outcome.content.startswith("# long.md\nA long note.\n\nword word")
    assert outcome.content.count("word") <= 51


def test_read_file_refuses_a_folder(agent, internal):
    outcome = run(agent, "read_file", path="/user")

    assert not outcome.ok and "is a folder" in outcome.summary


def test_list_dir_and_read_file_mark_paths_explored_and_connect_them_to_self(agent, internal, llm):
    keep_plan(agent)
    script_tick(llm, "list_dir", path="/user")
    services.tick_run(agent_id=agent.pk)
    script_tick(llm, "read_file", path="/user/user_preferences.md")

    run_ = services.tick_run(agent_id=agent.pk)

    assert run_.status == "done" and run_.outcome.startswith("Read /user/user_preferences.md")
    explored = dict(Explored.objects.filter(brain_id=agent.pk, kind="path").values_list("key", "summary"))
    assert set(explored) == {"/user", "/user/user_preferences.md"}
    assert "involved" in explored["/user/user_preferences.md"]
    assert connected_to_self(agent, "path:/user") and connected_to_self(agent, "path:/user/user_preferences.md")
    brain = Brain.objects.get(pk=agent.pk)
    assert brain.extra_state == {"lastDir": "/user", "totalReads": 1}
    assert brain.path_count == 2
    logs = list(
        Record.objects.filter(brain=brain, kind="log", data__type="explore_path").values_list("text", flat=True)
    )
    assert logs == ["explore_path: /user", "explore_path: /user/user_preferences.md"]
    # The reflection saw what was read.
    assert "How much the user wants to be involved" in llm.requests[-1].messages[1]["content"]


def test_exploring_a_path_again_is_not_novel(agent, internal, llm):
    from agents.brains.logic import affect

    def dopamine_after_listing() -> tuple[float, dict]:
        before = Brain.objects.get(pk=agent.pk).hormones
        script_tick(llm, "list_dir", path="/user")
        services.tick_run(agent_id=agent.pk)
        after = Brain.objects.get(pk=agent.pk).hormones
        return after["dopamine"], before

    keep_plan(agent)
    first, before = dopamine_after_listing()
    assert first == affect.hormones_after(before, succeeded=True, novel=True)["dopamine"]
    again, before = dopamine_after_listing()
    assert again == affect.hormones_after(before, succeeded=True, novel=False)["dopamine"]


# write_note ------------------------------------------------------------------------------------------


def notes_of(agent) -> str:
    return f"/swarmstar/agent-{agent.pk}-scout"


def test_write_note_creates_the_document_in_the_agents_folder(agent, internal):
    outcome = run(agent, "write_note", name="findings.md", content="# Findings\n\nThe user folder has three documents.")

    assert outcome.ok and outcome.novel
    assert outcome.summary == f"Wrote the note {notes_of(agent)}/findings.md (48 bytes)."
    folder = memory_selectors.node_resolve(space=space_default(), path=notes_of(agent))
    note = memory_selectors.node_resolve(space=space_default(), path=f"{notes_of(agent)}/findings.md")
    assert folder.type == "folder" and note.type == "document" and outcome.detail == {"node_id": note.pk}
    assert memory_selectors.node_content(node=note) == b"# Findings\n\nThe user folder has three documents."
    assert note.created_by.username == folder.created_by.username == "ticker"  # written as the member


def test_write_note_as_a_token_limited_to_another_folder_is_refused_and_writes_nothing(agent, internal, user):
    limited = token_create(member=user, space=default_space(), name="node a", write_under="/swarmstar/nodes/a/").token

    outcome = action_run(
        agent=agent, name="write_note", arguments={"name": "n.md", "content": "x"}, by=token_principal(limited)
    )

    assert not outcome.ok and "This token writes only under /swarmstar/nodes/a/" in outcome.summary
    assert not Node.objects.filter(name=f"agent-{agent.pk}-scout").exists()


def test_write_note_by_the_same_name_replaces_it(agent, internal):
    run(agent, "write_note", name="findings.md", content="first")

    outcome = run(agent, "write_note", name="findings.md", content="second")

    assert outcome.ok and not outcome.novel and outcome.summary.startswith("Rewrote the note")
    note = memory_selectors.node_resolve(space=space_default(), path=f"{notes_of(agent)}/findings.md")
    assert memory_selectors.node_content(node=note) == b"second" and note.version == 2
    assert Node.objects.filter(name=f"agent-{agent.pk}-scout").count() == 1


def test_write_note_refuses_bad_names_and_a_folder_in_the_way(agent, internal):
    run(agent, "write_note", name="first.md", content="x")
    NodeFactory(parent=memory_selectors.node_resolve(space=space_default(), path=notes_of(agent)), name="drafts")

    slash = run(agent, "write_note", name="a/b.md", content="x")
    folder = run(agent, "write_note", name="drafts", content="x")
    dots = run(agent, "write_note", name="..", content="x")

    assert not slash.ok and "must not contain '/'" in slash.summary
    assert not folder.ok and "is a folder, not a note" in folder.summary
    assert not dots.ok and "write_note failed" in dots.summary


@pytest.mark.parametrize("name", ["team/alpha", "--", "..", "Équipe  Ünïcode!", "x" * 200])
def test_agents_with_awkward_names_get_a_folder_keyed_by_their_id(internal, name):
    agent = AgentFactory(name=name)

    outcome = run(agent, "write_note", name="n.md", content="x")

    folder = note_folder_name(agent)
    assert outcome.ok and memory_selectors.node_resolve(space=space_default(), path=f"/swarmstar/{folder}/n.md")
    assert folder.startswith(f"agent-{agent.pk}") and len(folder) <= 80 and "/" not in folder


def test_agents_whose_names_clean_up_alike_get_separate_folders(internal):
    first, second, third = (AgentFactory(name=name) for name in ("ops/team", "ops-team", "ops  team"))

    for agent in (first, second, third):
        assert run(agent, "write_note", name="plan.md", content=f"by {agent.pk}").ok

    folders = {note_folder_name(agent) for agent in (first, second, third)}
    assert folders == {f"agent-{first.pk}-ops-team", f"agent-{second.pk}-ops-team", f"agent-{third.pk}-ops-team"}
    for agent in (first, second, third):
        note = memory_selectors.node_resolve(
            space=space_default(), path=f"/swarmstar/{note_folder_name(agent)}/plan.md"
        )
        assert memory_selectors.node_content(node=note) == f"by {agent.pk}".encode() and note.version == 1


def test_a_persons_document_at_the_old_path_is_never_touched(internal, user):
    folder = memory_services.node_create(parent=internal["swarmstar"], type="folder", name="ops team", by=acting(user))
    plan = memory_services.node_create(parent=folder, type="document", name="plan.md", content=b"mine", by=acting(user))
    agent = AgentFactory(name="ops  team")

    outcome = run(agent, "write_note", name="plan.md", content="the agent's plan")

    assert outcome.ok and outcome.where == f"/swarmstar/agent-{agent.pk}-ops-team/plan.md"
    plan.refresh_from_db()
    assert memory_selectors.node_content(node=plan) == b"mine" and plan.version == 1


def test_write_note_never_rewrites_a_persons_document_in_the_agents_folder(agent, internal, user):
    run(agent, "write_note", name="first.md", content="x")
    folder = memory_selectors.node_resolve(space=space_default(), path=notes_of(agent))
    theirs = memory_services.node_create(
        parent=folder, type="document", name="plan.md", content=b"mine", by=acting(user)
    )

    outcome = run(agent, "write_note", name="plan.md", content="the agent's plan")

    assert not outcome.ok and "written by a person, not by you" in outcome.summary
    theirs.refresh_from_db()
    assert memory_selectors.node_content(node=theirs) == b"mine" and theirs.version == 1


def test_write_note_does_not_overwrite_an_edit_made_since_it_read_the_note(agent, internal, user, monkeypatch):
    run(agent, "write_note", name="plan.md", content="first")
    path = f"{notes_of(agent)}/plan.md"
    resolve = memory_selectors.node_resolve

    def resolved_then_edited(*, space, path: str):
        node = resolve(space=space, path=path)
        if path.endswith("/plan.md"):  # a person saves the note between the agent's read and write
            memory_services.node_content_set(node=resolve(space=space, path=path), data=b"edited", by=acting(user))
        return node

    monkeypatch.setattr(memory_selectors, "node_resolve", resolved_then_edited)
    outcome = run(agent, "write_note", name="plan.md", content="second")
    monkeypatch.undo()

    assert not outcome.ok and "changed by someone else" in outcome.summary
    note = memory_selectors.node_resolve(space=space_default(), path=path)
    assert memory_selectors.node_content(node=note) == b"edited" and note.version == 2


def test_write_note_refuses_when_its_folder_name_is_a_document(agent, internal, user):
    memory_services.node_create(
        parent=internal["swarmstar"], type="document", name=note_folder_name(agent), content=b"x", by=acting(user)
    )

    outcome = run(agent, "write_note", name="plan.md", content="the agent's plan")

    assert not outcome.ok and "not a folder for your notes" in outcome.summary


# search_memory ---------------------------------------------------------------------------------------


def test_search_memory_starts_a_search_and_does_not_wait(
    agent, internal, searches_queued, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        outcome = run(agent, "search_memory", query="What does the user prefer?")

    search = Search.objects.get()
    assert outcome.ok and outcome.detail == {"search_id": search.pk} and outcome.where == f"search:{search.pk}"
    assert outcome.summary == f"Started memory search {search.pk}: What does the user prefer?"
    assert search.questions == ["What does the user prefer?"] and search.status == Search.Status.QUEUED
    assert "scout" in search.context and search.created_by.username == "ticker"  # the member's search
    assert searches_queued == [{"search_id": search.pk}]


# fetch_url -------------------------------------------------------------------------------------------


def test_fetch_url_refuses_hosts_off_the_allow_list_and_private_addresses(agent):
    elsewhere = run(agent, "fetch_url", url="https://elsewhere.example.com/page")
    loopback = run(agent, "fetch_url", url="http://127.0.0.1:8000/admin/")

    assert not elsewhere.ok and elsewhere.summary.startswith("fetch_url refused:")
    assert "not on the allow-list" in elsewhere.summary and elsewhere.where == "https://elsewhere.example.com/page"
    assert not loopback.ok and loopback.summary.startswith("fetch_url refused:")


def test_fetch_url_reports_a_failed_fetch(agent, monkeypatch):
    def down(url):
        raise FetchFailed("could not resolve docs.example.org")

    monkeypatch.setattr("memsite.fetch.fetch_url", down)

    outcome = run(agent, "fetch_url", url="https://docs.example.org/")

    assert not outcome.ok and outcome.summary == "fetch_url failed: could not resolve docs.example.org"


def page(url: str, text: str) -> FetchedPage:
    return FetchedPage(
        url=url, status=200, content_type="text/html", charset="utf-8", text=text, truncated=False, redirects=()
    )


def test_fetch_url_reads_an_allowed_page_and_a_tick_marks_it_explored(agent, internal, llm, monkeypatch):
    asked: list[str] = []

    def fetched(url):
        asked.append(url)
        return page("https://docs.example.org/guide", "The guide explains buffers.")

    monkeypatch.setattr("memsite.fetch.fetch_url", fetched)
    keep_plan(agent)
    script_tick(llm, "fetch_url", url="https://docs.example.org/start")

    tick = services.tick_run(agent_id=agent.pk)

    assert asked == ["https://docs.example.org/start"]
    assert tick.outcome == "Fetched https://docs.example.org/guide (text/html): The guide explains buffers."
    explored = Explored.objects.get(brain_id=agent.pk)
    assert (explored.kind, explored.key) == ("url", "https://docs.example.org/guide")
    assert connected_to_self(agent, "url:https://docs.example.org/guide")
    brain = Brain.objects.get(pk=agent.pk)
    assert brain.extra_state == {"lastUrl": "https://docs.example.org/guide", "totalFetches": 1}
    assert brain.url_count == 1


# reply and idle ----------------------------------------------------------------------------------------


def test_reply_adds_an_assistant_message_to_the_conversation(agent, internal, llm):
    keep_plan(agent)
    script_tick(llm, "reply", text="I have mapped the user folder.")

    tick = services.tick_run(agent_id=agent.pk)

    [said] = Message.objects.filter(agent=agent)
    assert (said.role, said.content) == ("assistant", "I have mapped the user folder.")
    assert tick.outcome == "Said: I have mapped the user folder."


def test_a_reply_while_tool_calls_wait_is_refused_and_says_nothing(agent):
    call = {"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
    message_append(agent=agent, role="assistant", tool_calls=[call])

    outcome = run(agent, "reply", text="Done.")

    assert not outcome.ok and outcome.summary.startswith("reply failed: The assistant's tool calls call_1 wait")
    assert Message.objects.filter(agent=agent).count() == 1


def test_idle_does_nothing(agent):
    outcome = run(agent, "idle")

    assert outcome.ok and outcome.summary == "Idled." and not outcome.novel and not outcome.perceived


# Refusals --------------------------------------------------------------------------------------------


def test_an_unknown_action_is_refused(agent):
    outcome = run(agent, "fly", height=3)

    assert not outcome.ok and outcome.summary.startswith("Unknown action 'fly'; the actions are list_dir, read_file")


@pytest.mark.parametrize(
    ("name", "arguments", "said"),
    [
        ("read_file", {}, "path: Field required"),
        ("read_file", {"path": 3}, "path: Input should be a valid string"),
        ("list_dir", {"path": "/", "depth": 2}, "depth: Extra inputs are not permitted"),
        ("write_note", {"name": "a.md"}, "content: Field required"),
        ("idle", {"why": "tired"}, "why: Extra inputs are not permitted"),
        ("reply", {"text": "   "}, "text: String should have at least 1 character"),
    ],
)
def test_malformed_arguments_are_refused(agent, name, arguments, said):
    outcome = action_run(agent=agent, name=name, arguments=arguments, by=ticker())

    assert not outcome.ok and outcome.summary.startswith(f"Bad arguments for {name}:") and said in outcome.summary


def test_arguments_that_are_not_an_object_are_refused(agent):
    outcome = action_run(agent=agent, name="read_file", arguments=["/user"], by=ticker())

    assert not outcome.ok and outcome.summary == 'The arguments of read_file must be an object {"path": string}.'


def test_every_action_is_described():
    assert list(ACTIONS) == ["list_dir", "read_file", "search_memory", "write_note", "fetch_url", "reply", "idle"]
    assert all(action.description for action in ACTIONS.values())


# What to explore next --------------------------------------------------------------------------------


def test_suggestions_start_near_the_folder_listed_last(agent, internal, llm):
    keep_plan(agent)
    script_tick(llm, "list_dir", path="/user")
    services.tick_run(agent_id=agent.pk)

    suggestions = explore_next(brain=Brain.objects.get(pk=agent.pk)).suggestions

    assert [suggestion.key for suggestion in suggestions] == [
        "read_file /user/user_preferences.md",
        "read_file /user/requested_features.md",
        "read_file /user/user_requirements.md",
        "list_dir /swarmstar",
        "list_dir /projects",
    ]
    assert suggestions[0].why.startswith('a document you have not read, described as "How much the user')


def explored(agent, *paths: str, folders: tuple[str, ...] = (), last_dir: str | None = None) -> Brain:
    """The agent's brain with `paths` read and `folders` listed, in that order (the last newest)."""
    from django.utils import timezone

    from agents.brains.services.brains import brain_writing

    now = timezone.now()
    with brain_writing(agent=agent) as write:
        for number, path in enumerate((*paths, *folders)):
            at = now.replace(microsecond=number)
            write.explored(kind="path", key=path, summary="", at=at, folder=path in folders)
        if last_dir is not None:
            write.set(extra_state={"lastDir": last_dir})
    return Brain.objects.get(pk=agent.pk)


def test_suggestions_go_up_from_the_folder_listed_last_then_to_the_folders_listed_lately(
    agent, internal, django_assert_num_queries
):
    alpha = NodeFactory(parent=internal["projects"], name="alpha")
    deep = NodeFactory(parent=alpha, name="deep")
    DocumentFactory(parent=deep, name="d1.md")
    DocumentFactory(parent=deep, name="d2.md")
    DocumentFactory(parent=alpha, name="a.md")
    beta = NodeFactory(parent=internal["references"], name="beta")
    DocumentFactory(parent=beta, name="b.md")
    brain = explored(
        agent,
        "/projects/alpha/deep/d1.md",
        "/user/user_preferences.md",  # read lately, but a document: not looked in
        folders=("/references/beta", "/projects", "/projects/alpha", "/projects/alpha/deep"),
        last_dir="/projects/alpha/deep/",
    )

    # One query for each folder looked in (deep, alpha, /projects, beta, /), one for the
    # folders listed lately, and the brain's agent and space, read once.
    with django_assert_num_queries(8):
        suggestions = explore_next(brain=brain, limit=6).suggestions

    assert [suggestion.key for suggestion in suggestions] == [
        "read_file /projects/alpha/deep/d2.md",  # the folder listed last
        "read_file /projects/alpha/a.md",  # the folders above it
        "read_file /references/beta/b.md",  # a folder listed lately
        "list_dir /swarmstar",  # the top of the tree
        "list_dir /user",
        "list_dir /references",
    ]


def test_suggestions_leave_out_long_and_bracketed_names_and_idle_when_all_is_explored(agent, internal):
    folder = NodeFactory(parent=internal["swarmstar"], name="f")
    DocumentFactory(parent=folder, name="x" * 200 + ".md")
    DocumentFactory(parent=folder, name="[draft].md")
    DocumentFactory(parent=folder, name="ok.md")
    roots = [f"/{name}" for name in ("swarmstar", "user", "projects", "references")]

    brain = explored(agent, *roots[1:], folders=("/swarmstar", "/swarmstar/f"), last_dir="/swarmstar/f")
    assert [suggestion.key for suggestion in explore_next(brain=brain).suggestions] == ["read_file /swarmstar/f/ok.md"]

    brain = explored(agent, "/swarmstar/f/ok.md")
    assert [(suggestion.action, suggestion.why) for suggestion in explore_next(brain=brain).suggestions] == [
        ("idle", "everything near has been explored")
    ]

    DocumentFactory(parent=NodeFactory(parent=internal["swarmstar"], name="[g]"), name="ok.md")
    brain = explored(agent, "/swarmstar/f", last_dir="/swarmstar/[g]")  # a bracket in the folder's name
    assert [suggestion.key for suggestion in explore_next(brain=brain).suggestions] == ["idle"]


def test_suggestions_look_at_the_first_children_of_a_folder_only(agent, internal, monkeypatch):
    from agents.brains.services import actions

    folder = NodeFactory(parent=internal["swarmstar"], name="f")
    for name in ("a.md", "b.md", "c.md"):
        DocumentFactory(parent=folder, name=name)
    roots = [f"/{name}" for name in ("swarmstar", "user", "projects", "references")]
    monkeypatch.setattr(actions, "SUGGESTION_SCAN", 2)

    brain = explored(agent, *roots, "/swarmstar/f/a.md", folders=("/swarmstar/f",), last_dir="/swarmstar/f")
    assert [suggestion.key for suggestion in explore_next(brain=brain).suggestions] == ["read_file /swarmstar/f/b.md"]

    brain = explored(agent, "/swarmstar/f/b.md")  # c.md is third: past the scan
    assert [suggestion.key for suggestion in explore_next(brain=brain).suggestions] == ["idle"]


def test_a_listed_folder_with_nothing_left_is_spent_and_looked_in_again_once_listed_again(
    agent, internal, llm, django_assert_num_queries
):
    beta = NodeFactory(parent=internal["references"], name="beta")
    DocumentFactory(parent=beta, name="b.md")
    roots = [f"/{name}" for name in ("swarmstar", "user", "projects", "references")]
    brain = explored(
        agent, *roots, "/references/beta/b.md", folders=("/references/beta", "/user"), last_dir="/projects"
    )

    exploration = explore_next(brain=brain)
    assert [suggestion.key for suggestion in exploration.suggestions] == [
        "read_file /user/user_preferences.md",
        "read_file /user/requested_features.md",
        "read_file /user/user_requirements.md",
    ]
    assert exploration.spent == ["/projects", "/references/beta"]  # /user still holds something

    # A tick stops looking in them. Then: the folder listed last, the folders listed lately, /user and /.
    keep_plan(agent)
    script_tick(llm, "idle")
    services.tick_run(agent_id=agent.pk)
    folders = dict(
        Explored.objects.filter(brain_id=agent.pk, key__in=["/references/beta", "/user"]).values_list("key", "folder")
    )
    assert folders == {"/references/beta": False, "/user": True}
    with django_assert_num_queries(4):
        assert explore_next(brain=brain).spent == ["/projects"]  # listed last: looked in whatever it holds

    DocumentFactory(parent=beta, name="new.md")
    keep_plan(agent)
    script_tick(llm, "list_dir", path="/references/beta")  # listed again: looked in again
    services.tick_run(agent_id=agent.pk)
    suggestions = explore_next(brain=Brain.objects.get(pk=agent.pk)).suggestions
    assert suggestions[0].key == "read_file /references/beta/new.md"


def test_suggestions_pass_over_a_last_folder_that_is_gone(agent, internal):
    brain = explored(agent, last_dir="/user/gone/deeper")

    suggestions = explore_next(brain=brain, limit=2).suggestions

    assert [suggestion.key for suggestion in suggestions] == [
        "read_file /user/user_preferences.md",
        "read_file /user/requested_features.md",
    ]


def test_a_listed_folder_is_remembered_as_one(agent, internal, llm):
    keep_plan(agent)
    script_tick(llm, "list_dir", path="/user")
    services.tick_run(agent_id=agent.pk)
    script_tick(llm, "read_file", path="/user/user_preferences.md")
    services.tick_run(agent_id=agent.pk)

    folders = dict(Explored.objects.filter(brain_id=agent.pk).values_list("key", "folder"))
    assert folders == {"/user": True, "/user/user_preferences.md": False}
