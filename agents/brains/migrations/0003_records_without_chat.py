"""Chat lines are messages of the agent's conversation (context 0006 moved them there): a record
is no longer one."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("brains", "0002_tick_tokens"),
        ("context", "0006_chat_lines_into_messages"),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="record",
            name="agents_record_kind_valid",
        ),
        migrations.AlterField(
            model_name="record",
            name="kind",
            field=models.CharField(
                choices=[
                    ("thought", "thoughts"),
                    ("inner_thought", "inner thoughts"),
                    ("episode", "episodes"),
                    ("fact", "semantic facts"),
                    ("self_instruction", "self-instructions"),
                    ("log", "logs"),
                    ("user_message", "the user model's last messages"),
                ],
                max_length=16,
            ),
        ),
        migrations.AddConstraint(
            model_name="record",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    (
                        "kind__in",
                        ["thought", "inner_thought", "episode", "fact", "self_instruction", "log", "user_message"],
                    )
                ),
                name="agents_record_kind_valid",
            ),
        ),
    ]
