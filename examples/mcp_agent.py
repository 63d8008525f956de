"""A swarm node as an agent of the openai-agents package, reading and writing memsite's memory
through its MCP server; it prints its answer. Explained in docs/mcp-agent.md:

    MEMSITE_MCP_URL=http://127.0.0.1:8001/mcp MEMSITE_TOKEN=ms_... OPENAI_API_KEY=sk-... \\
        .venv/bin/python examples/mcp_agent.py 'Which port does staging listen on?'
"""

import asyncio
import os
import sys

from openai import AsyncOpenAI

# openai-agents' package `agents`, which the sorter takes for memsite's `agents/`. Run this file as
# a script: where the repository's root is on sys.path (a shell in it, pytest), memsite's shadows it.
# isort: off
from agents import Agent, OpenAIChatCompletionsModel, RunConfig, Runner
from agents.mcp import MCPServerStreamableHttp

# isort: on

INSTRUCTIONS = (
    "You are a node of a swarm. memsite holds what the swarm knows: look there before you answer, "
    "and answer in a sentence or two from what you found."
)


async def ask(question: str, *, url: str, token: str, model: str) -> str:
    """The agent's answer to `question`, with memsite's tools at hand over MCP."""
    memsite = MCPServerStreamableHttp(
        params={"url": url, "headers": {"Authorization": f"Bearer {token}"}, "timeout": 30},
        name="memsite",
        cache_tools_list=True,  # the server's tools do not change while it runs
        client_session_timeout_seconds=60,
    )
    async with memsite:
        agent = Agent(
            name="swarm node",
            instructions=INSTRUCTIONS,
            mcp_servers=[memsite],
            # Chat Completions, which any OpenAI-compatible server offers (vLLM, Ollama, ...).
            model=OpenAIChatCompletionsModel(model=model, openai_client=AsyncOpenAI()),
        )
        result = await Runner.run(agent, question, max_turns=8, run_config=RunConfig(tracing_disabled=True))
    return str(result.final_output)


def main() -> None:
    question = " ".join(sys.argv[1:]) or "What do the user's preferences say?"
    url = os.environ.get("MEMSITE_MCP_URL", "http://127.0.0.1:8001/mcp")
    model = os.environ.get("MEMSITE_LLM_MODEL", "gpt-4o-mini")
    print(asyncio.run(ask(question, url=url, token=os.environ["MEMSITE_TOKEN"], model=model)))


if __name__ == "__main__":
    main()
