"""Emotions and hormones decay toward rest, and outcomes move them without pinning them at an
end: `agents.brains.logic.affect`."""

import pytest

from agents.brains.logic import affect
from agents.brains.logic.affect import (
    BASELINE_HORMONES,
    CALM_EMOTIONS,
    EMOTION_HALF_LIFE,
    HORMONE_HALF_LIFE,
    nudged,
    tick_felt,
    toward_rest,
)


def test_the_distance_to_rest_halves_every_half_life():
    assert toward_rest(0.9, 0.5, 10, ticks=10) == pytest.approx(0.7)
    assert toward_rest(0.1, 0.5, 10, ticks=20) == pytest.approx(0.4)
    assert toward_rest(0.8, 0.0, 5, ticks=5) == pytest.approx(0.4)
    assert toward_rest(0.5, 0.5, 10) == 0.5
    one_tick = toward_rest(1.0, 0.0, 5)
    assert 0.0 < one_tick < 1.0 and toward_rest(one_tick, 0.0, 5) == pytest.approx(toward_rest(1.0, 0.0, 5, ticks=2))


def test_a_nudge_moves_a_share_of_the_way_to_an_end_and_never_reaches_it():
    assert nudged(0.5, 0.2) == pytest.approx(0.6) and nudged(0.5, -0.2) == pytest.approx(0.4)
    value = 0.5
    for _ in range(50):
        value = nudged(value, 0.2)
    assert 0.99 < value < 1.0
    assert nudged(0.0, -0.3) == 0.0 and nudged(1.0, 0.3) == 1.0


def run(ticks: int, emotions: dict, hormones: dict, **outcome) -> tuple[dict, dict]:
    for _ in range(ticks):
        emotions, hormones = tick_felt(emotions, hormones, **outcome)
    return emotions, hormones


@pytest.mark.parametrize(
    "outcome",
    [
        {"happened": True, "succeeded": True, "novel": True},
        {"happened": True, "succeeded": True, "novel": False},
        {"happened": True, "succeeded": False, "novel": False},
    ],
)
def test_a_thousand_ticks_of_one_outcome_pin_nothing_at_an_end(outcome):
    emotions, hormones = run(1_000, dict(CALM_EMOTIONS), dict(BASELINE_HORMONES), **outcome)

    assert all(0.0 <= level < 1.0 for level in emotions.values()), emotions
    assert all(0.0 < level < 1.0 for level in hormones.values()), hormones
    moved = [name for name in affect.EMOTIONS if emotions[name] > 0]
    assert moved and all(0.0 < emotions[name] < 0.9 for name in moved)  # felt, far from 1.00


def test_ticks_that_do_nothing_bring_everything_back_toward_rest():
    excited = run(30, dict(CALM_EMOTIONS), dict(BASELINE_HORMONES), happened=True, succeeded=True, novel=True)
    upset = run(10, *excited, happened=True, succeeded=False, novel=False)

    one = run(1, *upset, happened=False, succeeded=True, novel=False)
    for name, level in upset[0].items():  # one quiet tick: each emotion decays, none is felt
        assert one[0][name] == round(toward_rest(level, 0.0, EMOTION_HALF_LIFE), 4)
    for name, level in upset[1].items():
        assert one[1][name] == round(toward_rest(level, 0.5, HORMONE_HALF_LIFE), 4)

    calm = run(100, *upset, happened=False, succeeded=True, novel=False)
    assert all(level < 0.01 for level in calm[0].values())
    assert all(abs(level - 0.5) < 0.01 for level in calm[1].values())


def test_emotions_and_hormones_out_of_range_are_brought_within():
    emotions, hormones = tick_felt(
        {"joy": 7.0, "frustration": -2.0}, {"dopamine": 3.0}, happened=True, succeeded=True, novel=True
    )

    assert set(emotions) == set(affect.EMOTIONS) and set(hormones) == set(affect.HORMONES)
    assert all(0.0 <= level <= 1.0 for level in (*emotions.values(), *hormones.values()))
