from datetime import UTC, datetime

import pytest

from agents.brains.logic.affect import AffectPoint
from agents.brains.logic.charts import chart_coordinates, line_chart, polyline_points

AT = datetime(2026, 1, 1, tzinfo=UTC)


def point(number: int, **emotions: float) -> AffectPoint:
    return AffectPoint(number=number, at=AT, emotions=emotions, hormones={})


@pytest.mark.parametrize(
    ("values", "points"),
    [
        ([0.0, 0.5, 1.0], "0,100 150,50 300,0"),
        ([0.25, 0.75], "0,75 300,25"),
        ([0.2], "0,80"),  # one value sits on the left
        ([], ""),
        ([1.5, -0.5], "0,0 300,100"),  # clamped to the scale
        ([0.1, None, 0.3], "0,90 300,70"),  # a missing value is skipped, its neighbours joined
        ([0.123, 0.456, 0.789, 0.5], "0,87.7 100,54.4 200,21.1 300,50"),
    ],
)
def test_polyline_points(values, points):
    assert polyline_points(values, width=300, height=100) == points


def test_another_scale():
    assert polyline_points([10, 15, 20], width=100, height=50, low=10, high=20) == "0,50 50,25 100,0"


def test_coordinates_are_text_without_trailing_zeros():
    assert chart_coordinates([0.5, 1.0], width=480, height=120) == [("0", "60"), ("480", "0")]


def test_a_chart_of_ticks():
    history = [point(3, joy=0.0, interest=0.5), point(4, joy=0.5, interest=1.0), point(5, joy=1.0)]

    chart = line_chart("Emotions", ["joy", "interest", "confusion"], history, field="emotions", width=200, height=100)

    joy, interest, confusion = chart.series
    assert (joy.name, joy.points, joy.last, joy.last_point) == ("joy", "0,100 100,50 200,0", 1.0, ("200", "0"))
    assert (interest.points, interest.last, interest.last_point) == ("0,50 100,0", 1.0, ("100", "0"))
    assert (confusion.points, confusion.last, confusion.last_point) == ("", None, None)
    assert [series.tone for series in chart.series] == [0, 1, 2]
    assert (chart.first, chart.last, chart.empty) == (3, 5, False)
    assert chart.gridlines == [("100", "0"), ("50", "0.5"), ("0", "1")]
    assert chart.description == "Emotions over ticks 3 to 5; the newest: joy 1.00, interest 1.00."


def test_an_empty_chart():
    chart = line_chart("Hormones", ["dopamine"], [], field="hormones")
    assert chart.empty and chart.series[0].points == "" and chart.description == "Hormones: no ticks yet."


def test_levels_that_are_not_numbers_are_missing():
    history = [point(1, joy="high"), point(2, joy=True), point(3, joy=0.5)]
    chart = line_chart("Emotions", ["joy"], history, field="emotions", width=100, height=10)
    assert chart.series[0].points == "100,5"
