"""Durations as a person reads them (memory/logic/durations.py)."""

from datetime import timedelta

import pytest

from memory.logic.durations import duration_text


@pytest.mark.parametrize(
    ("elapsed", "text"),
    [
        (timedelta(0), "0.0 s"),
        (timedelta(milliseconds=40), "0.0 s"),
        (timedelta(milliseconds=340), "0.3 s"),
        (timedelta(seconds=1.4), "1.4 s"),
        (timedelta(seconds=9.94), "9.9 s"),
        (timedelta(seconds=9.96), "10 s"),  # rounds up into whole seconds, not "10.0 s"
        (timedelta(seconds=42.4), "42 s"),
        (timedelta(seconds=59.6), "1 min"),
        (timedelta(seconds=60), "1 min"),
        (timedelta(minutes=2, seconds=5), "2 min 5 s"),
        (timedelta(minutes=59, seconds=59), "59 min 59 s"),
        (timedelta(hours=1), "1 h"),
        (timedelta(hours=3, minutes=10, seconds=30), "3 h 10 min"),
        (timedelta(days=2, hours=4, minutes=59), "2 d 4 h"),
        (timedelta(days=40), "40 d"),
    ],
)
def test_a_duration_reads_in_its_two_largest_units(elapsed, text):
    assert duration_text(elapsed) == text


def test_a_negative_duration_reads_as_none():
    assert duration_text(timedelta(seconds=-3)) == "0.0 s"
