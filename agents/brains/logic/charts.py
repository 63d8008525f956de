"""Line charts drawn on the server as inline SVG, for the brain's emotions and hormones over its
last ticks: no chart library, only the points of one `<polyline>` per series.

Levels are 0 to 1 and drawn on a fixed scale, so that two charts (or two visits) compare."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from agents.brains.logic.affect import AffectPoint

WIDTH = 480  # the plot area, in the SVG's units; the template adds room for the axis labels
HEIGHT = 120
GRID = (0.0, 0.5, 1.0)
TONES = 8  # the colours CSS defines for series, as for the context bar


@dataclass(frozen=True)
class Series:
    name: str
    points: str  # a <polyline>'s points: "x,y x,y ..."
    last: float | None  # the newest value, shown in the legend
    last_point: tuple[str, str] | None  # where the newest value is drawn
    tone: int


@dataclass(frozen=True)
class LineChart:
    title: str
    width: int
    height: int
    series: list[Series]
    gridlines: list[tuple[str, str]]  # (y, label)
    first: int | None  # the x axis: the first and last tick numbers
    last: int | None

    @property
    def empty(self) -> bool:
        return self.first is None

    @property
    def description(self) -> str:
        """What the chart shows, in words, for screen readers."""
        if self.empty:
            return f"{self.title}: no ticks yet."
        newest = ", ".join(f"{line.name} {line.last:.2f}" for line in self.series if line.last is not None)
        return f"{self.title} over ticks {self.first} to {self.last}; the newest: {newest}."


def _number(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".")


def chart_coordinates(
    values: Sequence[float | None], *, width: float, height: float, low: float = 0.0, high: float = 1.0
) -> list[tuple[str, str]]:
    """Where each value is drawn: spread evenly across `width` (one value alone sits on the
    left), `low` at the bottom and `high` at the top, values outside clamped. A missing value
    (None) is skipped: the line joins its neighbours."""
    last = max(len(values) - 1, 1)
    span = (high - low) or 1.0
    coordinates = []
    for index, value in enumerate(values):
        if value is None:
            continue
        level = (min(max(value, low), high) - low) / span
        coordinates.append((_number(index * width / last), _number(height - level * height)))
    return coordinates


def polyline_points(
    values: Sequence[float | None], *, width: float, height: float, low: float = 0.0, high: float = 1.0
) -> str:
    """The `points` of a `<polyline>` drawing `values` (see `chart_coordinates`)."""
    return " ".join(f"{x},{y}" for x, y in chart_coordinates(values, width=width, height=height, low=low, high=high))


def _level(levels: Mapping[str, object], name: str) -> float | None:
    value = levels.get(name)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def line_chart(
    title: str,
    names: Sequence[str],
    history: Sequence[AffectPoint],
    *,
    field: str,
    width: int = WIDTH,
    height: int = HEIGHT,
) -> LineChart:
    """A chart of the levels `names` of each point's `field` ("emotions" or "hormones")."""
    series = []
    for index, name in enumerate(names):
        values = [_level(getattr(point, field), name) for point in history]
        coordinates = chart_coordinates(values, width=width, height=height)
        present = [value for value in values if value is not None]
        series.append(
            Series(
                name=name,
                points=" ".join(f"{x},{y}" for x, y in coordinates),
                last=present[-1] if present else None,
                last_point=coordinates[-1] if coordinates else None,
                tone=index % TONES,
            )
        )
    return LineChart(
        title=title,
        width=width,
        height=height,
        series=series,
        gridlines=[(_number(height - level * height), _number(level)) for level in GRID],
        first=history[0].number if history else None,
        last=history[-1].number if history else None,
    )
