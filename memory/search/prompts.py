"""What a search shows the LLM and the replies it accepts.

Options are numbered from 1 in exactly the list shown (the number is their only handle: node
ids would cost some twenty tokens an option), and every index in a reply is validated
against that list by the schema itself: a reply naming an option it was not shown fails
validation, goes back to the model for repair (the gateway's loop), and if never repaired is
rejected; it is never followed.

Each schema says its own offline reply (`offline_reply`), so the offline provider routes by
lexical overlap and reads extractively."""

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BaseModel, Field, create_model, field_validator, model_validator

from memory.validation import validate_name
from memsite.errors import InvalidInput
from memsite.llm.providers.offline import Reading, terms
from memsite.llm.quoting import DATA_RULE, data_block

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
    label: str  # name: description


def _questions_block(questions: Sequence[str]) -> str:
    return "\n".join(f"{number}. {question}" for number, question in enumerate(questions, 1))


def _asker(context: str) -> list[str]:
    return [f"The asker's context: {context}"] if context else []


def route_messages(*, questions: Sequence[str], context: str, notes: Sequence[str], where: str, options: Sequence[Option]) -> list[dict[str, str]]:
    """The options come alone in the last message, so nothing numbered in the context or notes
    can pass for one. What memory says (the folder's name, the options' names and descriptions,
    what the walk has learnt from it) is quoted as data."""
    lines = [f"Query: {' | '.join(questions)}", *_asker(context), data_block("\n".join([f"Location: {where}", *notes]))]
    listed = "\n".join(f"{number}. {option.label}" for number, option in enumerate(options, 1))
    return [
        {"role": "system", "content": ROUTE_SYSTEM},
        {"role": "user", "content": "\n".join(lines)},
        {"role": "user", "content": f"Options:\n{data_block(listed)}"},
    ]


def read_messages(*, questions: Sequence[str], context: str, notes: Sequence[str], node_line: str, text: str) -> list[dict[str, str]]:
    """The node and its content, and what the walk has learnt, are quoted as data."""
    system = [READ_SYSTEM, *_asker(context)]
    if notes:
        system.append("What the search has learnt so far:\n" + data_block("\n".join(notes)))
    return [
        {"role": "system", "content": "\n".join(system)},
        {"role": "user", "content": data_block(f"Node: {node_line}\nContent:\n{text}")},
        {"role": "user", "content": f"Questions:\n{_questions_block(questions)}"},
    ]


def describe_messages(content: str) -> list[dict[str, str]]:
    """What a tool found, to name and describe the node that will keep it: quoted as data."""
    return [{"role": "system", "content": DESCRIBE_SYSTEM}, {"role": "user", "content": data_block(content)}]


def option_label(name: str, description: str) -> str:
    description = " ".join(description.split())
    return f"{name}: {description}" if description else name


# Offline heuristics -------------------------------------------------------------------------


def coverage(question: str, text_terms: frozenset[str]) -> float:
    """The share of a question's terms found in a text."""
    wanted = set(terms(question))
    return len(wanted & text_terms) / len(wanted) if wanted else 0.0


PARTIAL = 0.34  # offline: a text holding this share of a question's terms answers it in part


def answers_fully(question: str, text_terms: frozenset[str]) -> bool:
    """Offline: a text answers a question when it holds all of its terms, or all but one in
    five for a long question (a sibling note usually differs by one word: its subject)."""
    wanted = set(terms(question))
    return bool(wanted) and len(wanted - text_terms) <= (len(wanted) - 1) // 5


def option_score(label: str, wanted: frozenset[str]) -> float:
    """Lexical match of a `name: description` option: a shared term in the name counts twice,
    description terms are damped by the description's length, so a folder's own name beats a
    sibling whose description lists many examples."""
    name, _, description = label.partition(": ")
    name_terms, description_terms = set(terms(name)), set(terms(description))
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
        """The option sharing most terms with the questions, its name counting most; options
        sharing none are unviable."""
        wanted = reading.query_terms
        scores = {option.index: option_score(option.text, wanted) for option in reading.options}
        best = max(scores, key=lambda index: (scores[index], -index), default=None)
        chosen = best if best is not None and scores[best] > 0 else None
        unviable = [index for index, score in scores.items() if score == 0]
        return {"choice": chosen, "unviable": unviable, "reason": "lexical overlap with the questions"}


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
        """A question is answered when the text holds most of its terms; the answer is the
        text's sentences that share the most terms with it."""
        text_terms = frozenset(terms(reading.context))
        # The text's own sentences: not the "Node: [id] ..." line that introduces it, nor titles.
        sentences = [sentence for sentence in reading.sentences if not sentence.startswith(("Node: ", "Content:", "#"))]
        findings = []
        for option in reading.options:
            share = coverage(option.text, text_terms)
            if share < PARTIAL:
                continue
            wanted = frozenset(terms(option.text))
            ranked = sorted(sentences, key=lambda sentence: -len(wanted & set(terms(sentence))))
            answer = " ".join(ranked[:2])[:4000] or option.text
            findings.append({"question": option.index, "answer": answer, "complete": answers_fully(option.text, text_terms)})
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
    """Options sharing the most terms with the questions first (stable otherwise): the cheap
    pre-ranking that decides which options of a large folder go in the first batch."""
    wanted = frozenset(term for question in questions for term in terms(question))
    return sorted(options, key=lambda option: -option_score(option.label, wanted))
