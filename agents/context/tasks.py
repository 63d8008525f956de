"""Celery entry points for conversations. Thin: load by id, call one service."""

from celery import shared_task

from agents.context import services


# The names are the ones queued before the agents app was split: messages already in the broker
# still find their task.
# Retry policy: none by Celery. acks_late + reject_on_worker_lost redeliver the task if the worker
# dies; a summary that fails or stalls anyway is queued again by the next assembly that wants it,
# after MEMSITE_SUMMARY_RETRY_S.
@shared_task(
    name="agents.tasks.summary_write",
    acks_late=True,
    reject_on_worker_lost=True,
    ignore_result=True,
)
def summary_write(*, summary_id: int) -> None:
    services.summary_write(summary_id=summary_id)
