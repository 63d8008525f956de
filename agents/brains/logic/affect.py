"""Emotions and hormones (seed 002). Every tick each one decays toward its resting value: the
distance to rest halves every EMOTION_HALF_LIFE (or HORMONE_HALF_LIFE) ticks. Then what the
tick's action came to moves it by a share of the way left to 1 (or to 0), so no run of outcomes
pins a value at either end. A tick whose action did nothing (idle) only decays.
Explained in docs/ticks.md."""

from dataclasses import dataclass
from datetime import datetime

EMOTIONS = ("joy", "frustration", "interest", "confusion")
HORMONES = ("dopamine", "cortisol", "serotonin")
# Where each rests: calm emotions, hormones at their baseline.
CALM_EMOTIONS = {name: 0.0 for name in EMOTIONS}
BASELINE_HORMONES = {name: 0.5 for name in HORMONES}
EMOTION_HALF_LIFE = 5  # ticks: emotions fade fast
HORMONE_HALF_LIFE = 10  # ticks: moods last longer than emotions


@dataclass(frozen=True)
class AffectPoint:
    """The emotions and hormones one tick left."""

    number: int
    at: datetime
    emotions: dict[str, float]
    hormones: dict[str, float]


def _level(value: float) -> float:
    return round(min(1.0, max(0.0, value)), 4)


def toward_rest(value: float, rest: float, half_life: float, ticks: int = 1) -> float:
    """`value` after `ticks` ticks of exponential decay toward `rest`: the distance to rest
    halves every `half_life` ticks, so it shrinks but never changes sign."""
    return rest + (value - rest) * 0.5 ** (ticks / half_life)


def nudged(value: float, share: float) -> float:
    """`value` moved `share` of the way to 1 (a positive share) or to 0 (a negative one): the
    closer to an end, the smaller the step, so an end is never reached from inside."""
    return value + share * (1.0 - value) if share >= 0 else value + share * value


def _decayed(values: dict[str, float], rest: dict[str, float], half_life: float) -> dict[str, float]:
    return {name: _level(toward_rest(float(values.get(name, level)), level, half_life)) for name, level in rest.items()}


def emotions_decayed(emotions: dict[str, float]) -> dict[str, float]:
    return _decayed(emotions, CALM_EMOTIONS, EMOTION_HALF_LIFE)


def hormones_decayed(hormones: dict[str, float]) -> dict[str, float]:
    return _decayed(hormones, BASELINE_HORMONES, HORMONE_HALF_LIFE)


def _moved(values: dict[str, float], shares: dict[str, float]) -> dict[str, float]:
    return {name: _level(nudged(float(value), shares.get(name, 0.0))) for name, value in values.items()}


def emotions_felt(emotions: dict[str, float], *, succeeded: bool, novel: bool) -> dict[str, float]:
    """What an action's outcome adds: joy or frustration, interest for what was new, confusion
    after a failure."""
    shares = {"joy": 0.2} if succeeded else {"frustration": 0.3, "confusion": 0.2}
    if novel:
        shares["interest"] = 0.2
    return _moved({name: emotions.get(name, 0.0) for name in EMOTIONS}, shares)


def hormones_after(hormones: dict[str, float], *, succeeded: bool, novel: bool) -> dict[str, float]:
    """Decayed toward the baseline, then: dopamine rises with success and more with novelty,
    serotonin with success while cortisol falls; after a failure cortisol rises and serotonin
    falls."""
    if succeeded:
        shares = {"dopamine": 0.1 + (0.1 if novel else 0.0), "serotonin": 0.05, "cortisol": -0.05}
    else:
        shares = {"serotonin": -0.05, "cortisol": 0.2}
    return _moved(hormones_decayed(hormones), shares)


def tick_felt(
    emotions: dict[str, float], hormones: dict[str, float], *, happened: bool, succeeded: bool, novel: bool
) -> tuple[dict[str, float], dict[str, float]]:
    """The emotions and hormones a tick leaves: decayed toward rest, then moved by what its
    action came to, unless it did nothing."""
    if not happened:
        return emotions_decayed(emotions), hormones_decayed(hormones)
    felt = emotions_felt(emotions_decayed(emotions), succeeded=succeeded, novel=novel)
    return felt, hormones_after(hormones, succeeded=succeeded, novel=novel)
