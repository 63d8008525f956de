"""The four internal folders of seed 000, and the user's documents inside `user`."""

import hashlib
import uuid

from django.db import migrations

from memory.internal_folders import INTERNAL_FOLDERS, USER_DOCUMENTS

STEPLEN = 5


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
