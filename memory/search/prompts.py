"""What a search shows the LLM and the replies it accepts.
Explained in docs/memory.md."""

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BaseModel, Field, create_model, field_validator, model_validator

from memory.validation import validate_name
from memsite.errors import InvalidInput
from memsite.llm.prompt import Prompt
from memsite.llm.quoting import DATA_RULE, data_block
from memsite.text.lines import one_line
from memsite.text.ranking import rank
from memsite.text.reading import Reading, numbered
from memsite.text.units import unit
from memsite.text.words import roots

ROUTE_SYSTEM = (
    "You guide a search through a tree of memory. Given the questions, choose the one option "
    "most likely to lead to their answers, by its number, or null if none can; list the numbers "
    f"of options that cannot help. Reply in JSON. {DATA_RULE}"
)
READ_SYSTEM = (
    "You read one memory node for a search. For each question the text answers, fully or in "
    "part, give its number, the answer taken from the text, and whether it is complete. List "
    "new questions that must be answered first, if any, and say whether this node itself is an "
    f"answer to the questions. Reply in JSON. {DATA_RULE}"
)
ARGUMENTS_SYSTEM = "You fill in the arguments of a tool for a search. Reply in JSON."
DESCRIBE_SYSTEM = (
    f"Name and describe a new memory node in a few words, for finding it later. Reply in JSON. {DATA_RULE}"
)


@dataclass(frozen=True)
class Option:
    key: str  # a node id or a tool id
    label: str  # name: description, and what matched under it (`option_label`)


def _questions_block(questions: Sequence[str]) -> str:
    return "\n".join(f"{number}. {question}" for number, question in enumerate(questions, 1))


def _asker(context: str) -> list[str]:
    return [f"The asker's context: {context}"] if context else []


def _asked(questions: Sequence[str]) -> str:
    return " | ".join(questions)


def route_prompt(
    *, questions: Sequence[str], context: str, notes: Sequence[str], where: str, options: Sequence[Option]
) -> Prompt:
    """The options come alone in the last message, so nothing numbered in the context or notes
    can pass for one. What memory says (the folder's name, the options' names and descriptions,
    what the walk has learnt from it) is quoted as data."""
    asked, located = _asked(questions), "\n".join([f"Location: {where}", *notes])
    lines = [f"Query: {asked}", *_asker(context), data_block(located)]
    listed = "\n".join(f"{number}. {option.label}" for number, option in enumerate(options, 1))
    messages = [
        {"role": "system", "content": ROUTE_SYSTEM},
        {"role": "user", "content": "\n".join(lines)},
        {"role": "user", "content": f"Options:\n{data_block(listed)}"},
    ]
    labels = [option.label for option in options]
    context = "\n".join([*_asker(context), located])
    reading = Reading(query=asked, context=context, options=numbered(asked, labels), given=tuple(questions))
    return Prompt(messages, reading)


def read_prompt(*, questions: Sequence[str], context: str, notes: Sequence[str], node_line: str, text: str) -> Prompt:
    """The node and its content, and what the walk has learnt, are quoted as data; the
    questions are the options its reply answers by number."""
    system = [READ_SYSTEM, *_asker(context)]
    if notes:
        system.append("What the search has learnt so far:\n" + data_block("\n".join(notes)))
    messages = [
        {"role": "system", "content": "\n".join(system)},
        {"role": "user", "content": data_block(f"Node: {node_line}\nContent:\n{text}")},
        {"role": "user", "content": f"Questions:\n{_questions_block(questions)}"},
    ]
    asked = _asked(questions)
    return Prompt(
        messages, Reading(query=asked, context=f"Node: {node_line}\n{text}", options=numbered(asked, questions))
    )


def arguments_prompt(*, questions: Sequence[str], tool: str, description: str) -> Prompt:
    asked = _asked(questions)
    messages = [
        {"role": "system", "content": ARGUMENTS_SYSTEM},
        {"role": "user", "content": f"Query: {asked}\nTool: {tool}: {description}"},
    ]
    return Prompt(messages, Reading(query=asked, context=f"{tool}: {description}"))


