"""AsyncMemsiteClient on the same flows as the sync client, against the live server: each test
runs its client in an event loop of its own (asyncio.run)."""

import asyncio

import pytest
from memsite_client import AsyncMemsiteClient, Conflict, NotFound, WaitTimeout

pytestmark = pytest.mark.django_db(transaction=True)

NOTES = "# Status codes\n\nAnswer 409 Conflict when the resource is in conflict with its current state.\n"


def client(server: str, token: str, fake_time) -> AsyncMemsiteClient:
    return AsyncMemsiteClient(server, token, sleep=fake_time.asleep, clock=fake_time.clock)


def test_memory_verbs(server, token, fake_time):
    async def flow() -> None:
        async with client(server, token, fake_time) as memsite:
            node = await memsite.write("/references/ops/deploy.md", "v1", description="How we deploy")
            assert (node.path, node.version) == ("/references/ops/deploy.md", 1)
            assert (await memsite.get("/references/ops")).children_ids == [node.id]
            updated = await memsite.update(node, content="v2", version=node.version)
            assert await memsite.read(node.id) == "v2"
            with pytest.raises(Conflict) as stale:
                await memsite.update(node, content="v3", version=node.version)
            assert stale.value.message.startswith(
                f"The node was changed by someone else: it is at version {updated.version}"
            )

            for number in range(5):
                await memsite.add(f"/swarmstar/many/note-{number}.md", str(number), description="A note")
            names = [child.name async for child in memsite.children("/swarmstar/many", page_size=2)]
            assert names == [f"note-{number}.md" for number in range(5)]

            passages = await memsite.retrieve("deploy", start="/references")
            assert passages[0].node == node.id
            await memsite.delete("/swarmstar/many")
            with pytest.raises(NotFound):
                await memsite.get("/swarmstar/many")

    asyncio.run(flow())


def test_ask_questions_and_agents(server, token, fake_time):
    async def flow() -> None:
        async with client(server, token, fake_time) as memsite:
            node = await memsite.write("/references/http-codes.md", NOTES, description="HTTP status codes")
            search = await memsite.ask("Which status code means a conflict?")
            assert search.status == "done" and search.answer is not None and "409" in search.answer.text
            assert {citation.node for citation in search.answer.citations} == {node.id}

            empty = await memsite.folder("/references/empty")
            waiting = await memsite.ask("Which port does staging use?", start=empty, fallback="ask_user")
            assert [question.id async for question in memsite.questions()] == [waiting.user_question]
            assert waiting.user_question is not None
            await memsite.answer(waiting.user_question, "Port 8443.")
            assert (await memsite.get_search(waiting.id)).answer.text == "Port 8443."

            agent = await memsite.create_agent("scout", "gpt-4o-mini")
            exchange = await memsite.chat(agent, "What have you read?")
            assert exchange.reply.content and exchange.reply.role == "assistant"
            assert [message.position async for message in memsite.messages(agent)] == [2, 1]
            assert exchange.provider == "offline" and isinstance(exchange.citations, list)
            assert (await memsite.context(agent)).report.model == "gpt-4o-mini"

            graph = await memsite.create_graph("Find the staging port", agent=agent)
            turns = [{"role": "assistant", "content": "Reading."}, {"role": "tool", "content": "Port 8443."}]
            assert (await memsite.memorize(graph, turns, wait=30)).status == "applied"
            assert (await memsite.recall(graph, wait=30)).status != "queued"

    asyncio.run(flow())


def test_ask_gives_up_after_its_wait(server, token, fake_time, monkeypatch):
    monkeypatch.setattr("memory.tasks.search_run.delay", lambda search_id: None)  # no worker

    async def flow() -> None:
        async with client(server, token, fake_time) as memsite:
            with pytest.raises(WaitTimeout) as late:
                await memsite.ask("Which port?", wait=3, hold=0, poll_interval=2)
            assert late.value.result.status == "queued"

    asyncio.run(flow())
    assert fake_time.sleeps == [2, 1]
