"""Cutting text into passages, and fusing rankings: pure functions."""

import itertools

from hypothesis import given
from hypothesis import strategies as st

from memory.index.fusion import at_most, distinct_first, fuse
from memory.index.passages import MAX_CHARS, cut, turn_starts


def test_short_lines_are_joined_and_offsets_point_into_the_text():
    text = "import os\nimport re\n\ndef main():\n    pass\n"
    pieces = list(cut(text))
    assert [piece.text for piece in pieces] == ["import os\nimport re\n\ndef main():\n    pass"]
    assert text[pieces[0].start : pieces[0].end] == pieces[0].text


def test_a_conversation_is_cut_a_turn_each():
    lines = [f"Speaker {n % 2}: turn number {n} says something ordinary about the weather." for n in range(200)]
    text = "\n\n".join(lines)
    pieces = list(cut(text))
    assert [piece.text for piece in pieces] == lines
    for piece in pieces:
        assert text[piece.start : piece.end] == piece.text


def test_each_turn_is_a_passage_of_its_own_its_later_paragraphs_with_it():
    text = (
        "Date: 2023-05-08\n\nBo: hi!\nAna: yes?\n"
        "assistant: First, the plan.\n\n- water the tomatoes\n- stake them\n\nuser: thanks\n"
        "Ana: I adopted a cat named Miso.\nBo: nice.\nassistant: Glad to help.\nuser: bye"
    )
    pieces = list(cut(text))
    assert [piece.text for piece in pieces] == [
        "Date: 2023-05-08",
        "Bo: hi!",
        "Ana: yes?",
        "assistant: First, the plan.\n\n- water the tomatoes\n- stake them",
        "user: thanks",
        "Ana: I adopted a cat named Miso.",
        "Bo: nice.",
        "assistant: Glad to help.",
        "user: bye",
    ]
    assert all(text[piece.start : piece.end] == piece.text for piece in pieces)


def test_a_dialogue_needs_two_speakers_who_each_speak_twice():
    assert turn_starts("Date: today\nNote: a\nNote: b\nsee https://x.org: and 10:30 now") == []
    assert len(turn_starts("Ana: a\nBo: b\nAna: c\nBo: d\nEve: once")) == 4
    log = "[14:02] Ana: hi\n[14:03] Bo: hello\n2023-05-08 14:04 Ana: how are you\n14:05 Bo: fine"
    assert len(turn_starts(log)) == 4


def test_a_long_turn_is_cut_between_lines_within_the_model_s_reach():
    text = "user: tell me\nassistant: " + "\n".join(f"step {n} of the long recipe goes here" for n in range(100))
    text += "\nuser: ok\nassistant: done"
    pieces = list(cut(text))
    assert pieces[0].text == "user: tell me"
    assert [piece.text for piece in pieces[-2:]] == ["user: ok", "assistant: done"]
    assert all(len(piece.text) <= MAX_CHARS for piece in pieces) and len(pieces) > 4
    assert all(not piece.text.startswith("tep") for piece in pieces)


def test_prose_is_cut_a_paragraph_each_short_ones_joined():
    text = "# Notes\n\nThe deploy runs at nine and takes about twenty minutes on a quiet day.\n\n}\n\n)\n"
    assert [piece.text for piece in cut(text)] == [
        "# Notes",
        "The deploy runs at nine and takes about twenty minutes on a quiet day.",
        "}\n\n)",
    ]


def test_a_line_without_breaks_is_cut_between_words():
    text = "word " * 1000
    pieces = list(cut(text))
    assert all(len(piece.text) <= MAX_CHARS for piece in pieces)
    assert all(not piece.text.startswith("ord") for piece in pieces)


@given(st.text(alphabet=st.sampled_from("ab \n.\t"), max_size=5_000))
def test_pieces_cover_every_word_in_order_without_overlap(text):
    pieces = list(cut(text))
    assert [piece.start for piece in pieces] == sorted(piece.start for piece in pieces)
    for before, after in itertools.pairwise(pieces):
        assert before.end <= after.start
    covered = "".join(piece.text for piece in pieces)
    assert "".join(covered.split()) == "".join(text.split())


def test_fusion_keeps_items_only_one_ranking_found():
    fused = dict(fuse([[1, 2, 3], [4, 2]]))
    assert set(fused) == {1, 2, 3, 4}
    assert max(fused, key=fused.get) == 2  # found by both
    assert fused[4] > fused[3]  # first of its ranking beats third of the other


def test_a_ranking_of_less_weight_counts_for_less_but_keeps_its_items():
    fused = dict(fuse([[1, 2], [3, 4]], weights=[0.25, 1.0]))
    assert set(fused) == {1, 2, 3, 4}
    assert fused[3] > fused[4] > fused[1] > fused[2]


def test_repeated_items_come_after_the_distinct_ones_in_their_order():
    items = ["tell me more", "nurse", "tell me more", "fine", "nurse", "tell me more"]
    assert distinct_first(list(enumerate(items)), key=lambda item: item[1]) == [
        (0, "tell me more"),
        (1, "nurse"),
        (3, "fine"),
        (2, "tell me more"),
        (4, "nurse"),
        (5, "tell me more"),
    ]


def test_at_most_keeps_the_first_of_each_group_in_order():
    items = [("a", 1), ("a", 2), ("b", 3), ("a", 4), ("b", 5), ("c", 6)]
    assert at_most(items, each=1, key=lambda item: item[0]) == [("a", 1), ("b", 3), ("c", 6)]
    assert at_most(items, each=2, key=lambda item: item[0]) == [("a", 1), ("a", 2), ("b", 3), ("b", 5), ("c", 6)]
    assert at_most(items, each=None, key=lambda item: item[0]) == items


def test_a_list_is_cut_an_item_each_outside_a_dialogue_and_kept_whole_in_a_turn():
    note = "# errands\n\n- buy bread and cheese for the weekend\nwifi: tern-5G (the password is on the fridge)\n"
    note += "- call the bank"
    assert [piece.text for piece in cut(note)] == [
        "# errands",
        "- buy bread and cheese for the weekend",
        "wifi: tern-5G (the password is on the fridge)",
        "- call the bank",
    ]
    reply = "assistant: Here is the plan:\n- buy bread and cheese for the weekend\n- call the bank"
    chat = f"user: what now?\n{reply}\nuser: thanks\nassistant: welcome"
    assert reply in [piece.text for piece in cut(chat)]
