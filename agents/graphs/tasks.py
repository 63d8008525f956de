"""Celery entry points for reasoning graphs. Thin: load by id, call one service."""

from celery import shared_task

from agents.graphs import services


# The names are the ones queued before the agents app was split (and the beat schedule's):
# messages already in the broker still find their task.
# Retry policy: none by Celery. acks_late + reject_on_worker_lost redeliver the task if the worker
# dies, and the graph's lease expires after MEMSITE_GRAPH_LEASE_S; `graphs_sweep_stale` (or the
# next memorize or recall queued on the graph) then runs what is left.
@shared_task(name="agents.tasks.graph_work", acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def graph_work(*, graph_id: int) -> None:
    services.graph_work(graph_id=graph_id)


# Retry policy: none; beat runs it again a minute later.
@shared_task(name="agents.tasks.graphs_sweep_stale", ignore_result=True)
def graphs_sweep_stale() -> int:
    return services.graphs_sweep_stale()
