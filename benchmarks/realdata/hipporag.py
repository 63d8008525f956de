"""HippoRAG's samples of HotpotQA and MuSiQue (OSU-NLP-Group/HippoRAG at an older commit, which
still has them): a hundred multi-hop questions each over a corpus of Wikipedia paragraphs. Each
paragraph is a reference document (its title, then its text; `part-NN/pNNNN.md`, a hundred a
folder) and the unit; a question's gold is its supporting paragraphs. A fifth of the questions
is untouched. Categories: HotpotQA's question type, MuSiQue's number of hops."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from benchmarks.realdata.mirrors import Mirror
from benchmarks.realdata.shape import Dataset, Document, Folder, Question, Unit, untouched

REPOSITORY = "OSU-NLP-Group/HippoRAG"
COMMIT = "3d95d255a8db0c1699b853cfb4fbe5056708162d"
PER_FOLDER = 100
SPLIT = "a fifth of the questions, by a stable hash of the set's name and the question's id"


def paragraphs(name: str, titled: Sequence[tuple[str, str]], questions: list[Question]) -> Dataset:
    """A set of `titled` paragraphs (title, text) in the order given and its questions."""
    documents, units = [], []
    for index, (title, text) in enumerate(titled):
        key = f"part-{index // PER_FOLDER:02d}/p{index:04d}.md"
        body = f"{title}\n\n{text.strip()}"
        documents.append(Document(key=key, description=f"Paragraph {index}", text=body))
        units.append(Unit(key=f"p{index:04d}", document=key, start=0, end=len(body)))
    parts = sorted({document.folder for document in documents})
    return Dataset(
        name=name,
        where="references",
        folders=tuple(Folder(key=part, description=f"Paragraphs, part {int(part[5:])}") for part in parts),
        documents=tuple(documents),
        units=tuple(units),
        questions=tuple(questions),
        split=SPLIT,
    )


def hotpotqa(name: str, records: list[dict[str, Any]], corpus: dict[str, list[str]]) -> Dataset:
    """`corpus`: each paragraph's sentences by its title (hotpotqa_train_corpus.json)."""
    unit_of = {title: f"p{index:04d}" for index, title in enumerate(corpus)}
    questions = [
        Question(
            key=record["_id"],
            text=record["question"],
            category=record.get("type", "hotpotqa"),
            gold=tuple(dict.fromkeys(unit_of[title] for title, _ in record["supporting_facts"])),
            untouched=untouched(name, record["_id"]),
            answer=record["answer"],
            accepted=((record["answer"],),),
        )
        for record in records
    ]
    return paragraphs(name, [(title, "".join(sentences)) for title, sentences in corpus.items()], questions)


def musique(name: str, records: list[dict[str, Any]], corpus: list[dict[str, str]]) -> Dataset:
    """`corpus`: the paragraphs, each a title and a text (musique_train_corpus.json)."""
    unit_of = {(p["title"], p["text"]): f"p{index:04d}" for index, p in enumerate(corpus)}
    questions = []
    for record in records:
        supporting = (p for p in record["paragraphs"] if p["is_supporting"])
        answers = dict.fromkeys([record["answer"], *record.get("answer_aliases", [])])
        questions.append(
            Question(
                key=record["id"],
                text=record["question"],
                category=record["id"].split("__")[0][:4],  # 2hop, 3hop1 and 3hop2 alike, ...
                gold=tuple(dict.fromkeys(unit_of[(p["title"], p["paragraph_text"])] for p in supporting)),
                untouched=untouched(name, record["id"]),
                answer=record["answer"],
                accepted=tuple((answer,) for answer in answers),
            )
        )
    return paragraphs(name, [(p["title"], p["text"]) for p in corpus], questions)


def load_hotpotqa(mirror: Mirror, name: str) -> Dataset:
    return hotpotqa(name, mirror.json("data/hotpotqa_train.json"), mirror.json("data/hotpotqa_train_corpus.json"))


def load_musique(mirror: Mirror, name: str) -> Dataset:
    return musique(name, mirror.json("data/musique_train.json"), mirror.json("data/musique_train_corpus.json"))
