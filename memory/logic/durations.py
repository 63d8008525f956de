"""How long something took, as a person reads it: "1.4 s", "2 min 5 s", "3 h 10 min"."""

from datetime import timedelta

SECONDS_WITH_TENTHS = 10  # below this, a tenth of a second still tells something
# Each unit with the next smaller one, largest first: a duration reads in its two largest.
UNITS = ((24 * 3600, "d", 3600, "h"), (3600, "h", 60, "min"), (60, "min", 1, "s"))


def duration_text(elapsed: timedelta) -> str:
    """`elapsed` in its two largest units; a negative span (clocks set back) reads as none."""
    seconds = max(elapsed.total_seconds(), 0.0)
    tenths = round(seconds * 10)
    if tenths < SECONDS_WITH_TENTHS * 10:
        return f"{tenths / 10:.1f} s"
    whole = round(seconds)
    for size, name, smaller_size, smaller_name in UNITS:
        if whole >= size:
            count, rest = divmod(whole, size)
            smaller = rest // smaller_size
            return f"{count} {name} {smaller} {smaller_name}" if smaller else f"{count} {name}"
    return f"{whole} s"
