"""The real-data benchmark's loaders (benchmarks/realdata/), each on a few records of our own
writing in its set's JSON shape: the documents a node would write, the units and their spans,
the questions with their gold, answers, candidates and split. No mirror is needed."""

import subprocess

import pytest

from benchmarks.realdata import beam, cosqa, hipporag, madial, prefeval, realmem
from benchmarks.realdata.mirrors import Mirror, MirrorMissing
from benchmarks.realdata.run import load, parse_args
from benchmarks.realdata.shape import Dataset, untouched


def by_key(dataset: Dataset) -> tuple[dict, dict]:
    return {u.key: u for u in dataset.units}, {q.key: q for q in dataset.questions}


def assert_units_lie_in_their_documents(dataset: Dataset) -> None:
    keys = {d.key for d in dataset.documents}
    for unit in dataset.units:
        assert unit.document in keys
        assert 0 <= unit.start < unit.end <= len(dataset.document(unit.document).text)
    units = {u.key for u in dataset.units}
    assert all(set(q.gold) <= units and q.gold for q in dataset.questions)


# --- BEAM ---------------------------------------------------------------------------------------

BEAM_BATCHES = [
    {
        "batch_number": 1,
        "time_anchor": None,
        "turns": [
            [
                {
                    "role": "user",
                    "id": 0,
                    "time_anchor": "March-15-2024",
                    "index": "1,1",
                    "question_type": "main_question",
                    "content": "I keep my sprint notes in Notion. ->-> 1,1",
                },
                {"role": "assistant", "id": 1, "content": "Good choice.\n\n### Linking\nNotion pages link well."},
            ],
            [
                {"role": "user", "id": 2, "index": "1,2", "content": "My first sprint ends on March 29. ->-> 1,2"},
                {"role": "assistant", "id": 3, "content": "Noted: March 29."},
            ],
        ],
    },
    {
        "batch_number": 2,
        "time_anchor": None,
        "turns": [
            [
                {
                    "role": "user",
                    "id": 4,
                    "time_anchor": "April-05-2024",
                    "content": "Sprint two ends April 19 ->-> 2,N/A",
                },
                {"role": "assistant", "id": 5, "content": "Got it."},
            ]
        ],
    },
]
BEAM_PROBING = {
    "abstention": [{"question": "What did the client say about the logo?", "ideal_response": "No information."}],
    "information_extraction": [
        {
            "question": "When does my first sprint end?",
            "answer": "It ends on March 29.",
            "source_chat_ids": [2],
            "rubric": ["LLM response should state: March 29"],
        }
    ],
    "knowledge_update": [
        {
            "question": "When does the current sprint end?",
            "answer": "April 19",
            "source_chat_ids": {"original_info": [2], "updated_info": [4]},
            "rubric": ["LLM response should state: April 19", "LLM response should state: sprint two"],
        }
    ],
    "event_ordering": [
        {"question": "In what order did I mention my tools?", "answer": "...", "source_chat_ids": [0, [2, 4]]}
    ],
    "contradiction_resolution": [
        {
            "question": "Do I use Notion?",
            "ideal_answer": "You said both.",
            "source_chat_ids": {"first_statement": [0], "second_statement": [99]},
            "rubric": ["LLM response should state: there is contradictory information"],
        }
    ],
}


@pytest.fixture
def beam_set():
    return beam.dataset("beam-test", [beam.Chat(number=7, batches=BEAM_BATCHES, probing=BEAM_PROBING)])


def test_beam_writes_a_session_a_batch_under_its_date(beam_set):
    assert [f.key for f in beam_set.folders] == ["chat-07"]
    assert [(d.key, d.description) for d in beam_set.documents] == [
        ("chat-07/session-01.md", "Session 1 of chat 7"),
        ("chat-07/session-02.md", "Session 2 of chat 7"),
    ]
    first = beam_set.documents[0].text
    assert first.startswith("Date: March-15-2024\n\nuser: I keep my sprint notes in Notion.\n\nassistant: Good choice.")
    assert "->->" not in first + beam_set.documents[1].text
    assert beam_set.documents[1].text.startswith("Date: April-05-2024\n\n")


