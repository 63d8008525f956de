"""The migrations that gave the data its space put every row made before them into the default
space, nothing lost: nodes, searches, agents, graphs and ledger rows."""

import pytest

from agents.context.models import Agent
from agents.graphs.models import Graph
from memory.models import Node, Search
from memsite.llm.models import LLMCall
from tests.migrations import migrate_to, migrate_to_latest

BEFORE = (
    ("memory", "0012_node_events"),
    ("context", "0001_initial"),
    ("graphs", "0001_initial"),
    ("llm", "0002_quota_users"),
)


def rows_before_spaces(apps) -> dict[str, object]:
    """One row of each, written with the models as they were."""
    node = apps.get_model("memory", "Node").objects.create(
        id="memory_old", path="zzzzz", depth=1, numchild=0, type="folder", is_folder=True, name="old notes"
    )
    search = apps.get_model("memory", "Search").objects.create(
        questions=["Where?"], max_llm_calls=5, max_tokens=1000, timeout_s=60
    )
    agent = apps.get_model("context", "Agent").objects.create(name="old scout", model="gpt-4")
    graph = apps.get_model("graphs", "Graph").objects.create(
        task="Old task", agent=agent, model="gpt-4", trigger_tokens=1000, target_tokens=500
    )
    call = apps.get_model("llm", "LLMCall").objects.create(
        purpose="route", provider="offline", model="offline", status="ok", messages=[]
    )
    return {"node": node.pk, "search": search.pk, "agent": agent.pk, "graph": graph.pk, "call": call.pk}


@pytest.mark.django_db(transaction=True)
def test_the_rows_made_before_spaces_are_the_default_spaces():
    try:
        made = rows_before_spaces(migrate_to(*BEFORE))
        migrate_to_latest()
        rows = [
            Node.objects.get(pk=made["node"]),
            Search.objects.get(pk=made["search"]),
            Agent.objects.get(pk=made["agent"]),
            Graph.objects.get(pk=made["graph"]),
            LLMCall.objects.get(pk=made["call"]),
        ]
        assert [row.space.slug for row in rows] == ["default"] * 5
        assert rows[0].name == "old notes" and rows[2].name == "old scout" and rows[3].agent_id == rows[2].pk
    finally:
        migrate_to_latest()
