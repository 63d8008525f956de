"""A small memory tree and scripted replies for walk tests."""

import re

from memory import selectors, services
from memory.models import Node
from memory.search.prompts import option_name
from tests.factories import default_space, system
from tests.fake_openai import RecordedRequest, Reply

OPTION = re.compile(r"^(\d+)\. (.*)$", re.MULTILINE)


def build_tree() -> dict[str, Node]:
    """references/databases/pg-tuning.md, references/frontend/css.md, user/machine.md."""
    references = selectors.node_internal_folder(space=default_space(), name="references")
    nodes = {"references": references, "user": selectors.node_internal_folder(space=default_space(), name="user")}

    def add(parent: str, name: str, description: str, text: str | None = None) -> None:
        nodes[name] = services.node_create(
            parent=nodes[parent],
            type="document" if text is not None else "folder",
            name=name,
            description=description,
            content=text.encode() if text is not None else None,
            by=system(),
        )

    add("references", "databases", "Notes about PostgreSQL and SQLite.")
    add("databases", "pg-tuning.md", "Tuning PostgreSQL memory.", "Set shared_buffers to a quarter of the RAM.")
    add("references", "frontend", "CSS and browser notes.")
    add("frontend", "css.md", "Styling notes.", "Use CSS custom properties for colours.")
    add("user", "machine.md", "The user's server.", "The server has 16 GB of RAM.")
    return nodes


def shown(request: RecordedRequest) -> dict[str, int]:
    """Option name -> its number, as listed in a routing request (before any repair turns)."""
    listed = next(message["content"] for message in reversed(request.messages) if OPTION.search(message["content"]))
    return {option_name(label): int(number) for number, label in OPTION.findall(listed)}


def pick(name: str | None, *, unviable: tuple[str, ...] = ()) -> Reply:
    """A routing reply choosing the option named `name` (None: no option), by whatever number
    it was shown under."""

    def respond(request: RecordedRequest) -> dict:
        numbers = shown(request)
        return {
            "choice": numbers[name] if name else None,
            "unviable": [numbers[other] for other in unviable],
            "reason": "scripted",
        }

    return Reply.from_request(respond)


def found(answer: str, *, complete: bool = True, new_questions: tuple[str, ...] = (), question: int = 1) -> Reply:
    return Reply.json(
        {
            "findings": [{"question": question, "answer": answer, "complete": complete}],
            "new_questions": list(new_questions),
            "is_answer": complete,
        }
    )


NOTHING = Reply.json({"findings": [], "new_questions": [], "is_answer": False})
