"""What the "her" app's `Memory.load()` (daemon-tech/embodiedAI, `mind/memory.js`) makes of a
memory.json, in the two versions `tests/fixtures/her/` holds a file of: its rules restated, so
that a test can tell whether two files load to the same state without running the app.

The rules, as both versions have them: the file is merged into the app's empty memory (objects
key by key, anything else replaced); lists keep their newest entries up to the app's caps; the
`self` neuron is added when missing. The older version also gives a state without emotions or
hormones its default ones; the newest has neither. Her load of a file she saved is that file:
`test_memory_json` checks this of each fixture, which the real loader was run on once by hand."""

import copy
import json
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "her"
OLDER, NEWEST = "c5a3035", "dbed84b"  # the commit seed 002 describes, and the newest
VERSIONS = (OLDER, NEWEST)
# Lists and their caps, by where they are; chat history grew from 200 to 300 in the newest.
LIST_CAPS = {
    ("thoughts",): 20_000,
    ("logs",): 50_000,
    ("embeddings",): 2_000,
    ("innerThoughts",): 200,
    ("episodes",): 2_000,
    ("semanticFacts",): 500,
    ("state", "goals"): 20,
    ("state", "selfInstructions"): 10,
    ("state", "workingMemory", "lastActions"): 12,
    ("state", "workingMemory", "recentLearnings"): 20,
}
CHAT_CAPS = {OLDER: 200, NEWEST: 300}
OLDER_LEVELS = {
    "hormones": {"dopamine": 0.5, "cortisol": 0.2, "serotonin": 0.5},
    "emotions": {"joy": 0.3, "frustration": 0.1, "interest": 0.5, "confusion": 0.2},
}


def fixture(version: str) -> Path:
    return FIXTURES / f"memory-{version}.json"


def empty(version: str) -> dict[str, Any]:
    """The app's memory before a load."""
    state = {
        "lastDir": None,
        "lastUrl": None,
        "totalReads": 0,
        "totalWrites": 0,
        "totalFetches": 0,
        "totalBrowses": 0,
        "selfSummary": "",
        "agiSelfModel": "",
        "capabilityRegister": {},
        **(copy.deepcopy(OLDER_LEVELS) if version == OLDER else {}),
        "goals": [],
        "plan": None,
        "lastUserMessage": None,
        "lastError": None,
        "selfInstructions": [],
        "lastSelfConversation": [],
        "lastSelfConclusion": None,
        "lastHumanFeedback": None,
        "workingMemory": {
            "currentTask": None,
            "currentTaskStartedAt": None,
            "lastActions": [],
            "recentLearnings": [],
        },
    }
    lists = ("thoughts", "logs", "embeddings", "chatHistory", "innerThoughts")
    return {
        "exploredPaths": {},
        "exploredUrls": {},
        "fileContents": {},
        **{name: [] for name in lists},
        "neurons": {},
        "synapses": [],
        "episodes": [],
        "semanticFacts": [],
        "state": state,
        "userModel": {"lastMessages": [], "inferredFocus": ""},
    }


def merged(into: dict[str, Any], document: dict[str, Any]) -> dict[str, Any]:
    """`document` over `into`: objects merged key by key, any other value replaced."""
    out = dict(into)
    for key, value in document.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            out[key] = merged(into[key], value)
        else:
            out[key] = value
    return out


def load(document: dict[str, Any], version: str) -> dict[str, Any]:
    """The memory her load leaves from `document` (a state her load would seed with a summary and
    goals, one with neither a self-summary nor 15 thoughts, is refused: no fixture is one)."""
    data = merged(empty(version), copy.deepcopy(document))
    caps = {**LIST_CAPS, ("chatHistory",): CHAT_CAPS[version]}
    for where, limit in caps.items():
        *parents, name = where
        holder = data
        for parent in parents:
            holder = holder[parent]
        entries = holder.get(name)
        holder[name] = entries[-limit:] if isinstance(entries, list) else []
    state = data["state"]
    if version == OLDER:
        for name, levels in OLDER_LEVELS.items():
            if state.get(name) in (None, False, 0, ""):  # what JavaScript takes as false
                state[name] = dict(levels)
    data["neurons"] = data["neurons"] or {}
    assert "self" in data["neurons"], "her load adds a `self` neuron made at load time"
    assert state["selfSummary"] or len(data["thoughts"]) >= 15, "her load would seed this memory"
    return data


def differences(got: Any, expected: Any, path: str = "") -> list[str]:
    """Where `got` and `expected` differ, as JSON: a key one has and the other has not, a list of
    another length, a value of another type or text (`null` is not `""`, `1` is not `1.0`)."""
    where = path or "the document"
    if isinstance(expected, dict) and isinstance(got, dict):
        found = [f"{path}.{key}: missing" for key in expected if key not in got]
        found += [f"{path}.{key}: not in the original" for key in got if key not in expected]
        for key in expected.keys() & got.keys():
            found += differences(got[key], expected[key], f"{path}.{key}")
        return found
    if isinstance(expected, list) and isinstance(got, list):
        if len(got) != len(expected):
            return [f"{where}: {len(got)} entries, not {len(expected)}"]
        return [
            difference
            for index, (one, other) in enumerate(zip(got, expected, strict=True))
            for difference in differences(one, other, f"{path}[{index}]")
        ]
    same = json.dumps(got, sort_keys=True) == json.dumps(expected, sort_keys=True)
    return [] if same else [f"{where}: {json.dumps(got)[:80]}, not {json.dumps(expected)[:80]}"]
