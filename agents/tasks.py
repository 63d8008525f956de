"""Celery entry points for agents. Thin: load by id, call one service."""

from celery import shared_task

from agents import services


# Retry policy: none by Celery. acks_late + reject_on_worker_lost redeliver the task if the worker
# dies; a summary that fails or stalls anyway is queued again by the next assembly that wants it,
# after MEMSITE_SUMMARY_RETRY_S.
@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def summary_write(*, summary_id: int) -> None:
    services.summary_write(summary_id=summary_id)


# Retry policy: none by Celery. acks_late + reject_on_worker_lost redeliver the task if the worker
# dies; the redelivered tick finds the dead one's lease held and does nothing, and once the lease
# runs out (MEMSITE_TICK_LEASE_S) the next tick beat starts takes the brain over, or
# `ticks_sweep_stale` fails the dead tick's run.
@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def tick_run(*, agent_id: int) -> None:
    services.tick_run(agent_id=agent_id)


# Retry policy: none; beat runs it again 10 s later, and brains left due are started then.
@shared_task(ignore_result=True)
def ticks_start_due() -> int:
    return services.ticks_start_due()


# Retry policy: none; beat runs it again a minute later.
@shared_task(ignore_result=True)
def ticks_sweep_stale() -> int:
    return services.ticks_sweep_stale()


# Retry policy: none by Celery. acks_late + reject_on_worker_lost redeliver the task if the worker
# dies, and the graph's lease expires after MEMSITE_GRAPH_LEASE_S; `graphs_sweep_stale` (or the
# next memorize or recall queued on the graph) then runs what is left.
@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def graph_work(*, graph_id: int) -> None:
    services.graph_work(graph_id=graph_id)


# Retry policy: none; beat runs it again a minute later.
@shared_task(ignore_result=True)
def graphs_sweep_stale() -> int:
    return services.graphs_sweep_stale()
