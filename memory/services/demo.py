"""Demo memory for the embedded default: a small project and a few references and notes."""

import io
import tarfile

from django.db import transaction

from memory import selectors
from memory.models import Node
from memory.services.archives import project_import
from memory.services.nodes import NodeSpec, node_bulk_create, node_create
from memsite.spaces.principals import Principal

DEMO_PROJECT = "todo-api"
DEMO_PROJECT_FILES = {
    "README.md": "# todo-api\n\nA small HTTP API for todo lists, written with Flask.\n",
    "pyproject.toml": '[project]\nname = "todo-api"\nversion = "0.1.0"\ndependencies = ["flask>=3"]\n',
    "todo_api/__init__.py": "",
    "todo_api/app.py": (
        "from flask import Flask, jsonify, request\n\napp = Flask(__name__)\nTODOS = []\n\n\n"
        "@app.post('/todos')\ndef add_todo():\n    TODOS.append(request.json['title'])\n"
        "    return jsonify(TODOS), 201\n"
    ),
    "tests/test_app.py": (
        "from todo_api.app import app\n\n\ndef test_add_todo():\n"
        "    response = app.test_client().post('/todos', json={'title': 'milk'})\n"
        "    assert response.status_code == 201\n"
    ),
}
DEMO_REFERENCES = [
    (
        "flask-quickstart.md",
        "Notes from Flask's quickstart: routes, request data and JSON responses.",
        "# Flask quickstart\n\n- `@app.post('/path')` registers a POST route.\n"
        "- `request.json` is the parsed JSON body.\n- `jsonify(...)` builds a JSON response.\n",
    ),
    (
        "http-status-codes.md",
        "Which HTTP status code to answer for created, invalid, missing and conflicting resources.",
        "# HTTP status codes\n\n| code | when |\n|---|---|\n| 201 | created |\n| 400 | invalid input |\n"
        "| 404 | no such resource |\n| 409 | conflicts with the current state |\n",
    ),
]
DEMO_SWARM_NOTE = (
    "plan.md",
    "The swarm's current plan and directive.",
    "# Plan\n\n1. Keep the todo-api project tested.\n2. Add persistence to todo-api.\n",
)

# A search the embedded default runs at its first start, so the dashboard shows a trace.
DEMO_SEARCH_QUESTIONS = ["Which HTTP status code answers a conflict with the current state?"]


def _demo_project_archive() -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for path, text in DEMO_PROJECT_FILES.items():
            data = text.encode()
            info = tarfile.TarInfo(path)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


@transaction.atomic
def demo_memory_seed(*, by: Principal) -> bool:
    """Add the demo memory to `by`'s space, written by `by`, unless it is there already; says
    whether it added it."""
    space = by.space
    projects = selectors.node_internal_folder(space=space, name="projects")
    if Node.objects.filter(parent=projects, name=DEMO_PROJECT).exists():
        return False
    project = node_create(
        parent=projects,
        type="project_root_folder",
        name=DEMO_PROJECT,
        description="A small Flask HTTP API for todo lists, with its tests.",
        by=by,
    )
    project_import(project=project, archive=io.BytesIO(_demo_project_archive()), by=by)
    node_bulk_create(
        parent=selectors.node_internal_folder(space=space, name="references"),
        specs=[
            NodeSpec(name=name, type="document", description=description, content=text.encode())
            for name, description, text in DEMO_REFERENCES
        ],
        by=by,
    )
    name, description, text = DEMO_SWARM_NOTE
    node_create(
        parent=selectors.node_internal_folder(space=space, name="swarmstar"),
        type="document",
        name=name,
        description=description,
        content=text.encode(),
        by=by,
    )
    return True
