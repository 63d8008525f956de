"""The scripted oracle LLM of the search and retrieval benchmarks: it always routes a search
right, because it knows which document answers each question, so what is measured is the
protocol's own cost (its prompts, tokens and calls), not a model's judgement."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from unittest import mock

from pydantic import BaseModel

from benchmarks.corpora import searchtree
from memory.search import prompts
from memsite.llm import gateway
from memsite.llm.providers import CallTrace, LLMRequest
from memsite.llm.providers.offline import OfflineProvider


@dataclass(frozen=True)
class Target:
    question: searchtree.Question
    node_id: str
    names: tuple[str, ...]  # from the benchmark's root down to the document


NODE_LINE = re.compile(r"^Node: \[(memory_[0-9a-f]{32})\]", re.MULTILINE)
NUMBERED = re.compile(r"^(\d+)\. (.*)$")


def _last_user(messages: Sequence[dict]) -> str:
    return next(str(m["content"]) for m in reversed(messages) if m.get("role") == "user")


def _labelled(text: str, label: str) -> str | None:
    prefix = f"{label}: "
    return next((line[len(prefix) :] for line in text.splitlines() if line.startswith(prefix)), None)


def _numbered_after(text: str, header: str) -> list[tuple[int, str]]:
    lines = text.splitlines()
    start = lines.index(header) + 1 if header in lines else len(lines)
    return [(int(m[1]), m[2]) for m in map(NUMBERED.match, lines[start:]) if m]


def option_name(label: str) -> str:
    """The name an option label starts with (`name: description | matched: passage`, the
    description or the passage left out at times); in the shortcut, the node's path."""
    return label.partition(prompts.MATCHED)[0].partition(": ")[0]


@dataclass(frozen=True)
class RoutePrompt:
    """What a route prompt shows: where the walk is, the questions, the options' names."""

    where: str
    asked: list[str]
    names: dict[int, str]  # by option number

    @property
    def shortcut(self) -> bool:
        """Whether the options are the nodes of the best passages, named by their paths."""
        return bool(self.names) and all(name.startswith("/") for name in self.names.values())


def shown_route(messages: Sequence[dict]) -> RoutePrompt:
    prompt = "\n".join(str(message["content"]) for message in messages if message["role"] == "user")
    options = _numbered_after(_last_user(messages), "Options:")
    return RoutePrompt(
        where=_labelled(prompt, "Location") or "",
        asked=(_labelled(prompt, "Query") or "").split(" | "),
        names={number: option_name(label) for number, label in options},
    )


def shown_read(messages: Sequence[dict]) -> tuple[str | None, list[tuple[int, str]]]:
    """The id of the node a read prompt shows, and its numbered questions."""
    node = next((m[1] for msg in messages for m in [NODE_LINE.search(str(msg["content"]))] if m), None)
    return node, _numbered_after(_last_user(messages), "Questions:")


class Oracle:
    """An in-process provider that always routes right: it knows, per question, the document
    that answers it. It parses the engine's prompts (memory/search/prompts.py) the way a model
    would read them, replies with a valid instance of the request's schema, and records usage
    as the offline provider does (prompt tokens counted from the messages), so the tokens are
    those of the real prompts. The time spent in here is kept, to be taken off the search's."""

    name = "oracle"

    def __init__(self, targets: Sequence[Target] = ()):
        self.targets = {target.question.text: target for target in targets}
        self.seconds = 0.0
        self.unparsed = 0  # prompts the oracle could not place on a target's path

    def complete(self, request: LLMRequest, trace: CallTrace) -> BaseModel | str:
        started = time.perf_counter()
        try:
            if request.purpose == "route":
                data = self.route(request.messages)
            elif request.purpose == "read":
                data = self.read_node(request.messages)
            else:  # tool arguments, descriptions: not part of a right walk
                self.unparsed += 1
                return OfflineProvider().complete(request, trace)
            reply = request.schema.model_validate(data)
            text = reply.model_dump_json()
            trace.messages = request.messages
            trace.response_mode = "json_schema"
            trace.reply = text
            trace.add_usage(messages=request.messages, reply=text, prompt_tokens=None, completion_tokens=None)
            return reply
        finally:
            self.seconds += time.perf_counter() - started

    def _target(self, questions: Sequence[str]) -> Target | None:
        return next((self.targets[q] for q in questions if q in self.targets), None)

    def route(self, messages: Sequence[dict]) -> dict:
        prompt = shown_route(messages)
        where, target = prompt.where, self._target(prompt.asked)
        if target is not None and prompt.shortcut:
            # The best passages' nodes, named by their paths: the answer if it is among them.
            ends = "/" + "/".join(target.names)
            chosen = next((number for number, path in prompt.names.items() if path.endswith(ends)), None)
            return {
                "choice": chosen,
                "unviable": [],
                "reason": "The answer's passage." if chosen else "Not among these.",
            }
        if where.startswith("the tools of") or target is None or where not in target.names[:-1]:
            # A tool, or a place off the answer's path (never reached by a right walk).
            self.unparsed += not where.startswith("the tools of")
            return {"choice": None, "unviable": [], "reason": "Not on the way to the answer."}
        wanted = target.names[target.names.index(where) + 1]
        chosen = next((number for number, name in prompt.names.items() if name == wanted), None)
        others = [number for number in prompt.names if number != chosen]
        return {"choice": chosen, "unviable": others, "reason": f"{wanted} leads to the answer."}

    def read_node(self, messages: Sequence[dict]) -> dict:
        node, questions = shown_read(messages)
        findings = []
        for number, question in questions:
            target = self.targets.get(question)
            if target is not None and target.node_id == node:
                findings.append({"question": number, "answer": target.question.answer, "complete": True})
        return {"findings": findings, "new_questions": [], "is_answer": bool(findings)}


@contextmanager
def provider(replacement: object | None) -> Iterator[None]:
    """Every gateway call goes to `replacement` (None: the configured provider, offline here)."""
    if replacement is None:
        yield
        return
    with mock.patch.object(gateway, "get_provider", lambda name: replacement):
        yield


@contextmanager
def searches_run_here() -> Iterator[None]:
    """search_start queues a Celery task on commit; here the benchmark runs the search itself."""
    from memory import tasks

    with mock.patch.object(tasks.search_run, "delay", lambda **kwargs: None):
        yield


# --- building ---------------------------------------------------------------------------------
