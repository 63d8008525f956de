"""RealMem (zhiyuan5986/RealMemBench): a persona's sessions with an assistant over months. A query
is a user turn marked `is_query`; its gold is the sessions the assistant's next turn drew on
(`memory_session_uuids`). A persona is a folder, a session a document under its date; the unit
is the session. Only the sessions before the query's, in the file's order, are candidates (the
dates are not always in order; the file's order is the dialogue's, and no gold comes after)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from benchmarks.realdata.mirrors import Mirror
from benchmarks.realdata.shape import Dataset, Document, Folder, Question, Unit, untouched

REPOSITORY = "zhiyuan5986/RealMemBench"
COMMIT = "067c486a525b0811ef9cb8cb5ad258e286d0ce7e"
FILES = "_dialogues_256k.json"
SPLIT = "a fifth of the personas, by a stable hash of the set's name and the persona's folder"


def dataset(name: str, personas: Iterable[dict[str, Any]]) -> Dataset:
    """`personas`: the files' contents, in a stable order (by file name)."""
    folders, documents, units, questions = [], [], [], []
    dropped: Counter[str] = Counter()
    for number, persona in enumerate(personas, 1):
        folder = Folder(key=f"persona-{number:02d}", description=f"Persona {number}")
        folders.append(folder)
        sessions = persona["dialogues"]
        keys = [f"{folder.key}/session-{index:03d}.md" for index in range(1, len(sessions) + 1)]
        unit_of = {session["session_uuid"]: f"{folder.key}:{session['session_uuid']}" for session in sessions}
        for index, (key, session) in enumerate(zip(keys, sessions, strict=True), 1):
            text = session_text(session)
            documents.append(Document(key=key, description=f"Session {index} of persona {number}", text=text))
            units.append(Unit(key=unit_of[session["session_uuid"]], document=key, start=0, end=len(text)))
        for position, session in enumerate(sessions):
            earlier = frozenset(keys[:position])
            questions += session_questions(name, folder.key, session, unit_of=unit_of, earlier=earlier, dropped=dropped)
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


def session_text(session: dict[str, Any]) -> str:
    turns = (f"{turn['speaker']}: {turn['content'].strip()}" for turn in session["dialogue_turns"])
    return "\n\n".join([f"Date: {session['current_time']}", *turns])


def session_questions(
    name: str,
    folder: str,
    session: dict[str, Any],
    *,
    unit_of: dict[str, str],
    earlier: frozenset[str],
    dropped: Counter[str],
) -> list[Question]:
    """The session's queries, each with the earlier sessions its answer drew on; `earlier`, the
    documents of the sessions before it, its candidates."""
    turns = session["dialogue_turns"]
    own = unit_of[session["session_uuid"]]
    questions = []
    for index, turn in enumerate(turns):
        if not turn.get("is_query"):
            continue
        answer = turns[index + 1] if index + 1 < len(turns) else {}
        used = (unit_of.get(uuid) for uuid in answer.get("memory_session_uuids") or [])
        # Memory of the query's own session is the conversation at hand, not memory to find.
        gold = tuple(dict.fromkeys(key for key in used if key is not None and key != own))
        if not gold:
            dropped["no earlier session as evidence"] += 1
            continue
        questions.append(
            Question(
                key=f"{folder}:{turn.get('query_id') or session['session_uuid'] + '.' + str(index)}",
                text=turn["content"],
                category=turn.get("category_name") or "uncategorised",
                gold=gold,
                untouched=untouched(name, folder),
                scope=folder,
                candidates=earlier,
            )
        )
    return questions


def load(mirror: Mirror, name: str) -> Dataset:
    files = sorted(path for path in mirror.names("dataset") if path.endswith(FILES))
    return dataset(name, (mirror.json(path) for path in files))
