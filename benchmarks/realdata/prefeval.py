"""PrefEval, explicit preferences (amazon-science/PrefEval): a user states a preference, and
later asks something whose good answer depends on it, in words that barely overlap. Every
stated preference is a session of its own (`user: preference`) in one memory, a folder a
topic; each question is asked of the whole memory, and its gold is its own preference. A
question's category is its topic's kind (travel, shop, lifestyle...)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from benchmarks.realdata.mirrors import Mirror
from benchmarks.realdata.shape import Dataset, Document, Folder, Question, Unit, untouched

REPOSITORY = "amazon-science/PrefEval"
COMMIT = "50795054b5ff5f418d2b768a331d71e480f93331"
FOLDER = "benchmark_dataset/explicit_preference"
SPLIT = "a fifth of the topics, by a stable hash of the set's name and the topic's name"


def dataset(name: str, topics: Iterable[tuple[str, list[dict[str, Any]]]]) -> Dataset:
    """`topics`: each topic's name (its file's, `travel_restaurant`) and records, in a stable order."""
    folders, documents, units, questions = [], [], [], []
    for number, (topic, records) in enumerate(topics, 1):
        folder = Folder(key=f"group-{number:02d}", description=f"Conversations, group {number}")
        folders.append(folder)
        for index, record in enumerate(records, 1):
            key = f"{folder.key}/session-{index:03d}.md"
            text = f"user: {record['preference'].strip()}"
            documents.append(Document(key=key, description=f"Session {index} of group {number}", text=text))
            units.append(Unit(key=f"{folder.key}:{index}", document=key, start=0, end=len(text)))
            questions.append(
                Question(
                    key=f"{topic}:{index}",
                    text=record["question"],
                    category=topic.split("_")[0],
                    gold=(f"{folder.key}:{index}",),
                    untouched=untouched(name, topic),
                )
            )
    return Dataset(
        name=name,
        where="user",
        folders=tuple(folders),
        documents=tuple(documents),
        units=tuple(units),
        questions=tuple(questions),
        split=SPLIT,
    )


def load(mirror: Mirror, name: str) -> Dataset:
    files = sorted(path for path in mirror.names(FOLDER) if path.endswith(".json"))
    return dataset(name, ((path.rsplit("/", 1)[-1].removesuffix(".json"), mirror.json(path)) for path in files))
