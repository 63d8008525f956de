"""Celery entry points for searches. Thin: load by id, call one service."""

from celery import shared_task

from memory import services
from memory.index import writes
from memory.services import descriptions


# Retry policy: none by Celery. acks_late + reject_on_worker_lost redeliver the task if the worker
# dies; the service resumes from the last recorded step. A search that stalls anyway is re-queued
# by `searches_sweep_stale`.
@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def search_run(*, search_id: int) -> None:
    services.search_run(search_id=search_id)


# Retry policy: none; beat runs it again a minute later.
@shared_task(ignore_result=True)
def searches_sweep_stale() -> dict[str, int]:
    return services.searches_sweep_stale()


# Retry policy: none by Celery. Passages left without a vector (a worker that died, a broker
# that was away) are found again by `index_embed_sweep`, which beat runs every minute.
@shared_task(ignore_result=True)
def index_embed() -> int:
    return writes.index_embed_pending()


@shared_task(ignore_result=True)
def index_embed_sweep() -> None:
    writes.index_embed_sweep()


# Retry policy: none by Celery. Nodes left waiting (a worker that died, a broker that was away)
# are found again by `descriptions_sweep`, which beat runs every minute; a node whose calls keep
# failing is given up on after a few (memory.services.descriptions.MAX_ATTEMPTS).
@shared_task(ignore_result=True)
def descriptions_write() -> int:
    return descriptions.descriptions_write_pending()


@shared_task(ignore_result=True)
def descriptions_sweep() -> None:
    descriptions.descriptions_sweep()