def describe_prompt(content: str) -> Prompt:
    """What a tool found, to name and describe the node that will keep it: quoted as data."""
    messages = [{"role": "system", "content": DESCRIBE_SYSTEM}, {"role": "user", "content": data_block(content)}]
    return Prompt(messages, Reading(query="", context=content))


MATCHED = " | matched: "
SNIPPET_CHARS = 240


def option_label(name: str, description: str, snippet: str = "") -> str:
    """`name: description`, and with a snippet (the option's best passage) ` | matched: ` and
    the snippet on one line, cut to SNIPPET_CHARS."""
    description = " ".join(description.split())
    label = f"{name}: {description}" if description else name
    snippet = one_line(snippet, SNIPPET_CHARS)
    return f"{label}{MATCHED}{snippet}" if snippet else label


def _label_parts(label: str) -> tuple[str, str]:
    """(name, description with the matched snippet) of an option label."""
    head, _, snippet = label.partition(MATCHED)
    name, _, description = head.partition(": ")
    return name, f"{description} {snippet}".strip()


def option_name(label: str) -> str:
    """The name an option label (`option_label`) starts with, whether or not a description or
    a matched snippet follows it."""
    return _label_parts(label)[0]


# Offline heuristics -------------------------------------------------------------------------

# Offline: thresholds on the best sentence's score (`memsite.text.ranking.rank`, in [0, 1]; without
# embeddings, the weighted share of the question's terms the sentence holds, its headings
# included). A sentence holding a single term of a question of several scores under PARTIAL.
PARTIAL = 0.34  # a sentence scoring this answers the question in part
ANSWERED = 0.6  # and this, fully: most of the question's weight, not every word of it


def option_score(label: str, wanted: frozenset[str]) -> float:
    """Lexical match of an option label: a shared term in the name counts twice; description
    terms (the matched snippet's among them) are damped by their number, so a folder's own name
    beats a sibling whose description lists many examples."""
    name, description = _label_parts(label)
    name_terms, description_terms = set(roots(name)), set(roots(description))
    shared_description = len(description_terms & wanted) / math.sqrt(len(description_terms) or 1)
    return 2 * len(name_terms & wanted) + shared_description


class RouteReplyBase(BaseModel):
    choice: int | None = None
    unviable: list[int] = Field(default_factory=list)
    reason: str = ""

    @model_validator(mode="after")
    def _choice_not_unviable(self) -> "RouteReplyBase":
        if self.choice is not None and self.choice in self.unviable:
            raise ValueError("the chosen option cannot also be unviable")
        return self

    @classmethod
    def offline_reply(cls, *, purpose: str, reading: Reading) -> dict[str, Any]:
        """The option whose label scores best for one of the questions (the reading's hybrid
        score; equal scores go to the option whose name shares most); options scoring nothing
        for every question are unviable."""
        options = reading.options
        units = [unit(f"{option.key or ''} {option.text}") for option in options]
        scores = dict.fromkeys((option.index for option in options), 0.0)
        for question in reading.given or (reading.query,):  # the questions, each scored alone
            for scored in rank(question, units, cosines=reading.cosines):
                index = options[scored.position].index
                scores[index] = max(scores[index], scored.score)
        wanted = frozenset(roots(reading.query))
        names = {option.index: option_score(option.text, wanted) for option in options}
        best = max(scores, key=lambda index: (scores[index], names[index], -index), default=None)
        chosen = best if best is not None and scores[best] > 0 else None
        unviable = [index for index, score in scores.items() if score == 0]
        return {"choice": chosen, "unviable": unviable, "reason": "the best match with the questions"}


