"""Migration 0012 moves the agents app's models to the context, brains and graphs apps: a
database made before the split keeps its rows, and the admin's permissions their models."""

import pytest
from django.utils import timezone

from tests.migrations import migrate_to, migrate_to_latest

# The layout before the split: the agents app's migrations, none of the three apps' (and the
# admin's permissions as they are).
BEFORE = [
    ("agents", "0011_chat_message_fields"),
    ("context", None),
    ("brains", None),
    ("graphs", None),
    ("auth", "0012_alter_user_first_name_max_length"),
    ("contenttypes", "0002_remove_content_type_name"),
]


def _old_layout_rows(apps) -> dict:
    """An agent with two messages, its brain with two neurons, and a graph with two nodes and
    an edge, all as the agents app wrote them; and a group allowed to change agents."""

    def model(name):
        return apps.get_model("agents", name)

    agent = model("Agent").objects.create(name="old-timer", model="gpt-4")
    for position, content in enumerate(["Hello.", "Hi, how can I help?"], start=1):
        model("Message").objects.create(
            agent=agent,
            position=position,
            role="user" if position == 1 else "assistant",
            content=content,
            token_count=5,
            token_encoding="o200k_base",
            tokens_approximate=False,
            history_offset=5 * (position - 1),
        )
    brain = model("Brain").objects.create(agent=agent, self_summary="I keep notes.")
    for key in ("self", "concept:deploy"):
        model("Neuron").objects.create(
            brain=brain, key=key, kind=key.split(":")[0], label=key, last_used=timezone.now()
        )
    graph = model("Graph").objects.create(
        task="Deploy", agent=agent, model="gpt-4", trigger_tokens=1000, target_tokens=500
    )
    for node_id, kind in ((1, "task"), (2, "subtask")):
        model("GraphNode").objects.create(graph=graph, node_id=node_id, kind=kind, thought={"text": f"n{node_id}"})
    model("GraphEdge").objects.create(graph=graph, src=1, dst=2, rationale="first step")
    ContentType = apps.get_model("contenttypes", "ContentType")
    Permission = apps.get_model("auth", "Permission")
    agent_type, _ = ContentType.objects.get_or_create(app_label="agents", model="agent")
    change, _ = Permission.objects.get_or_create(
        content_type=agent_type, codename="change_agent", defaults={"name": "Can change agent"}
    )
    group = apps.get_model("auth", "Group").objects.create(name="agent editors")
    group.permissions.add(change)
    return {"agent": agent.pk, "graph": graph.pk, "group": group.pk}


@pytest.mark.django_db(transaction=True)
def test_rows_made_before_the_split_are_kept_and_permissions_follow_their_models():
    try:
        ids = _old_layout_rows(migrate_to(*BEFORE))

        apps = migrate_to_latest()

        agent = apps.get_model("context", "Agent").objects.get(pk=ids["agent"])
        assert agent.name == "old-timer"
        assert list(agent.messages.order_by("position").values_list("role", "content")) == [
            ("user", "Hello."),
            ("assistant", "Hi, how can I help?"),
        ]
        brain = apps.get_model("brains", "Brain").objects.get(agent=agent)
        assert brain.self_summary == "I keep notes."
        assert sorted(brain.neurons.values_list("key", flat=True)) == ["concept:deploy", "self"]
        graph = apps.get_model("graphs", "Graph").objects.get(pk=ids["graph"])
        assert (graph.task, graph.agent_id) == ("Deploy", agent.pk)
        assert list(graph.nodes.order_by("node_id").values_list("node_id", "kind")) == [
            (1, "task"),
            (2, "subtask"),
        ]
        assert list(graph.edges.values_list("src", "dst", "rationale")) == [(1, 2, "first step")]
        group = apps.get_model("auth", "Group").objects.get(pk=ids["group"])
        assert list(group.permissions.values_list("content_type__app_label", "codename")) == [
            ("context", "change_agent")
        ]
        assert not apps.get_model("contenttypes", "ContentType").objects.filter(app_label="agents").exists()
    finally:
        migrate_to_latest()


@pytest.mark.django_db(transaction=True)
def test_grants_follow_their_model_when_its_new_label_was_made_in_between():
    """`migrate context` alone, before the split's migration, makes `context.agent` with fresh
    permissions; the grants made on `agents.agent` still follow the model."""
    try:
        apps = migrate_to(*BEFORE)
        ids = _old_layout_rows(apps)
        ContentType = apps.get_model("contenttypes", "ContentType")
        fresh = ContentType.objects.create(app_label="context", model="agent")
        apps.get_model("auth", "Permission").objects.create(
            content_type=fresh, codename="change_agent", name="Can change agent"
        )

        apps = migrate_to_latest()

        group = apps.get_model("auth", "Group").objects.get(pk=ids["group"])
        assert list(group.permissions.values_list("content_type__app_label", "codename")) == [
            ("context", "change_agent")
        ]
        ContentType = apps.get_model("contenttypes", "ContentType")
        assert ContentType.objects.filter(app_label="context", model="agent").count() == 1
        assert not ContentType.objects.filter(app_label="agents").exists()
    finally:
        migrate_to_latest()