def test_beam_units_are_messages_whose_spans_hold_them(beam_set):
    units, _ = by_key(beam_set)
    assert len(units) == 6
    assert beam_set.text_of(units["chat-07:0"]) == "user: I keep my sprint notes in Notion."
    assert beam_set.text_of(units["chat-07:1"]) == "assistant: Good choice.\n\n### Linking\nNotion pages link well."
    assert beam_set.text_of(units["chat-07:4"]) == "user: Sprint two ends April 19"
    assert units["chat-07:4"].document == "chat-07/session-02.md"
    assert_units_lie_in_their_documents(beam_set)


def test_beam_questions_take_their_evidence_flattened_and_answers_from_the_rubric(beam_set):
    _, questions = by_key(beam_set)
    assert beam_set.dropped == {"abstention: no evidence": 1}
    extraction = questions["chat-07:information_extraction:0"]
    assert extraction.gold == ("chat-07:2",)
    assert extraction.accepted == (("March 29",),) and extraction.answer == "It ends on March 29."
    assert questions["chat-07:knowledge_update:0"].gold == ("chat-07:2", "chat-07:4")
    assert questions["chat-07:knowledge_update:0"].accepted == (("April 19", "sprint two"),)
    assert questions["chat-07:event_ordering:0"].gold == ("chat-07:0", "chat-07:2", "chat-07:4")
    assert questions["chat-07:event_ordering:0"].accepted == ()
    contradiction = questions["chat-07:contradiction_resolution:0"]
    assert contradiction.gold == ("chat-07:0",)  # 99 is no message of the chat
    assert contradiction.accepted == ()  # the rubric says how to answer, the set gives no answer


def test_beam_splits_and_scopes_by_chat(beam_set):
    assert {q.scope for q in beam_set.questions} == {"chat-07"}
    assert {q.untouched for q in beam_set.questions} == {untouched("beam-test", "chat-07")}
    assert beam_set.by_folder and beam_set.where == "user"


# --- RealMem ------------------------------------------------------------------------------------


def realmem_session(uuid, day, turns):
    return {
        "session_identifier": f"Travel_1:{uuid}",
        "session_uuid": uuid,
        "current_time": day,
        "dialogue_turns": turns,
    }


def turn(speaker, content, *, query=None, category="Dynamic Incremental", used=None):
    said = {"speaker": speaker, "is_query": query is not None, "content": content, "query_id": query}
    if query is not None:
        said |= {"topic": "Travel", "category_name": category, "session_type": "multi_session"}
    if used is not None:
        said |= {"memory_used": [{"session_uuid": u, "content": "..."} for u in used], "memory_session_uuids": used}
    return said


REALMEM_PERSONA = {
    "_metadata": {"person_name": "Test_Person", "total_sessions": 3, "total_tokens": 100},
    "dialogues": [
        realmem_session(
            "aaaa0001",
            "2025-12-19 (Friday)",
            [turn("User", "I want to plan a trip to Kyoto in April."), turn("Assistant", "Let us start with dates.")],
        ),
        realmem_session(
            "bbbb0002",
            "2025-12-22 (Monday)",
            [
                turn("User", "About Kyoto: what should I book first?", query="Q-0001"),
                turn("Assistant", "The ryokan, for April.", used=["aaaa0001"]),
            ],
        ),
        realmem_session(
            "cccc0003",
            "2025-12-20 (Saturday)",
            [
                turn("User", "Which train did we pick?", query="Q-0002", category="Dynamic Updating"),
                turn("Assistant", "None yet.", used=["cccc0003"]),
                turn("User", "Remind me of the plan so far.", query="Q-0003", category="Temporal-reasoning"),
                turn("Assistant", "Kyoto in April, ryokan first.", used=["aaaa0001", "bbbb0002", "cccc0003"]),
            ],
        ),
    ],
}


def test_realmem_sessions_are_documents_and_units_under_their_dates():
    dataset = realmem.dataset("realmem-test", [REALMEM_PERSONA])
    assert [(d.key, d.description) for d in dataset.documents] == [
        (f"persona-01/session-00{n}.md", f"Session {n} of persona 1") for n in (1, 2, 3)
    ]
    assert dataset.documents[0].text == (
        "Date: 2025-12-19 (Friday)\n\n"
        "User: I want to plan a trip to Kyoto in April.\n\n"
        "Assistant: Let us start with dates."
    )
    units, _ = by_key(dataset)
    assert dataset.text_of(units["persona-01:bbbb0002"]) == dataset.documents[1].text
    assert_units_lie_in_their_documents(dataset)