@functools.cache
def route_reply(count: int) -> type[RouteReplyBase]:
    """The reply schema for `count` options: indices 1..count or null."""
    index = Annotated[int, Field(ge=1, le=count)]
    return create_model(
        "RouteReply",
        __base__=RouteReplyBase,
        choice=(index | None, Field(None, description=f"1 to {count}, or null if no option can help")),
        unviable=(list[index], Field(default_factory=list)),
    )


class ToolReplyBase(RouteReplyBase):
    @classmethod
    def offline_reply(cls, *, purpose: str, reading: Reading) -> dict[str, Any]:
        """Words cannot tell which tool helps: explore before giving up on a folder."""
        explore = next((option.index for option in reading.options if "(explore)" in option.text), None)
        return {"choice": explore, "unviable": [], "reason": "explore before leaving"}


@functools.cache
def tool_reply(count: int) -> type[RouteReplyBase]:
    return create_model("ToolReply", __base__=(ToolReplyBase, route_reply(count)))


class Finding(BaseModel):
    question: int
    answer: str = Field(max_length=4000)
    complete: bool = False


class ReadReplyBase(BaseModel):
    findings: list[Finding] = Field(default_factory=list)
    new_questions: list[Annotated[str, Field(min_length=1, max_length=500)]] = Field(default_factory=list, max_length=3)
    is_answer: bool = False

    @classmethod
    def offline_reply(cls, *, purpose: str, reading: Reading) -> dict[str, Any]:
        """A question is answered in part when the text's best sentence for it scores PARTIAL,
        fully at ANSWERED. The answer is that sentence and the next best if it scores PARTIAL
        too, verbatim and in the text's order: they are the citations."""
        findings = []
        for option in reading.options:
            ranked = reading.rank(option.text)
            if not ranked or ranked[0].score < PARTIAL:
                continue
            chosen = sorted(
                (scored for scored in ranked[:2] if scored.score >= PARTIAL), key=lambda scored: scored.position
            )
            answer = " ".join(scored.text for scored in chosen)[:4000]
            findings.append({"question": option.index, "answer": answer, "complete": ranked[0].score >= ANSWERED})
        return {
            "findings": findings,
            "new_questions": [],
            "is_answer": any(finding["complete"] for finding in findings),
        }


@functools.cache
def read_reply(count: int) -> type[ReadReplyBase]:
    class BoundFinding(Finding):
        question: int = Field(ge=1, le=count)

    return create_model("ReadReply", __base__=ReadReplyBase, findings=(list[BoundFinding], Field(default_factory=list)))


class NodeDescription(BaseModel):
    name: str = Field(min_length=1, max_length=120)
    description: str = Field(max_length=1000)

    @field_validator("name")
    @classmethod
    def _a_valid_node_name(cls, name: str) -> str:
        """Checked here, so a name the tree refuses goes back to the model for repair."""
        try:
            return validate_name(name)
        except InvalidInput as exc:
            raise ValueError(exc.message) from None

    @classmethod
    def offline_reply(cls, *, purpose: str, reading: Reading) -> dict[str, Any]:
        words = [word for word in reading.keywords[:5]] or ["answer"]
        lead = " ".join(reading.lead(2))[:1000]
        return {"name": " ".join(words)[:120], "description": lead}


def batch_by_tokens(options: Sequence[Option], *, budget: int, count_tokens) -> list[Option]:
    """The leading options whose lines fit in `budget` tokens (at least one)."""
    chosen: list[Option] = []
    spent = 0
    for option in options:
        cost = count_tokens(f"{len(chosen) + 1}. {option.label}") + 1
        if chosen and spent + cost > budget:
            break
        chosen.append(option)
        spent += cost
    return chosen


def lexical_rank(options: Sequence[Option], questions: Sequence[str]) -> list[Option]:
    """Options sharing the most terms with the questions first (stable otherwise): the order of
    a folder's children that hold none of the index's best passages, after those that do."""
    wanted = frozenset(term for question in questions for term in roots(question))
    return sorted(options, key=lambda option: -option_score(option.label, wanted))
