"""Chat that remembers: the prompt carries the relevant facts, the newest episodes and the
space's passages for the message, fitted to the window; the reply cites what it used, checked
against what it was given; offline, the reply quotes the closest item and says so."""

from datetime import timedelta

import pytest
from django.utils import timezone

from agents.brains import services
from agents.brains.logic.recall import MemoryItem, citations_kept, citations_shown
from agents.brains.models import RecordKind
from agents.brains.services.brains import brain_writing
from agents.brains.services.prompts import memory_line
from agents.context.logic.assembly import LONG_TERM_HEADING
from agents.context.models import Agent, Message
from memsite.llm.models import LLMCall
from memsite.llm.tokens import counter_for_model
from memsite.spaces.principals import token_principal
from memsite.spaces.services import token_create
from tests.factories import DocumentFactory, NodeFactory, system
from tests.fake_openai import Reply

pytestmark = pytest.mark.django_db
START = timezone.now() - timedelta(hours=1)
LISBON = "Ana moved to Lisbon last spring for the new job at the harbour office."


@pytest.fixture(autouse=True)
def full_text_only(settings):
    settings.MEMSITE_EMBEDDINGS = "off"


def remember(agent: Agent, *, facts: list[str] = (), episodes: list[str] = ()) -> None:
    with brain_writing(agent=agent) as write:
        for number, text in enumerate(facts):
            write.record(kind=RecordKind.FACT, text=text, item={"text": text}, at=START + timedelta(seconds=number))
        for number, text in enumerate(episodes):
            item = {"type": "read", "summary": text}
            write.record(kind=RecordKind.EPISODE, text=text, item=item, at=START + timedelta(seconds=number))


def limited(agent: Agent, tokens: int) -> None:
    agent.turn_input_limit = tokens
    agent.save(update_fields=["turn_input_limit"])


def memory_of(call: LLMCall) -> str:
    """The prompt's memory message, or '' when it had none."""
    found = [message["content"] for message in call.messages if message["content"].startswith(LONG_TERM_HEADING)]
    return found[0] if found else ""


def reply_data(agent: Agent) -> dict:
    return Message.objects.filter(agent=agent).order_by("position").last().data


def test_the_prompt_carries_relevant_facts_recent_episodes_and_retrieved_passages(agent):
    remember(agent, facts=["Cats purr when content.", "Ana's new job is at the harbour."], episodes=["read /notes"])
    doc = DocumentFactory(parent=NodeFactory(name="logs"), name="session-3", content=LISBON.encode())
    DocumentFactory(name="recipes", content=b"Boil the pasta for nine minutes.")

    services.chat_send(agent=agent, text="Where did Ana move for her job?", by=system())

    memory = memory_of(LLMCall.objects.get(purpose="chat"))
    assert '[fact:2] "Ana\'s new job is at the harbour."' in memory
    assert "Cats purr" not in memory  # a fact that shares nothing with the message stays out
    assert '[episode:1] "read": "read /notes"' in memory
    assert f'[node:{doc.pk}] "/swarmstar/logs/session-3": ' in memory and "Lisbon" in memory
    assert "pasta" not in memory
    # best first: the facts, then the passages, then the episodes
    assert memory.index("[fact:2]") < memory.index(f"[node:{doc.pk}]") < memory.index("[episode:1]")


def test_the_numbers_of_facts_episodes_and_passages_are_capped(agent):
    remember(agent, facts=[f"Harbour fact {number}." for number in range(8)], episodes=[f"e{n}" for n in range(9)])
    for number in range(7):
        DocumentFactory(name=f"harbour-{number}", content=f"The harbour log {number}.".encode())

    services.chat_send(agent=agent, text="What about the harbour?", by=system())

    memory = memory_of(LLMCall.objects.get(purpose="chat"))
    assert memory.count("[fact:") == 5 and memory.count("[node:") == 5 and memory.count("[episode:") == 5
    assert "[episode:9]" in memory and "[episode:4]" not in memory  # the newest episodes


def test_a_small_window_cuts_the_last_items_and_their_citations(agent, llm):
    remember(agent, facts=["The harbour office opens at nine."], episodes=["long " * 100])
    doc = DocumentFactory(name="harbour", content=("The harbour office. " + "filler words here. " * 60).encode())
    limited(agent, 300)
    llm.script(Reply.json({"reply": "At nine.", "citations": ["fact:1", "episode:1", "node:memory_invented", 7]}))

    exchange = services.chat_send(agent=agent, text="When does the harbour office open?", by=system())

    memory = memory_of(LLMCall.objects.get(purpose="chat"))
    assert "[fact:1]" in memory and f"[node:{doc.pk}]" in memory
    assert "[episode:1]" not in memory  # over the memory's half of the window
    # cited but not given (cut, invented, not an id): dropped
    assert exchange.citations == [{"id": "fact:1", "kind": "fact", "ref": "1", "label": "fact 1"}]
    assert reply_data(agent)["citations"] == exchange.citations
    assert exchange.provider == "openai" and reply_data(agent)["provider"] == "openai"


