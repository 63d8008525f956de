"""Starting background work: the one way memsite puts a task on the Celery broker.
Explained in docs/queue.md."""

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from celery import Task
from django.conf import settings
from django.core.cache import cache
from django.db import DatabaseError, transaction
from django.db.models import F, QuerySet, Window
from django.db.models.functions import RowNumber
from django.utils import timezone

from memsite.celery import app
from memsite.errors import ServiceUnavailable

logger = logging.getLogger(__name__)

# Set within `broker_checked`: the broker answered at the start of a batch of enqueues.
_batch_checked: ContextVar[bool] = ContextVar("broker_checked", default=False)

QUEUE_UNAVAILABLE = "The task queue is unavailable, so nothing was started and nothing changed; try again shortly."


def _broker_check() -> None:
    with app.connection_for_write() as conn:
        conn.ensure_connection(max_retries=0, timeout=settings.CELERY_BROKER_CONNECTION_TIMEOUT)


def broker_answers() -> bool:
    """Whether the broker takes a new connection now: one attempt, no retries."""
    try:
        _broker_check()
        return True
    except Exception:  # kombu wraps connection errors, but transports raise their own too
        return False


def broker_require() -> None:
    """ServiceUnavailable unless the broker answers, for writes that start work without
    queueing it themselves (beat queues ticks for an agent set ticking)."""
    try:
        _broker_check()
    except Exception as exc:
        logger.warning("Work not started, the broker does not answer: %s", exc)
        raise ServiceUnavailable(QUEUE_UNAVAILABLE) from None


def enqueue(task: Task, *, sent: QuerySet | None = None, **kwargs: object) -> None:
    """Queue `task(**kwargs)` to run once the current transaction commits; ServiceUnavailable,
    before anything is published, if the broker does not answer. Call it inside the
    `transaction.atomic()` block that writes what the task reads, so that a refusal rolls
    the writes back. `sent`: the rows of the work, whose `sent_at` is stamped once the broker
    took the message (see `docs/queue.md`, on sweeps)."""
    if not _batch_checked.get():
        broker_require()
    transaction.on_commit(_publisher(task, kwargs, sent))


@contextmanager
def broker_checked() -> Iterator[None]:
    """A batch of enqueues (beat's loops, one transaction per row) with the broker checked
    once, here, rather than on a new connection for every task; ServiceUnavailable, before
    anything is written, if it does not answer."""
    broker_require()
    token = _batch_checked.set(True)
    try:
        yield
    finally:
        _batch_checked.reset(token)


def publish_on_commit(task: Task, **kwargs: object) -> None:
    """Best effort: publish `task(**kwargs)` once the current transaction commits (at once
    outside one), nothing checked before. For work that a sweep finds again: a broker that does
    not take it is logged, and the write stands."""
    transaction.on_commit(_publisher(task, kwargs))


def sweep(waiting: QuerySet, task: Task) -> None:
    """Beat's way back for work whose task was lost: publish `task` if anything waits."""
    if waiting.exists():
        _publisher(task, {})()


def in_turn(waiting: QuerySet, *, by: str, order: tuple[str, ...], each: int) -> QuerySet:
    """`waiting` group by group in turn (`by` names the group, a space): each group's first
    row, then each group's second, and so on, at most `each` of a group, each group's oldest
    first by `order`. Sliced, a pass takes an even share of every group: one group's backlog
    delays another's work by at most a pass, where oldest first would make it wait for all."""
    turn = Window(RowNumber(), partition_by=[F(by)], order_by=[F(field).asc() for field in order])
    return waiting.annotate(turn=turn).filter(turn__lte=each).order_by("turn", *order)


def run_alone(*, lock: str, timeout_s: int, task: Task, share: Callable[[], tuple[int, bool]]) -> int:
    """A task's `share` of the work that waits, one task at a time: the others return 0 at
    once, while the running one goes on until nothing is left. `share` returns what it did and
    whether more may wait, in which case `task` is published again for the rest. A worker that
    dies holding the lock frees it after `timeout_s`."""
    if not cache.add(lock, True, timeout=timeout_s):
        return 0
    try:
        done, more = share()
    finally:
        cache.delete(lock)
    if more:
        _publisher(task, {})()
    return done


def _publisher(task: Task, kwargs: dict[str, object], sent: QuerySet | None = None) -> Callable[[], None]:
    def publish() -> None:
        try:
            task.delay(**kwargs)
        except Exception:
            logger.exception("%s(%s) was not queued: the broker did not take it.", task.name, kwargs)
            return
        if sent is None:
            return
        try:
            sent.update(sent_at=timezone.now())
        except DatabaseError:  # the message is on its way: at worst, the sweep sends it once more
            logger.exception("%s(%s) was queued, but not marked sent.", task.name, kwargs)

    return publish
