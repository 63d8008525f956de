"""What a tick reflects on besides its action: its primary goal and what it recalls for it from
the places it has explored (with no goal, what it recalls of what it just did, else what it
explored last), and the thought the offline reflection writes from these with no model.
Explained in docs/ticks.md."""

import re
from collections.abc import Sequence
from dataclasses import dataclass

RECALLED = 3  # places a reflection is shown
REHEARSED = 6  # of the places recalled best, those ticks that did nothing go over in turn
RECALL_SCAN = 100  # explored places, newest first, that a recall looks among
THOUGHT_RECALLED = 2  # places an offline thought names
GIST_CHARS = 90  # of a place's summary, in an offline thought
RESULT_CHARS = 300  # of the action's result, in an offline thought


@dataclass(frozen=True)
class Place:
    """A path or URL the agent explored, and what it found there."""

    key: str
    summary: str


@dataclass(frozen=True)
class Recall:
    """What a reflection recalls. With a goal: the places that touch on it (share a word with
    it, or mean much the same), best first, and how many of the places looked among do; with
    none, the places it reflected on."""

    goal: str | None
    places: tuple[Place, ...] = ()
    touching: int = 0
    looked_at: int = 0


def recalled(goal: str | None, places: Sequence[Place], found: Sequence[int], *, turn: int = 0) -> Recall:
    """The recall from `places` (newest first) and `found`, the positions of those that touch on
    the goal (or on the tick's result when there is no goal), best first. With no goal and
    nothing found, the places explored last. `turn` starts that many places further down the
    best REHEARSED, wrapping round: ticks that did nothing go over what they recall in turn
    rather than recall the same places each time."""
    candidates = [places[position] for position in found[:REHEARSED]]
    if goal is None and not candidates:
        candidates = list(places[:REHEARSED])
    start = turn % len(candidates) if candidates else 0
    chosen = (candidates[start:] + candidates[:start])[:RECALLED]
    return Recall(goal=goal, places=tuple(chosen), touching=len(found), looked_at=len(places))


@dataclass(frozen=True)
class Acted:
    """What the tick did, as the reflection is told: the action ("" when none was decided),
    whether it worked, and the result in a line."""

    action: str
    ok: bool
    result: str


def _clipped(text: str, limit: int) -> str:
    """`text` on one line, cut at a word within `limit` characters."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    return text[: limit - 1].rsplit(" ", 1)[0].rstrip(",;:.") + "\u2026"


def _sentence(text: str) -> str:
    text = text.rstrip(" :;,")
    return text if text.endswith((".", "!", "?", "\u2026")) else f"{text}."


def _did(acted: Acted) -> str:
    """What the tick did, in the first person: the result's line starts with its verb."""
    result = _clipped(acted.result, RESULT_CHARS)
    if not acted.action:
        return _sentence(result)
    if not acted.ok:  # the error, without the action's name before it (`read_file failed: ...`)
        error = re.sub(rf"^{re.escape(acted.action)} \w+: ", "", result)
        return _sentence(f"That failed: {error}")
    if acted.action == "idle":
        return "Nothing new was left to explore."
    return _sentence(f"I {result[:1].lower()}{result[1:]}")


def _gist(place: Place) -> str:
    """The place's summary, short, without naming the place again (`Listed /a: ...`)."""
    summary = re.sub(rf"^\w+ {re.escape(place.key)}: ", "", " ".join(place.summary.split()))
    return _clipped(summary, GIST_CHARS).rstrip(".")


def _named(places: Sequence[Place]) -> str:
    """`/a (gist) and /b (gist)`."""
    return " and ".join(
        f"{place.key} ({gist})" if (gist := _gist(place)) else place.key for place in places[:THOUGHT_RECALLED]
    )


def _progress(recall: Recall) -> str:
    if recall.looked_at == 1:
        return "the one place I explored touches on it"
    verb = "touches" if recall.touching == 1 else "touch"
    return f"{recall.touching} of the {recall.looked_at} places I explored {verb} on it"


def _reflected(recall: Recall) -> str:
    """What the thought says of the goal, or, with none, of what it reflected on."""
    if recall.goal is None:
        if not recall.places:
            return "I have no goal, and nothing explored to reflect on yet."
        return f"I have no goal, so I reflected on {_named(recall.places)}."
    goal = f'For my goal "{_clipped(recall.goal, GIST_CHARS * 2)}"'
    if recall.places:
        return f"{goal}, I recalled {_named(recall.places)}: {_progress(recall)}."
    if recall.looked_at:
        return f"{goal}, nothing I explored touches on it yet ({recall.looked_at} places so far)."
    return f"{goal}, I have explored nothing yet."


def offline_thought(acted: Acted, recall: Recall) -> str:
    """The thought the offline reflection writes: what the tick did, then its goal and what it
    recalled for it. Framed only with words of `concepts.REFLECTION_WORDS` and stop words, so
    that the concepts it adds are those of what it met and recalled."""
    return f"{_did(acted)} {_reflected(recall)}"
