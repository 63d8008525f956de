"""The four internal folders of seed 000, and the user's documents inside `user`."""

import hashlib
import uuid

from django.db import migrations

STEPLEN = 5

INTERNAL_FOLDERS = [
    (
        "swarmstar",
        "Data specific to the swarm: logs, reports, directives and information about nodes; the "
        "overarching plan and directive at any moment; documentation about how things in the swarm "
        "work, so that LLMs make better decisions.",
    ),
    (
        "user",
        "Information about the user, and the raw conversations we had with the user: "
        "user_preferences.md says how much and in what the user wants to be involved and their "
        "background; requested_features.md and user_requirements.md say what they asked for.",
    ),
    (
        "projects",
        "Software projects, one project_root_folder each: small scripts, a Python package, a clone "
        "of a repository or a web app.",
    ),
    (
        "references",
        "Documentation and code scraped from the internet that relate to our projects, goals and data.",
    ),
]

USER_DOCUMENTS = [
    (
        "user_preferences.md",
        "How much the user wants to be involved, in what, and their background. Read it to decide "
        "whether to involve the user.",
        "# User preferences\n\n- Involvement: \n- Background: \n",
    ),
    (
        "requested_features.md",
        "Features the user has asked for.",
        "# Requested features\n\n",
    ),
    (
        "user_requirements.md",
        "Requirements and constraints the user has set.",
        "# User requirements\n\n",
    ),
]


def step(position: int) -> str:
    return str(position).rjust(STEPLEN, "0")


def create_internal_folders(apps, schema_editor):
    Node = apps.get_model("memory", "Node")
    NodeContent = apps.get_model("memory", "NodeContent")
    if Node.objects.filter(depth=1).exists():
        return
    folders = {}
    for position, (name, description) in enumerate(INTERNAL_FOLDERS, start=1):
        folders[name] = Node.objects.create(
            id=f"memory_{uuid.uuid4().hex}",
            path=step(position),
            depth=1,
            numchild=len(USER_DOCUMENTS) if name == "user" else 0,
            type="internal_folder",
            is_folder=True,
            name=name,
            description=description,
            context={},
        )
    user = folders["user"]
    for position, (name, description, text) in enumerate(USER_DOCUMENTS, start=1):
        document = Node.objects.create(
            id=f"memory_{uuid.uuid4().hex}",
            path=user.path + step(position),
            depth=2,
            numchild=0,
            parent=user,
            type="document",
            is_folder=False,
            name=name,
            description=description,
            context={},
        )
        data = text.encode()
        NodeContent.objects.create(node=document, data=data, size=len(data), sha256=hashlib.sha256(data).hexdigest())


class Migration(migrations.Migration):
    dependencies = [("memory", "0002_path_collation_c")]

    operations = [migrations.RunPython(create_internal_folders, migrations.RunPython.noop)]
