"""Chats stored as JSON are cut a message each (pure): the files the agents' own programs write
(tests/fixtures/swarm, her and memobrain), and hand-written ones in the shapes of the others."""

import json
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory.index import json_turns
from memory.index.passages import MAX_CHARS, Piece, cut

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def read(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def exact(text: str) -> list[Piece]:
    """The text's passages, each checked to be the text at its offsets."""
    pieces = list(cut(text))
    assert all(text[piece.start : piece.end] == piece.text for piece in pieces)
    return pieces


def messages_of(pieces: list[Piece]) -> list[dict]:
    """The passages that are a whole JSON object, read."""
    found = []
    for piece in pieces:
        try:
            found.append(json.loads(piece.text))
        except ValueError:
            continue
    return [value for value in found if isinstance(value, dict)]


def as_prose(text: str, monkeypatch) -> list[Piece]:
    """The text cut as it was before JSON chats were told apart."""
    with monkeypatch.context() as patched:
        patched.setattr(json_turns, "message_spans", lambda text: [])
        return list(cut(text))


def test_a_swarm_conversation_is_cut_a_message_each_tool_calls_included():
    """Swarm's messages, compact, as the program keeps them: the two tool calls have null
    content, and are passages of their own all the same (what was called, for whom)."""
    text = read("swarm/messages.json")
    pieces = exact(text)
    assert [json.loads(piece.text) for piece in pieces] == json.loads(text)
    calls = [json.loads(piece.text) for piece in pieces if '"tool_calls": [' in piece.text]
    assert [call["content"] for call in calls] == [None, None]
    assert calls[1]["tool_calls"][0]["function"]["name"] == "frost_date"


def test_a_pretty_printed_swarm_response_drops_the_keys_that_only_join_its_messages():
    """`{"messages": [` and `], "context_variables": {}}` say nothing: no passage of a bracket."""
    text = read("swarm/response.json")
    pieces = exact(text)
    assert [json.loads(piece.text) for piece in pieces] == json.loads(text)["messages"]
    assert pieces[0].text.startswith('{\n      "content": null') and pieces[-1].text.endswith("}")


def test_her_chat_history_is_cut_a_message_each_and_the_rest_of_her_memory_as_before(monkeypatch):
    """her's memory.json, compact: chatHistory's {role, content, t} are passages of their own;
    the thoughts, logs and neurons around them are still cut, every word kept."""
    text = read("her/memory-dbed84b.json")
    pieces = exact(text)
    history = json.loads(text)["chatHistory"]
    assert [message for message in messages_of(pieces) if "role" in message] == history
    first = text.index('{"role":"user"')
    assert [piece for piece in pieces if piece.end <= first][:1] == as_prose(text, monkeypatch)[:1]
    assert_nothing_lost(text, pieces)


def test_a_chat_a_few_levels_down_memobrain_s_graph_long_messages_cut_within_their_own():
    """MemoBrain's save_memory: messages at nodes.<id>.thought, one of them of 14,000
    characters, cut between words inside its own span; nothing else of the file is lost."""
    text = read("memobrain/research_run.json")
    pieces = exact(text)
    spans = json_turns.message_spans(text)
    thoughts = [node["thought"] for node in json.loads(text)["nodes"].values() if isinstance(node["thought"], list)]
    assert [json.loads(text[start:end]) for start, end in spans] == [m for thought in thoughts for m in thought]
    longest = max(spans, key=lambda span: span[1] - span[0])
    inside = [piece for piece in pieces if longest[0] <= piece.start and piece.end <= longest[1]]
    assert len(inside) > 10 and all(len(piece.text) <= MAX_CHARS for piece in inside)
    assert all(piece.end <= longest[0] or piece.start >= longest[1] or piece in inside for piece in pieces)
    assert_nothing_lost(text, pieces)


def test_swarmstar_s_developer_logs_and_their_parallel_groups():
    """What swarmstar persists of a swarm node (a MongoDB document): `developer_logs` of
    {role, content}, a group of parallel logs as a list within the list. Written by hand in
    that shape: swarmstar needs MongoDB and a model to run."""
    node = {
        "_id": "s1_n7",
        "version": 1,
        "type": "ask_user_questions",
        "message": "Find out which beds get the most sun.",
        "developer_logs": [
            {"role": "swarmstar", "content": "Ask the user which beds get sun before noon."},
            {"role": "ai", "content": "Which of your beds get direct sun before noon?"},
            [
                {"role": "swarmstar", "content": "Summarize what the user said about the east bed."},
                {"role": "ai", "content": "The east bed is shaded by the shed until ten."},
            ],
            {"role": "user", "content": "Only the south bed, and the east one after ten."},
        ],
        "report": None,
    }
    text = json.dumps(node, indent=4)
    logs = node["developer_logs"]
    assert messages_of(exact(text)) == [logs[0], logs[1], *logs[2], logs[3]]


def test_content_parts_her_self_talk_and_other_keys_make_messages():
    """OpenAI-style content parts [{"type": "text", "text": ...}] (with an image part beside
    them), a `sender` or a `speaker`, and her's self-conversation {role, text} under `state`."""
    parts = [
        {"role": "user", "content": [{"type": "text", "text": "What is this leaf?"}, {"type": "image_url"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "A tomato leaf with early blight."}]},
    ]
    talk = [{"role": "self", "text": "Was the answer too sure?"}, {"role": "self", "text": "Say it may be."}]
    speakers = [{"speaker": "Ana", "message": "The shed key?"}, {"speaker": "Bo", "message": "Under the pot."}]
    for messages, text in [
        (parts, json.dumps({"history": parts})),
        (talk, json.dumps({"state": {"lastSelfConversation": talk, "lastDir": None}})),
        (speakers, json.dumps(speakers, indent=1)),
    ]:
        assert messages_of(exact(text)) == messages


def test_offsets_are_the_message_objects_whatever_the_layout():
    messages = [
        {"role": "user", "content": "Is it too cold to sow?"},
        {"role": "assistant", "content": "Not above 10°C."},
    ]
    for layout in [{}, {"indent": 2}, {"separators": (",", ":")}, {"ensure_ascii": False, "indent": "\t"}]:
        text = "\n  " + json.dumps({"chatHistory": messages, "archived": None}, **layout) + "\n"
        pieces = exact(text)
        assert [json.loads(piece.text) for piece in pieces] == messages
        assert [(piece.start, piece.end) for piece in pieces] == json_turns.message_spans(text)


@pytest.mark.parametrize(
    "text",
    [
        '[{"role": "user", "content": "hi there"}, {"role": "assistant", "content": "hello"}',  # cut short
        '[{"role": "user", "content": "hi there"}, {"role": "assistant", "content": "hello"}] and more',
        "[{'role': 'user', 'content': 'hi there'}, {'role': 'assistant', 'content': 'hello'}]",  # Python, not JSON
        '{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"},]}',
        '[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}, [1, 2, x]]',
        '{"messages": [{"role": "user", "content": "only one says something"}, {"role": "tool"}]}',
        '{"name": "deploy", "steps": [{"name": "migrate", "run": "make migrate"}, {"name": "restart"}]}',
        '[{"role": "user", "content": ""}, {"role": "assistant", "content": "   "}]',
        json.dumps({"deep": [[[[[[[[[[{"role": "user", "content": "hi"}, {"role": "ai", "content": "yo"}]]]]]]]]]]}),
        "[" * 100_000,
        '{"role": "user", "content": "hi there"} {"role": "assistant", "content": "hello"}',  # two on a line
        '{"role": "user", "content": "hi there"}\n{"role": "assistant", "content": "hello"}\nand more',
        '{"name": "deploy", "run": "make"}\n{"name": "restart", "run": "make restart"}\n',  # records
    ],
    ids=[
        "cut-short",
        "trailing-text",
        "python",
        "trailing-comma",
        "bad-number",
        "one-message",
        "no-chat",
        "blank",
        "too-deep",
        "unbalanced",
        "jsonl-one-line",
        "jsonl-trailing-text",
        "jsonl-records",
    ],
)
def test_what_is_no_json_chat_is_cut_as_before(text, monkeypatch):
    assert json_turns.message_spans(text) == []
    assert exact(text) == as_prose(text, monkeypatch)


def test_json_lines_are_cut_a_message_a_line_or_a_message_each_of_a_line_s_chat():
    """A log that appends a message a line, and a file of logged requests (OpenAI's fine-tuning
    and batch files) holding a chat a line."""
    chat = [{"role": "user", "content": "Plant garlic when?"}, {"role": "assistant", "content": "In October."}]
    log = "".join(json.dumps({"t": 1700000000 + at, **message}) + "\n" for at, message in enumerate(chat))
    assert [{key: value for key, value in message.items() if key != "t"} for message in messages_of(exact(log))] == chat
    requests = "\n".join(json.dumps({"messages": chat[::step]}) for step in (1, -1))
    pieces = exact(requests)
    assert messages_of(pieces) == chat + chat[::-1]
    assert [(piece.start, piece.end) for piece in pieces] == json_turns.message_spans(requests)


def test_a_chat_in_a_group_of_records_and_records_that_name_someone():
    """A session with a name holds its chat (the session is no message: it says nothing); a
    message's own nested list is part of the message."""
    chat = [{"role": "user", "content": "Plant garlic when?"}, {"role": "assistant", "content": "In October."}]
    sessions = [{"name": "Autumn", "messages": chat}, {"name": "Spring", "messages": []}]
    assert messages_of(exact(json.dumps(sessions))) == chat
    nested = [{"role": "user", "content": "Recap?", "quoted": chat}, {"role": "assistant", "content": "Garlic."}]
    assert messages_of(exact(json.dumps(nested))) == nested


def test_long_plain_lists_are_checked_without_reading_them_and_memory_stays_flat():
    """A chat beside a vector of 300,000 numbers (1.5 MB): the vector is checked by one match,
    never made into Python objects (some 10 MB as floats); a bad number in it is no JSON."""
    chat = [{"role": "user", "content": "hi there"}, {"role": "assistant", "content": "hello"}]
    text = json.dumps({"vector": [0.5] * 300_000, "chat": chat})
    tracemalloc.start()
    try:
        spans = json_turns.message_spans(text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert [json.loads(text[start:end]) for start, end in spans] == chat
    assert peak < 1024 * 1024, f"{peak / 1024:.0f} KiB"
    assert json_turns.message_spans(text.replace("0.5, 0.5]", "0.5, .5]")) == []


def test_a_text_longer_than_the_index_cuts_is_not_walked():
    chat = [{"role": "user", "content": "word " * 200}, {"role": "assistant", "content": "word " * 200}] * 2_000
    text = json.dumps(chat)
    assert len(text) > json_turns.WALK_MAX_CHARS and json_turns.message_spans(text) == []
    assert len(json_turns.message_spans(json.dumps(chat[:1_000]))) == 1_000


def assert_nothing_lost(text: str, pieces: list[Piece]) -> None:
    """What lies outside the passages is whitespace, or brackets, commas and keys."""
    at = 0
    for piece in [*pieces, Piece(len(text), len(text), "")]:
        assert not text[at : piece.start].strip() or json_turns.is_structure(text, at, piece.start)
        at = piece.end


MESSAGE = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "tool"]), "content": st.text(min_size=1, max_size=300)},
    optional={"t": st.integers(0, 2**40), "sender": st.text(max_size=10)},
)


@given(
    st.lists(MESSAGE, min_size=2, max_size=8),
    st.sampled_from([None, 2, 4]),
    st.sampled_from([None, "messages", "chatHistory", "lines"]),
)
def test_any_chat_is_cut_a_message_each(messages, indent, key):
    messages = [message for message in messages if message["content"].strip()]
    if key == "lines":  # JSON Lines
        text = "\n".join(json.dumps(message) for message in messages)
    else:
        text = json.dumps(messages if key is None else {key: messages, "next": None}, indent=indent)
    if len(messages) < json_turns.MIN_MESSAGES:
        assert json_turns.message_spans(text) == []
        return
    spans = json_turns.message_spans(text)
    assert [json.loads(text[start:end]) for start, end in spans] == messages
    pieces = exact(text)
    assert all(any(a <= piece.start and piece.end <= b for a, b in spans) for piece in pieces)
    assert_nothing_lost(text, pieces)
