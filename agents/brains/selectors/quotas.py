"""A user's ticks in flight and agents ticking in a space: what the member caps on ticks count
(registered with memsite.quotas at the app's ready()). A tick is the work of whoever queued it,
else of whoever set its agent ticking (`Brain.tick_queued_by`, `ticking_by`; `TickRun.user`)."""

from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from agents.brains.models import Brain, TickRun
from memsite.spaces.principals import Principal


def tick_queue_cutoff(now: datetime) -> datetime:
    """A tick queued before this has lost its message (a worker takes one within a lease's
    time, or the broker went away after the check): it is no longer counted, or waited for."""
    return now - timedelta(seconds=settings.MEMSITE_TICK_LEASE_S)


def ticks_in_flight(*, by: Principal, now: datetime | None = None) -> int:
    """Ticks queued for `by`'s user and not yet begun in its space, and the user's ticks running there."""
    now = now or timezone.now()
    queued = Brain.objects.filter(
        tick_queued_by_id=by.user_id, agent__space=by.space, tick_queued_at__gt=tick_queue_cutoff(now)
    ).count()
    running = TickRun.objects.filter(
        user=by.user, brain__agent__space=by.space, status=TickRun.Status.RUNNING, brain__lease_until__gt=now
    ).count()
    return queued + running


def ticking_agents_in_flight(*, by: Principal, excluding: int | None = None) -> int:
    """Agents of `by`'s space its user set ticking on a schedule (but `excluding`, whose
    interval changes)."""
    ticking = Brain.objects.filter(ticking=True, ticking_by_id=by.user_id, agent__space=by.space)
    return ticking.exclude(pk=excluding).count()
