"""The agents app's models move to the context, brains and graphs apps, keeping their tables:
this app forgets them (state only), and their content types, with the admin permissions that
point at them, take the new apps' labels."""

from django.db import migrations

MOVED = {
    "context": ("agent", "message", "checkpoint", "summary"),
    "brains": ("brain", "brainextra", "record", "goal", "explored", "neuron", "synapse", "tickrun"),
    "graphs": ("graph", "graphnode", "graphedge", "turn", "graphop"),
}


def _relabel(apps, schema_editor, *, forward: bool) -> None:
    ContentType = apps.get_model("contenttypes", "ContentType")
    rows = ContentType.objects.using(schema_editor.connection.alias)
    for label, models in MOVED.items():
        old, new = ("agents", label) if forward else (label, "agents")
        for model in models:
            moving = rows.filter(app_label=old, model=model)
            if not moving.exists():
                continue
            # A row made under the new label in between (the post_migrate of a migrate of one of
            # the new apps alone) holds only fresh permissions; the old row holds the grants.
            rows.filter(app_label=new, model=model).delete()
            moving.update(app_label=new)
    ContentType.objects.clear_cache()


def relabel_forward(apps, schema_editor) -> None:
    _relabel(apps, schema_editor, forward=True)


def relabel_backward(apps, schema_editor) -> None:
    _relabel(apps, schema_editor, forward=False)


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0011_chat_message_fields"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("context", "0001_initial"),
        ("brains", "0001_initial"),
        ("graphs", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveField(
                    model_name="graph",
                    name="agent",
                ),
                migrations.RemoveField(
                    model_name="summary",
                    name="agent",
                ),
                migrations.RemoveField(
                    model_name="message",
                    name="agent",
                ),
                migrations.RemoveField(
                    model_name="brain",
                    name="agent",
                ),
                migrations.RemoveField(
                    model_name="brain",
                    name="tick_queued_by",
                ),
                migrations.RemoveField(
                    model_name="brain",
                    name="ticking_by",
                ),
                migrations.RemoveField(
                    model_name="brainextra",
                    name="brain",
                ),
                migrations.RemoveField(
                    model_name="tickrun",
                    name="brain",
                ),
                migrations.RemoveField(
                    model_name="record",
                    name="brain",
                ),
                migrations.RemoveField(
                    model_name="explored",
                    name="brain",
                ),
                migrations.RemoveField(
                    model_name="synapse",
                    name="brain",
                ),
                migrations.RemoveField(
                    model_name="neuron",
                    name="brain",
                ),
                migrations.RemoveField(
                    model_name="goal",
                    name="brain",
                ),
                migrations.RemoveField(
                    model_name="turn",
                    name="graph",
                ),
                migrations.RemoveField(
                    model_name="graphedge",
                    name="graph",
                ),
                migrations.RemoveField(
                    model_name="graphnode",
                    name="graph",
                ),
                migrations.RemoveField(
                    model_name="graphop",
                    name="graph",
                ),
                migrations.RemoveField(
                    model_name="graphop",
                    name="created_by",
                ),
                migrations.RemoveField(
                    model_name="synapse",
                    name="target",
                ),
                migrations.RemoveField(
                    model_name="synapse",
                    name="source",
                ),
                migrations.RemoveField(
                    model_name="summary",
                    name="base",
                ),
                migrations.RemoveField(
                    model_name="tickrun",
                    name="user",
                ),
                migrations.DeleteModel(
                    name="Checkpoint",
                ),
                migrations.DeleteModel(
                    name="Message",
                ),
                migrations.DeleteModel(
                    name="Agent",
                ),
                migrations.DeleteModel(
                    name="BrainExtra",
                ),
                migrations.DeleteModel(
                    name="Record",
                ),
                migrations.DeleteModel(
                    name="Explored",
                ),
                migrations.DeleteModel(
                    name="Brain",
                ),
                migrations.DeleteModel(
                    name="Goal",
                ),
                migrations.DeleteModel(
                    name="Turn",
                ),
                migrations.DeleteModel(
                    name="GraphEdge",
                ),
                migrations.DeleteModel(
                    name="GraphNode",
                ),
                migrations.DeleteModel(
                    name="Graph",
                ),
                migrations.DeleteModel(
                    name="GraphOp",
                ),
                migrations.DeleteModel(
                    name="Neuron",
                ),
                migrations.DeleteModel(
                    name="Synapse",
                ),
                migrations.DeleteModel(
                    name="Summary",
                ),
                migrations.DeleteModel(
                    name="TickRun",
                ),
            ],
        ),
        migrations.RunPython(relabel_forward, relabel_backward),
    ]