def test_realmem_queries_are_answered_from_earlier_sessions_only():
    dataset = realmem.dataset("realmem-test", [REALMEM_PERSONA])
    _, questions = by_key(dataset)
    assert set(questions) == {"persona-01:Q-0001", "persona-01:Q-0003"}
    assert dataset.dropped == {"no earlier session as evidence": 1}  # Q-0002 drew on its own session only
    first, later = questions["persona-01:Q-0001"], questions["persona-01:Q-0003"]
    assert first.text == "About Kyoto: what should I book first?" and first.category == "Dynamic Incremental"
    assert first.gold == ("persona-01:aaaa0001",)
    assert first.candidates == {"persona-01/session-001.md"}
    # The file's order, not the dates: the third session is dated before the second.
    assert later.gold == ("persona-01:aaaa0001", "persona-01:bbbb0002")
    assert later.candidates == {"persona-01/session-001.md", "persona-01/session-002.md"}
    assert later.category == "Temporal-reasoning" and later.scope == "persona-01"
    assert {q.untouched for q in dataset.questions} == {untouched("realmem-test", "persona-01")}


# --- MADial-Bench -------------------------------------------------------------------------------

MADIAL_DIALOGUES = [
    {
        "dialogue": [
            "<BOD>\n",
            '<Bart>: "I have a concert tomorrow!"\n',
            '<Assistant>: "That is great news."\n',
            '<Bart>: "I am a bit nervous."\n',
            '<Assistant>: "Remember the Christmas party? You danced so well."\n',
            "<EOD>\n",
        ],
        "test-turn": [4],
        "relevant-id": [1, 3],
        "user-id": 1,
    },
    {
        "dialogue": ["<BOD>\n", '<Lisa>: "I drew a cat today."\n', '<Assistant>: "Like your prize drawing?"\n'],
        "test-turn": [2],
        "relevant-id": [2, 1],
        "user-id": 2,
    },
]
MADIAL_MEMORIES = [
    {"1": {"time": "2023-12-25", "scene": "Activity", "emotion": "Happy", "event": "Bart danced at the party."}},
    {"2": {"time": "2023-03-07", "scene": "Others", "emotion": "Proud", "event": "Lisa won the drawing contest."}},
    {"3": {"time": "2023-05-15", "scene": "Emotional", "emotion": "Calm", "event": "During the fair, he sang."}},
    {"4": {"time": "2023-05-20", "scene": "Others", "emotion": "Happy", "event": "Grandpa baked bread."}},
]


def test_madial_memories_are_documents_in_the_folder_of_their_child():
    dataset = madial.dataset("madial-test", MADIAL_DIALOGUES, MADIAL_MEMORIES)
    assert [f.key for f in dataset.folders] == ["user-1", "user-2"]
    assert [d.key for d in dataset.documents] == [
        "user-1/memory-001.md",
        "user-2/memory-002.md",
        "user-1/memory-003.md",
    ]
    assert dataset.documents[0].text == "Date: 2023-12-25\nScene: Activity\nEmotion: Happy\n\nBart danced at the party."
    assert dataset.documents[0].description == "Memory 1 of user 1"
    # 3 names no one: the dialogue citing it is Bart's; 4 is neither named nor cited.
    assert dataset.dropped == {"memories of no one user": 1}
    units, _ = by_key(dataset)
    assert dataset.text_of(units["3"]).endswith("During the fair, he sang.")
    assert_units_lie_in_their_documents(dataset)


def test_madial_asks_the_dialogue_before_its_test_turn():
    dataset = madial.dataset("madial-test", MADIAL_DIALOGUES, MADIAL_MEMORIES)
    _, questions = by_key(dataset)
    bart, lisa = questions["dialogue-001"], questions["dialogue-002"]
    assert bart.text == "Bart: I have a concert tomorrow!\nAssistant: That is great news.\nBart: I am a bit nervous."
    assert bart.gold == ("1", "3") and bart.scope == "user-1" and bart.category == "Activity"
    assert lisa.gold == ("2",)  # memory 1 is Bart's: not in Lisa's memory
    assert lisa.text == "Lisa: I drew a cat today." and lisa.category == "Others"
    assert bart.untouched == untouched("madial-test", "dialogue-001")


