"""BEAM (mohammadtavakoli78/BEAM): long chats between a user and an assistant, each with probing
questions of ten kinds whose evidence is message ids. A chat is a folder; each of its batches a
session document (`user: text` and `assistant: text` paragraphs under the batch's date); the
unit is a message. Abstention questions have no evidence by design and are left out."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from benchmarks.realdata.mirrors import Mirror
from benchmarks.realdata.shape import Dataset, Document, Folder, Question, TextWriter, Unit, flattened, untouched

REPOSITORY = "mohammadtavakoli78/BEAM"
COMMIT = "b2a3ee8ba12d68f83143dda191097dc3e028ddd3"
# A user message ends in the generator's position marker, "->-> 1,7" (or "->-> 2,N/A").
MARKER = re.compile(r"\s*->->[^\n]*\Z")
# The rubric's items that name what a right answer says: the answer's parts.
STATES = "LLM response should state: "
SPLIT = "a fifth of the chats, by a stable hash of the set's name and the chat's folder"


@dataclass(frozen=True)
class Chat:
    number: int
    batches: list[dict[str, Any]]  # chat.json
    probing: dict[str, list[dict[str, Any]]]  # probing_questions.json


def dataset(name: str, chats: Iterable[Chat]) -> Dataset:
    folders, documents, units, questions = [], [], [], []
    dropped: Counter[str] = Counter()
    for chat in chats:
        folder = Folder(key=f"chat-{chat.number:02d}", description=f"Chat {chat.number}")
        folders.append(folder)
        known: set[str] = set()
        for number, batch in enumerate(chat.batches, 1):
            document, said = session(folder.key, chat.number, number, batch)
            documents.append(document)
            units += said
            known.update(unit.key for unit in said)
        questions += chat_questions(name, folder.key, chat.probing, known, dropped)
    return Dataset(
        name=name,
        where="user",
        folders=tuple(folders),
        documents=tuple(documents),
        units=tuple(units),
        questions=tuple(questions),
        split=SPLIT,
        by_folder=True,
        dropped=dict(dropped),
    )


def session(folder: str, chat: int, number: int, batch: dict[str, Any]) -> tuple[Document, list[Unit]]:
    """A batch as the session document a node would write, and its messages' spans."""
    key = f"{folder}/session-{number:02d}.md"
    messages = [message for turn in batch["turns"] for message in turn]
    anchor = next((m["time_anchor"] for m in messages if m.get("time_anchor")), batch.get("time_anchor"))
    writer = TextWriter()
    if anchor:
        writer.write(f"Date: {anchor}", after="\n\n")
    units = []
    for message in messages:
        said = MARKER.sub("", message["content"]).strip()
        start, end = writer.write(f"{message['role']}: {said}", after="\n\n")
        units.append(Unit(key=f"{folder}:{message['id']}", document=key, start=start, end=end))
    return Document(key=key, description=f"Session {number} of chat {chat}", text=writer.text()), units


def chat_questions(
    name: str, folder: str, probing: dict[str, list[dict[str, Any]]], known: set[str], dropped: Counter[str]
) -> list[Question]:
    questions = []
    for category, items in probing.items():
        for index, item in enumerate(items):
            ids = (f"{folder}:{value}" for value in flattened(item.get("source_chat_ids")))
            gold = tuple(dict.fromkeys(key for key in ids if key in known))
            if not gold:
                dropped[f"{category}: no evidence"] += 1
                continue
            rubric = item.get("rubric", [])
            parts = tuple(line[len(STATES) :].strip() for line in rubric if line.startswith(STATES))
            questions.append(
                Question(
                    key=f"{folder}:{category}:{index}",
                    text=item["question"],
                    category=category,
                    gold=gold,
                    untouched=untouched(name, folder),
                    scope=folder,
                    answer=item.get("answer", ""),
                    # Only where the set gives an answer: elsewhere the rubric says how to answer
                    # ("there is contradictory information"), not what.
                    accepted=(parts,) if parts and item.get("answer") else (),
                )
            )
    return questions


def chat_numbers(mirror: Mirror, size: str) -> Sequence[int]:
    names = (path.rsplit("/", 1)[-1] for path in mirror.names(f"chats/{size}"))
    return sorted(int(name) for name in names if name.isdigit())


def load(mirror: Mirror, name: str, size: str) -> Dataset:
    """`size`: 100K or 500K, the folder of the chats under chats/."""
    chats = (
        Chat(
            number=number,
            batches=mirror.json(f"chats/{size}/{number}/chat.json"),
            probing=mirror.json(f"chats/{size}/{number}/probing_questions/probing_questions.json"),
        )
        for number in chat_numbers(mirror, size)
    )
    return dataset(name, chats)
