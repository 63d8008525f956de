"""The client's verbs that start work, against the live server with the offline provider: ask
(waited for on the server, or polled), the questions a search puts to the user, agents'
context, brain and chat, and reasoning graphs' memorize and recall."""

import datetime

import pytest
from memsite_client import AgentContext, Brain, ChatExchange, GraphOp, MemsiteClient, Question, WaitTimeout

from memory import services
from memory.models import Search

pytestmark = pytest.mark.django_db(transaction=True)

NOTES = "# Status codes\n\nAnswer 409 Conflict when the resource is in conflict with its current state.\n"


@pytest.fixture
def queued_searches(monkeypatch) -> list[int]:
    """Searches queued and not run: the worker is the test's to play."""
    queued: list[int] = []
    monkeypatch.setattr("memory.tasks.search_run.delay", lambda search_id: queued.append(search_id))
    return queued


def test_ask_answers_with_citations(memsite, fake_time):
    node = memsite.write(
        "/references/http-codes.md", NOTES, description="HTTP status codes", date=datetime.date(2023, 5, 8)
    )

    search = memsite.ask("Which status code means a conflict?", max_llm_calls=10)

    assert search.status == "done" and fake_time.sleeps == []  # ended while the server held the request
    answer = search.answer
    assert answer is not None and answer.question == "Which status code means a conflict?"
    assert "409" in answer.text and answer.complete and answer.node_ids == [node.id]
    assert answer.citations and {citation.node for citation in answer.citations} == {node.id}
    cited = NOTES[answer.citations[0].start : answer.citations[0].end]
    assert cited and cited in NOTES and answer.citations[0].date == datetime.date(2023, 5, 8)
    assert search.budgets.max_llm_calls == 10 and search.spent.llm_calls >= 1


def test_ask_for_nodes_gives_them_beside_the_answers(memsite, fake_time):
    node = memsite.write("/references/http-codes.md", NOTES, description="HTTP status codes")

    search = memsite.ask("Which status code means a conflict?", output="node", max_llm_calls=10)

    assert search.status == "done" and search.answers == search.result.answers
    assert [found.id for found in search.nodes] == [node.id] and search.nodes == search.result.nodes


def test_ask_reads_the_search_again_until_it_ends(server, token, fake_time, queued_searches):
    def worker_then_sleep(seconds: float) -> None:
        for search_id in queued_searches:
            services.search_run(search_id=search_id)
        fake_time.sleep(seconds)

    with MemsiteClient(server, token, sleep=worker_then_sleep, clock=fake_time.clock) as memsite:
        memsite.write("/references/http-codes.md", NOTES, description="HTTP status codes")
        search = memsite.ask("Which status code means a conflict?", hold=0, poll_interval=2)

    assert fake_time.sleeps == [2] and search.status == "done" and "409" in search.answer.text


def test_ask_gives_up_after_its_wait_with_the_search(memsite, fake_time, queued_searches):
    with pytest.raises(WaitTimeout) as late:
        memsite.ask("Which status code means a conflict?", wait=5, hold=0, poll_interval=2)

    assert fake_time.sleeps == [2, 2, 1]
    assert late.value.result.status == "queued" and late.value.result.id == queued_searches[0]
    cancelled = memsite.cancel_search(late.value.result.id)
    assert cancelled.status == "cancelled" and Search.objects.get().status == "cancelled"


def test_a_question_put_to_the_user_is_listed_and_answered(memsite):
    empty = memsite.folder("/references/empty")

    search = memsite.ask("Which port does staging use?", start=empty, fallback="ask_user")

    assert search.status == "waiting" and search.user_question is not None
    pending = list(memsite.questions())
    assert [(question.id, question.search, question.questions) for question in pending] == [
        (search.user_question, search.id, ["Which port does staging use?"])
    ]
    answered = memsite.answer(search.user_question, "Port 8443.")
    assert isinstance(answered, Question) and (answered.status, answered.answer) == ("answered", "Port 8443.")
    done = memsite.get_search(search.id)
    assert done.status == "done" and done.answer.text == "Port 8443."
    assert memsite.get(answered.document).parent == memsite.get("/user").id
    assert list(memsite.questions()) == []


def test_questions_are_read_past_one_page(memsite):
    empty = memsite.folder("/references/empty")
    asked = [memsite.ask(f"Which port does host {n} use?", start=empty, fallback="ask_user") for n in range(3)]

    pending = list(memsite.questions(page_size=2))

    assert [question.search for question in pending] == [search.id for search in reversed(asked)]


def test_an_agents_context_brain_and_chat(memsite):
    agent = memsite.create_agent("scout", "gpt-4o-mini", instructions="Help $user.", context_variables={"user": "Ana"})
    memsite.add_message(agent, "user", "Where are the deployment notes?")

    context = memsite.context(agent)

    assert isinstance(context, AgentContext)
    assert context.messages == [
        {"role": "system", "content": "Help Ana."},
        {"role": "user", "content": "Where are the deployment notes?"},
    ]
    assert context.report.model == "gpt-4o-mini" and context.report.stored_messages == 1
    assert sum(context.report.tiers.values()) == context.report.total

    exchange = memsite.chat(agent.id, "goal: map the notes")
    assert isinstance(exchange, ChatExchange) and exchange.goal is not None
    assert exchange.user.content == "goal: map the notes" and exchange.reply.position == exchange.user.position + 1
    brain = memsite.brain(agent)
    assert isinstance(brain, Brain) and [goal.text for goal in brain.goals] == ["map the notes"]
    # One conversation: the message added, then the chat's two lines.
    assert memsite.get_agent(agent).message_count == 3
    assert [message.content for message in memsite.messages(agent, page_size=2)] == [
        "Goal added: map the notes",
        "goal: map the notes",
        "Where are the deployment notes?",
    ]


def test_memorize_and_recall_are_waited_for(memsite):
    graph = memsite.create_graph("Find the staging port")
    turns = [
        {"role": "assistant", "content": "I will read the deployment notes."},
        {"role": "tool", "content": "deploy.md: staging listens on port 8443."},
    ]

    memorized = memsite.memorize(graph, turns, wait=30)

    assert isinstance(memorized, GraphOp) and (memorized.kind, memorized.status) == ("memorize", "applied")
    assert memorized.data["turn_ids"] == [0, 1]
    recalled = memsite.recall(graph.id, wait=30)
    assert recalled.kind == "recall" and recalled.status != "queued" and recalled.id > memorized.id
    context = memsite.graph_context(graph)
    assert context.messages[0]["content"] == "I will read the deployment notes." and context.tokens > 0
    kinds = [op.kind for op in memsite.graph_ops(graph, page_size=1)]
    assert kinds == ["recall", "memorize", "create"]
