"""CoSQA's retrieval split (Jun-jie-Huang/CoCLR): real web search queries, each answered by one
Python function among 6,267. The functions are the files of one project (`part-NN/fNNNNN.py`, a
hundred a folder, named by their number); the unit is a function, its whole file. The set's own
test split is the untouched slice; its dev split is the rest."""

from __future__ import annotations

from typing import Any

from benchmarks.realdata.mirrors import Mirror
from benchmarks.realdata.shape import Dataset, Document, Folder, Question, Unit

REPOSITORY = "Jun-jie-Huang/CoCLR"
COMMIT = "14ebcacf9e9bc3e7109102632bc63047876f27d2"
CODE = "data/search/code_idx_map.txt"
SPLITS = {"dev": "data/search/cosqa-retrieval-dev-500.json", "test": "data/search/cosqa-retrieval-test-500.json"}
PER_FOLDER = 100
SPLIT = "the set's test split (cosqa-retrieval-test-500); the dev split is the tuned part"


def path_of(index: int) -> str:
    return f"part-{index // PER_FOLDER:02d}/f{index:05d}.py"


def dataset(name: str, code: dict[str, int], splits: dict[str, list[dict[str, Any]]]) -> Dataset:
    """`code`: each function's text and number (code_idx_map.txt); `splits`: dev's and test's records."""
    documents, units = [], []
    for text, index in sorted(code.items(), key=lambda item: item[1]):
        documents.append(Document(key=path_of(index), description="", text=text))
        units.append(Unit(key=str(index), document=path_of(index), start=0, end=len(text)))
    questions = [
        Question(
            key=f"{split}-{number:03d}",
            text=record["doc"],
            category="web query",
            gold=(str(record["retrieval_idx"]),),
            untouched=split == "test",
        )
        for split, records in splits.items()
        for number, record in enumerate(records, 1)
    ]
    parts = sorted({document.folder for document in documents})
    return Dataset(
        name=name,
        where="projects",
        folders=tuple(Folder(key=part, description="") for part in parts),
        documents=tuple(documents),
        units=tuple(units),
        questions=tuple(questions),
        split=SPLIT,
    )


def load(mirror: Mirror, name: str) -> Dataset:
    return dataset(name, mirror.json(CODE), {split: mirror.json(path) for split, path in SPLITS.items()})