# --- PrefEval -----------------------------------------------------------------------------------

PREFEVAL_TOPICS = [
    (
        "travel_restaurant",
        [
            {
                "preference": "I avoid gluten because of an intolerance.",
                "question": "I'll be in Rome soon. Which local restaurants should I try?",
                "explanation": "Roman cuisine relies on pasta.",
            },
            {
                "preference": "I never eat shellfish.",
                "question": "What should I eat in New Orleans?",
                "explanation": "",
            },
        ],
    ),
    ("shop_fashion", [{"preference": "I only wear natural fibres.", "question": "Which coat for winter?"}]),
]


def test_prefeval_states_each_preference_in_a_session_and_asks_the_whole_memory():
    dataset = prefeval.dataset("prefeval-test", PREFEVAL_TOPICS)
    assert [(d.key, d.text) for d in dataset.documents] == [
        ("group-01/session-001.md", "user: I avoid gluten because of an intolerance."),
        ("group-01/session-002.md", "user: I never eat shellfish."),
        ("group-02/session-001.md", "user: I only wear natural fibres."),
    ]
    units, questions = by_key(dataset)
    rome = questions["travel_restaurant:1"]
    assert rome.text == "I'll be in Rome soon. Which local restaurants should I try?"
    assert rome.gold == ("group-01:1",) and rome.category == "travel" and rome.scope == ""
    assert dataset.text_of(units["group-01:1"]) == "user: I avoid gluten because of an intolerance."
    assert questions["shop_fashion:1"].untouched == untouched("prefeval-test", "shop_fashion")
    assert_units_lie_in_their_documents(dataset)


# --- CoSQA --------------------------------------------------------------------------------------

COSQA_CODE = {
    'def is_readable(filename):\n    """Check the file can be read."""\n    return os.access(filename, os.R_OK)': 0,
    "def paste(xsel=False):\n    return clipboard(xsel)": 101,
}


def cosqa_record(idx, doc, code, retrieval_idx):
    return {
        "idx": idx,
        "doc": doc,
        "code": code,
        "code_tokens": code,
        "docstring_tokens": "",
        "label": 1,
        "retrieval_idx": retrieval_idx,
    }


def test_cosqa_functions_are_a_projects_files_and_test_is_untouched():
    readable, paste = list(COSQA_CODE)
    splits = {
        "dev": [cosqa_record("cosqa-train-1", "python check file is readonly", readable, 0)],
        "test": [cosqa_record("cosqa-train-2", "python get clipboard contents", paste, 101)],
    }
    dataset = cosqa.dataset("cosqa-test", COSQA_CODE, splits)
    assert dataset.where == "projects"
    assert [d.key for d in dataset.documents] == ["part-00/f00000.py", "part-01/f00101.py"]
    assert [f.key for f in dataset.folders] == ["part-00", "part-01"]
    units, questions = by_key(dataset)
    assert dataset.text_of(units["101"]) == paste
    assert questions["dev-001"].gold == ("0",) and not questions["dev-001"].untouched
    assert questions["test-001"].gold == ("101",) and questions["test-001"].untouched
    assert questions["test-001"].text == "python get clipboard contents"


# --- HippoRAG's samples -------------------------------------------------------------------------

HOTPOT_CORPUS = {
    "Alû": ["Alû is a vengeful spirit.", " It haunts the night."],
    "Lilu (mythology)": ["A lilu is a masculine spirit."],
    "Demon Dice": ["Demon Dice is a dice game."],
}
HOTPOT_RECORDS = [
    {
        "_id": "5a77ec",
        "question": "If Gallu is a demon Lilu is what?",
        "answer": "a spirit",
        "type": "bridge",
        "level": "easy",
        "supporting_facts": [["Alû", 0], ["Lilu (mythology)", 0], ["Alû", 1]],
        "context": [],
    }
]


