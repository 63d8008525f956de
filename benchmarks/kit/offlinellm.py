"""The LLM of the load and abuse benchmarks: the fake OpenAI-compatible server of the tests in a
process of its own, answering every chat completion with memsite's offline heuristics over the
messages it was sent, as a real model would answer after `delay` seconds."""

from __future__ import annotations

import re
import sys
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from benchmarks.kit.harness import fake_llm

# The purpose each reply schema is asked for with: what the offline heuristics key their text on.
SCHEMA_PURPOSES = {
    "RouteReply": "route",
    "ToolReply": "route",
    "QueryArguments": "route",
    "PatternArguments": "route",
    "ReadReply": "read",
    "NodeDescription": "describe",
    "Decision": "decide",
    "Plan": "decide",
    "Reflection": "reflect",
    "DeepReflection": "deep_reflect",
    "ChatReply": "chat",
}


def _schema_classes() -> dict[str, type]:
    """Every pydantic model loaded, by name. A schema made per call (`route_reply(count)`) is
    answered by its base (`RouteReplyBase`), whose offline reply reads the options it was shown."""
    from pydantic import BaseModel

    import agents.brains.services.prompts  # noqa: F401
    import memory.search.prompts
    import memory.search.tools  # noqa: F401

    found: dict[str, type] = {}
    pending = [BaseModel]
    while pending:
        for sub in pending.pop().__subclasses__():
            found.setdefault(sub.__name__, sub)
            pending.append(sub)
    return found


NUMBERED = re.compile(r"^\s*(?P<number>\d{1,4})[.)]\s+(?:\[(?P<key>[^\]\n]{1,160})\]\s*)?(?P<text>\S.*)$")
ASKED = re.compile(r"^\s*(?:query|task):\s*(?P<text>\S.*)$", re.IGNORECASE | re.MULTILINE)


def prose_reading(messages: list[dict[str, Any]]) -> Any:
    """What a request asks, read from its prose as a model would: the numbered lines of its last
    message are the options, and a `Query:` or `Task:` line, if any, the query."""
    from dataclasses import replace

    from memsite.llm.providers.offline import plain_reading
    from memsite.text.reading import numbered

    plain = plain_reading(messages)
    last = str(messages[-1].get("content") or "") if messages else ""
    offered = [match for match in map(NUMBERED.match, last.splitlines()) if match]
    asked = ASKED.search("\n".join(str(message.get("content") or "") for message in messages))
    query = asked["text"] if asked else plain.query
    options = numbered(query, [match["text"] for match in offered], keys=[match["key"] for match in offered])
    return replace(plain, query=query, options=options)


def offline_answer(request: Any) -> Any:
    """What the LLM server replies to one chat completion: memsite's offline heuristics over the
    messages it was sent, filling the schema named in its response_format. Runs in the server's
    process, never in memsite's."""
    from memsite.llm.providers.offline import fill_schema

    global _classes
    if _classes is None:
        _classes = _schema_classes()
    try:
        response_format = request.body.get("response_format") or {}
        name = (response_format.get("json_schema") or {}).get("name", "")
        schema = _classes.get(f"{name}Base") or _classes.get(name)
        if schema is None:
            print(f"llm server: no schema named {name!r}", file=sys.stderr)
            return {}
        reading = prose_reading(request.messages)
        return fill_schema(schema, purpose=SCHEMA_PURPOSES.get(name, "answer"), reading=reading).model_dump(mode="json")
    except Exception:  # noqa: BLE001 - a server answers every request; the gateway judges the reply
        traceback.print_exc()
        return {}


_classes: dict[str, type] | None = None


@contextmanager
def llm_server(delay: float) -> Iterator[tuple[str, int]]:
    """The server, answering after `delay` seconds; yields its URL and process id."""
    with fake_llm(offline_answer, delay=delay) as served:
        yield served
