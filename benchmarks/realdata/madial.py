"""MADial-Bench, English (hejunqing/MADial-Bench): dialogues of two children with an assistant,
each with a test turn where the assistant should recall memories (`relevant-id`). The query is
the dialogue up to the test turn; the unit is a memory, a document of its own (its date, scene
and emotion, then the event) in the folder of the child it is about (the child the event names,
else the one whose dialogues cite it). The set has no folders worth splitting: a fifth of the
dialogues is untouched. A question's category is the scene of its first relevant memory."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from benchmarks.realdata.mirrors import Mirror
from benchmarks.realdata.shape import Dataset, Document, Folder, Question, Unit, untouched

REPOSITORY = "hejunqing/MADial-Bench"
COMMIT = "572e3a10d6d01852a65e4508e0b3ab2a00d0710c"
DIALOGUES, MEMORIES = "data/en/MADial-Bench-en-dialogue.json", "data/en/MADial-Bench-en-memory.json"
SPLIT = "a fifth of the dialogues, by a stable hash of the set's name and the dialogue's number"
TURN = re.compile(r'^<([^<>]+)>:\s*"?(.*?)"?\s*$', re.DOTALL)
ASSISTANT = "Assistant"


def speakers(dialogues: list[dict[str, Any]]) -> dict[int, str]:
    """Each user id's name, as their dialogues' turns are tagged (`<Bart>: "..."`)."""
    names: dict[int, Counter[str]] = {}
    for dialogue in dialogues:
        tags = (m[1] for line in dialogue["dialogue"] if (m := TURN.match(line.strip())))
        said = Counter(tag for tag in tags if tag != ASSISTANT)
        names.setdefault(dialogue["user-id"], Counter()).update(said)
    return {user: tags.most_common(1)[0][0] for user, tags in names.items() if tags}


def owners(memories: dict[int, dict[str, Any]], dialogues: list[dict[str, Any]]) -> dict[int, int]:
    """Each memory's user: the one its event names, else the one whose dialogues cite it; a
    memory neither decides is left out."""
    names = speakers(dialogues)
    citing: dict[int, set[int]] = {}
    for dialogue in dialogues:
        for memory in dialogue["relevant-id"]:
            citing.setdefault(memory, set()).add(dialogue["user-id"])
    found = {}
    for memory, record in memories.items():
        named = {user for user, name in names.items() if re.search(rf"\b{re.escape(name)}\b", record["event"])}
        users = named if len(named) == 1 else citing.get(memory, set())
        if len(users) == 1:
            found[memory] = next(iter(users))
    return found


def query(dialogue: dict[str, Any]) -> str:
    """The dialogue before its (first) test turn, a `speaker: text` line a turn."""
    lines = []
    for line in dialogue["dialogue"][: min(dialogue["test-turn"])]:
        match = TURN.match(line.strip())
        if match and match[1] not in ("BOD", "EOD"):
            lines.append(f"{match[1]}: {match[2].strip()}")
    return "\n".join(lines)


def dataset(name: str, dialogues: list[dict[str, Any]], memory_lines: list[dict[str, Any]]) -> Dataset:
    memories = {int(key): record for line in memory_lines for key, record in line.items()}
    owner = owners(memories, dialogues)
    documents, units = [], []
    for memory in sorted(owner):
        record, folder = memories[memory], f"user-{owner[memory]}"
        key = f"{folder}/memory-{memory:03d}.md"
        text = f"Date: {record['time']}\nScene: {record['scene']}\nEmotion: {record['emotion']}\n\n{record['event']}"
        documents.append(Document(key=key, description=f"Memory {memory} of user {owner[memory]}", text=text))
        units.append(Unit(key=str(memory), document=key, start=0, end=len(text)))
    dropped: Counter[str] = Counter()
    questions = []
    for number, dialogue in enumerate(dialogues, 1):
        user = dialogue["user-id"]
        gold = tuple(str(m) for m in dict.fromkeys(dialogue["relevant-id"]) if owner.get(m) == user)
        if not gold:
            dropped["no memory of its user"] += 1
            continue
        questions.append(
            Question(
                key=f"dialogue-{number:03d}",
                text=query(dialogue),
                category=memories[int(gold[0])]["scene"],
                gold=gold,
                untouched=untouched(name, f"dialogue-{number:03d}"),
                scope=f"user-{user}",
            )
        )
    folders = sorted({f"user-{user}" for user in owner.values()})
    unowned = len(memories) - len(owner)
    return Dataset(
        name=name,
        where="user",
        folders=tuple(Folder(key=key, description=f"User {key.removeprefix('user-')}") for key in folders),
        documents=tuple(documents),
        units=tuple(units),
        questions=tuple(questions),
        split=SPLIT,
        dropped={**dropped, **({"memories of no one user": len(memories) - len(owner)} if unowned else {})},
    )


def load(mirror: Mirror, name: str) -> Dataset:
    return dataset(name, mirror.json_lines(DIALOGUES), mirror.json_lines(MEMORIES))
