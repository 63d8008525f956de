"""A tick's lease on its brain: one tick of a brain at a time. Every write of the tick checks it
still holds the lease and renews it once a tenth of it is spent. Explained in docs/ticks.md."""

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Subquery
from django.utils import timezone

from agents.brains.logic.caps import cap
from agents.brains.models import Brain, TickRun
from agents.brains.services.brains import BrainWrite, brain_writing
from agents.context.models import Agent


class LeaseLost(Exception):
    """Another tick took the brain over (this one's lease had run out)."""


@dataclass
class Lease:
    """A tick's hold on its agent's brain, until `until`; renewed as the tick goes."""

    agent: Agent
    until: datetime


def lease_until() -> datetime:
    return timezone.now() + timedelta(seconds=settings.MEMSITE_TICK_LEASE_S)


def lease_renewed(lease: Lease) -> datetime | None:
    """The lease's new end once a tenth of it is spent, or None."""
    if timezone.now() < lease.until - timedelta(seconds=0.9 * settings.MEMSITE_TICK_LEASE_S):
        return None
    return lease_until()


def lease_release(lease: Lease) -> None:
    Brain.objects.filter(pk=lease.agent.pk, lease_until=lease.until).update(lease_until=None)


def run_saved(lease: Lease, run: TickRun, fields: dict[str, Any] | None = None) -> None:
    """Save the run's steps (and other `fields` of the run) while the tick holds its lease, and
    renew the lease when due, in one transaction (one commit: on PostgreSQL each commit waits
    for the WAL flush); nothing is written once the lease is lost."""
    with transaction.atomic():
        # A subquery, not a join: on SQLite an UPDATE through a join costs a SELECT first.
        leased = Brain.objects.filter(pk=lease.agent.pk, lease_until=lease.until)
        held = TickRun.objects.filter(pk=run.pk, brain__in=leased)
        if not held.update(steps=run.steps, **(fields or {})):
            raise LeaseLost
        renewed = lease_renewed(lease)
        # Only if the lease is still this tick's: the check above locks nothing, and another tick
        # may take over a lease that ran out meanwhile.
        if renewed is not None and not leased.update(lease_until=renewed):
            raise LeaseLost
    lease.until = renewed or lease.until


@contextmanager
def leased_writing(lease: Lease, run: TickRun) -> Iterator[BrainWrite]:
    """`brain_writing`, only while the tick holds its lease. The run's steps, with those noted
    since it was last written, are saved with the writes, and the lease is renewed with them
    when due."""
    with brain_writing(agent=lease.agent) as write:
        if write.brain.lease_until != lease.until:
            raise LeaseLost
        yield write
        TickRun.objects.filter(pk=run.pk).update(steps=run.steps)
        renewed = lease_renewed(lease)
        if renewed is not None:
            write.set(lease_until=renewed)
    lease.until = renewed or lease.until


def run_ended(lease: Lease, run: TickRun, *, status: str, outcome: str, error: str) -> bool:
    """The run's end, with its steps, the emotions and hormones the tick left, and the lease
    given back, in one transaction; runs beyond the cap go. False when the tick lost its lease:
    its run is left to the tick that took over (which has failed it)."""
    brain = Brain.objects.filter(pk=lease.agent.pk)
    leased = brain.filter(lease_until=lease.until)
    with transaction.atomic():
        ended = TickRun.objects.filter(pk=run.pk, brain__in=leased).update(
            status=status,
            steps=run.steps,
            outcome=outcome[:10_000],
            error=error[:10_000],
            emotions=Subquery(brain.values("emotions")),
            hormones=Subquery(brain.values("hormones")),
            ended_at=timezone.now(),
        )
        if not ended:
            return False
        TickRun.objects.filter(brain_id=lease.agent.pk, number__lte=run.number - cap("tick")).delete()
        lease_release(lease)
    return True
