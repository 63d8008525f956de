"""Emotions and hormones (seed 002): emotions fade a little every tick; hormones follow what
the tick's action came to."""

from dataclasses import dataclass
from datetime import datetime

EMOTIONS = ("joy", "frustration", "interest", "confusion")
HORMONES = ("dopamine", "cortisol", "serotonin")
CALM_EMOTIONS = {name: 0.0 for name in EMOTIONS}
BASELINE_HORMONES = {name: 0.5 for name in HORMONES}
DECAY = 0.9  # what an emotion keeps from one tick to the next
HORMONE_PULL = 0.1  # how far a hormone moves back towards its baseline each tick


@dataclass(frozen=True)
class AffectPoint:
    """The emotions and hormones one tick left."""

    number: int
    at: datetime
    emotions: dict[str, float]
    hormones: dict[str, float]


def _level(value: float) -> float:
    return round(min(1.0, max(0.0, value)), 4)


def emotions_decayed(emotions: dict[str, float]) -> dict[str, float]:
    return {name: _level(float(emotions.get(name, 0.0)) * DECAY) for name in EMOTIONS}


def emotions_felt(emotions: dict[str, float], *, succeeded: bool, novel: bool) -> dict[str, float]:
    """What an action's outcome adds: joy or frustration, interest for what was new, confusion
    after a failure."""
    felt = dict(emotions)
    if succeeded:
        felt["joy"] = felt.get("joy", 0.0) + 0.2
    else:
        felt["frustration"] = felt.get("frustration", 0.0) + 0.3
        felt["confusion"] = felt.get("confusion", 0.0) + 0.2
    if novel:
        felt["interest"] = felt.get("interest", 0.0) + 0.2
    return {name: _level(felt.get(name, 0.0)) for name in EMOTIONS}


def hormones_after(hormones: dict[str, float], *, succeeded: bool, novel: bool) -> dict[str, float]:
    """Dopamine rises with success and novelty, cortisol with failure, serotonin with a run of
    calm; each is also pulled back towards its baseline."""
    updated = {}
    for name in HORMONES:
        value = float(hormones.get(name, BASELINE_HORMONES[name]))
        value += (BASELINE_HORMONES[name] - value) * HORMONE_PULL
        updated[name] = value
    if succeeded:
        updated["dopamine"] += 0.1 + (0.1 if novel else 0.0)
        updated["serotonin"] += 0.05
        updated["cortisol"] -= 0.05
    else:
        updated["cortisol"] += 0.2
        updated["serotonin"] -= 0.05
    return {name: _level(value) for name, value in updated.items()}