def test_hotpotqa_paragraphs_are_references_and_supporting_titles_the_gold():
    dataset = hipporag.hotpotqa("hotpot-test", HOTPOT_RECORDS, HOTPOT_CORPUS)
    assert dataset.where == "references"
    assert [d.key for d in dataset.documents] == ["part-00/p0000.md", "part-00/p0001.md", "part-00/p0002.md"]
    assert dataset.documents[0].text == "Alû\n\nAlû is a vengeful spirit. It haunts the night."
    (question,) = dataset.questions
    assert question.gold == ("p0000", "p0001") and question.category == "bridge"
    assert question.accepted == (("a spirit",),)
    assert question.untouched == untouched("hotpot-test", "5a77ec")
    assert_units_lie_in_their_documents(dataset)


MUSIQUE_CORPUS = [
    {"title": "Journal of Psychotherapy Integration", "text": "It is published by SEPI."},
    {"title": "Adolescence", "text": "G. Stanley Hall was the first president of the APA."},
    {"title": "Adolescence", "text": "Puberty begins adolescence."},
]
MUSIQUE_RECORDS = [
    {
        "id": "3hop1__1_2",
        "question": "Who was the first president of the publisher of the journal?",
        "answer": "G. Stanley Hall",
        "answer_aliases": ["Stanley Hall"],
        "answerable": True,
        "question_decomposition": [],
        "paragraphs": [
            {"idx": 0, "title": "Adolescence", "paragraph_text": "Puberty begins adolescence.", "is_supporting": False},
            {
                "idx": 1,
                "title": "Adolescence",
                "paragraph_text": "G. Stanley Hall was the first president of the APA.",
                "is_supporting": True,
            },
            {
                "idx": 2,
                "title": "Journal of Psychotherapy Integration",
                "paragraph_text": "It is published by SEPI.",
                "is_supporting": True,
            },
        ],
    }
]


def test_musique_gold_is_the_supporting_paragraphs_and_aliases_are_accepted():
    dataset = hipporag.musique("musique-test", MUSIQUE_RECORDS, MUSIQUE_CORPUS)
    (question,) = dataset.questions
    assert question.gold == ("p0001", "p0000")  # the paragraph with the same title but other text is not
    assert question.category == "3hop"
    assert question.accepted == (("G. Stanley Hall",), ("Stanley Hall",))
    units, _ = by_key(dataset)
    assert dataset.text_of(units["p0001"]) == "Adolescence\n\nG. Stanley Hall was the first president of the APA."


# --- mirrors ------------------------------------------------------------------------------------


def git(*args, cwd):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def test_a_mirror_is_read_at_its_commit_and_a_missing_one_is_named(tmp_path):
    work = tmp_path / "work"
    (work / "data").mkdir(parents=True)
    (work / "data" / "lines.json").write_text('{"1": {"a": 1}}\n{"2": {"a": 2}}\n')
    git("init", "-q", cwd=work)
    git("add", ".", cwd=work)
    git("-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-q", "-m", "data", cwd=work)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=work, capture_output=True, text=True).stdout.strip()
    (tmp_path / "mirrors").mkdir()
    git("clone", "-q", "--bare", str(work), str(tmp_path / "mirrors" / "owner+name" / "repo"), cwd=tmp_path)
    mirror = Mirror.at(tmp_path / "mirrors", "owner/name", commit)
    assert mirror.json_lines("data/lines.json") == [{"1": {"a": 1}}, {"2": {"a": 2}}]
    assert mirror.names("data") == ["data/lines.json"]
    with pytest.raises(MirrorMissing, match="lacks commit"):
        Mirror.at(tmp_path / "mirrors", "owner/name", "0" * 40)
    with pytest.raises(MirrorMissing, match="no mirror of other/name"):
        Mirror.at(tmp_path / "mirrors", "other/name", commit)


def test_a_set_whose_mirror_is_missing_is_skipped_with_its_reason(tmp_path, capsys):
    datasets, skipped = load(parse_args(["--sets", "cosqa,madial-en", "--mirrors", str(tmp_path)]))
    assert datasets == []
    assert [why.split(" (")[0] for why in skipped] == ["cosqa", "madial-en"]
    assert "Skipping cosqa: no mirror of Jun-jie-Huang/CoCLR" in capsys.readouterr().err


def test_unknown_sets_are_refused(capsys):
    with pytest.raises(SystemExit):
        parse_args(["--sets", "cosqa,locomo"])
    assert "unknown set(s) locomo" in capsys.readouterr().err
