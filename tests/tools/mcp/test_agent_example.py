"""examples/mcp_agent.py: an openai-agents agent that reads memsite over MCP, its model the fake
OpenAI server, whose script calls memory_read and then answers from what it was given."""

import json
import os
import subprocess
import sys

from memory import selectors
from tests.factories import DocumentFactory, default_space, token_for
from tests.fake_openai import Reply
from tests.process_files import ROOT
from tools.registry import all_tools

EXAMPLE = ROOT / "examples" / "mcp_agent.py"
ANSWER = "Staging listens on port 8443."


def test_an_agent_of_openai_agents_answers_from_memory_read_over_mcp(mcp_url, user, fake_openai):
    references = selectors.node_internal_folder(space=default_space(), name="references")
    DocumentFactory(parent=references, name="staging.md", content=b"# Staging\n\nThe staging API listens on 8443.")
    fake_openai.script(Reply.tool_call("memory_read", {"node": "/references/staging.md"}), Reply.text(ANSWER))
    environment = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    environment |= {
        "MEMSITE_MCP_URL": mcp_url,
        "MEMSITE_TOKEN": token_for(user),
        "OPENAI_BASE_URL": fake_openai.url,
        "OPENAI_API_KEY": "sk-test",
    }
    # A process of its own, run as a script: here memsite's `agents/` would shadow openai-agents'.
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), "Which port does staging listen on?"],
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ANSWER
    asked, told = fake_openai.requests
    offered = {tool["function"]["name"]: tool["function"] for tool in asked.body["tools"]}
    assert list(offered) == [tool.name for tool in all_tools()]
    assert offered["memory_read"]["parameters"]["required"] == ["node"]
    # The second call carries what memory_read answered over MCP: the document's text.
    (result,) = [message for message in told.messages if message["role"] == "tool"]
    (part,) = result["content"]
    assert json.loads(part["text"])["content"] == "# Staging\n\nThe staging API listens on 8443."