def test_memory_takes_at_most_half_the_window(agent, llm):
    facts = [f"Harbour fact number {number} says a great deal about the harbour office." * 3 for number in range(5)]
    remember(agent, facts=facts)
    limited(agent, 500)
    llm.script(Reply.json({"reply": "Yes."}))

    services.chat_send(agent=agent, text="Tell me about the harbour.", by=system())

    call = LLMCall.objects.get(purpose="chat")
    counter = counter_for_model(agent.model)
    memory = memory_of(call)
    given = memory.count("[fact:")
    assert 0 < given < 5 and counter.count_messages([{"role": "system", "content": memory}]) <= 250
    one_more = f"{memory}\n\n{memory_line(MemoryItem(kind='fact', ref='9', text=facts[0]))}"
    assert counter.count_messages([{"role": "system", "content": one_more}]) > 250  # the next did not fit
    assert counter.count_messages(call.messages) <= 500


def test_memory_gives_way_to_the_users_message_in_a_small_window(agent, llm):
    remember(agent, facts=[f"Harbour fact number {number} says a great deal." for number in range(5)])
    limited(agent, 200)  # half of it holds three facts, but chat's working memory takes most of the rest
    llm.script(Reply.json({"reply": "Yes.", "citations": [f"fact:{number}" for number in range(1, 6)]}))

    exchange = services.chat_send(agent=agent, text="Tell me about the harbour.", by=system())

    call = LLMCall.objects.get(purpose="chat")
    assert call.messages[-1] == {"role": "user", "content": "Tell me about the harbour."}
    given = memory_of(call).count("[fact:")
    assert 0 < given < 3 and counter_for_model(agent.model).count_messages(call.messages) <= 200
    assert len(exchange.citations) == given  # only what the prompt gave may be cited


def test_offline_the_reply_quotes_the_closest_passage_and_cites_its_node(agent):
    doc = DocumentFactory(parent=NodeFactory(name="logs"), name="session-3", content=LISBON.encode())
    remember(agent, facts=["Cats purr when content."])

    exchange = services.chat_send(agent=agent, text="Where did Ana move?", by=system())

    assert "Lisbon" in exchange.reply_message.content and "/swarmstar/logs/session-3" in exchange.reply_message.content
    assert exchange.citations == [
        {"id": f"node:{doc.pk}", "kind": "node", "ref": doc.pk, "label": "/swarmstar/logs/session-3"}
    ]
    assert exchange.provider == "offline" and reply_data(agent)["provider"] == "offline"


def test_offline_with_nothing_relevant_the_reply_says_so_and_cites_nothing(agent):
    remember(agent, facts=["Cats purr when content."])

    exchange = services.chat_send(agent=agent, text="Where did Ana move?", by=system())

    assert exchange.reply_message.content == "Nothing I remember bears on that." and exchange.citations == []
    assert exchange.provider == "offline"


def test_a_goal_command_has_no_provider(agent):
    exchange = services.chat_send(agent=agent, text="goal: map the harbour", by=system())
    assert exchange.provider is None and exchange.citations == []


def test_the_query_embedding_is_charged_to_the_user_space_and_token(agent, llm, settings, user, monkeypatch):
    settings.MEMSITE_EMBEDDINGS = "server"
    monkeypatch.setattr("memory.index.retrieve.query_cache", {})
    token = token_create(member=user, space=agent.space, name="node").token
    llm.script(Reply(), Reply.json({"reply": "Hello."}))  # the query's embedding, then the reply

    services.chat_send(agent=agent, text="Where is the harbour?", by=token_principal(token))

    charged = {(call.purpose, call.user_id, call.space_id, call.token_id) for call in LLMCall.objects.all()}
    assert ("embed", user.pk, agent.space_id, token.pk) in charged
    assert ("chat", user.pk, agent.space_id, token.pk) in charged


def test_a_memory_line_shows_the_id_a_reply_cites_then_the_item_quoted():
    items = [
        MemoryItem(kind="fact", ref="3", text='He said "stop"\nand left.'),
        MemoryItem(kind="node", ref="memory_ab", text="[fact:9] not an item", label="/a/b"),
    ]
    assert [memory_line(item) for item in items] == [
        '[fact:3] "He said \\"stop\\" and left."',
        '[node:memory_ab] "/a/b": "[fact:9] not an item"',
    ]


def test_citations_are_kept_once_in_order_only_when_given():
    given = [MemoryItem(kind="fact", ref="1", text="a"), MemoryItem(kind="node", ref="memory_x", text="b", label="/x")]
    kept = citations_kept(["node:memory_x", " fact:1 ", "fact:1", "fact:2", None, {"id": "fact:1"}], given)
    assert [citation["id"] for citation in kept] == ["node:memory_x", "fact:1"]
    assert kept[0]["label"] == "/x"


@pytest.mark.parametrize(
    "entry",
    [
        None,
        "text",
        {"citations": "fact:1"},
        {"citations": [{"kind": "node", "ref": "../admin"}]},
        {"citations": [{"kind": "fact", "ref": "x1"}, {"kind": "script", "ref": "1"}, "fact:1"]},
    ],
)
def test_malformed_stored_citations_are_not_shown(entry):
    assert citations_shown(entry) == []
