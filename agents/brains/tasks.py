"""Celery entry points for brains. Thin: load by id, call one service."""

from celery import shared_task

from agents.brains import services


# The names are the ones queued before the agents app was split (and the beat schedule's):
# messages already in the broker still find their task.
# Retry policy: none by Celery. acks_late + reject_on_worker_lost redeliver the task if the worker
# dies; the redelivered tick finds the dead one's lease held and does nothing, and once the lease
# runs out (MEMSITE_TICK_LEASE_S) the next tick beat starts takes the brain over, or
# `ticks_sweep_stale` fails the dead tick's run.
@shared_task(name="agents.tasks.tick_run", acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def tick_run(*, agent_id: int) -> None:
    services.tick_run(agent_id=agent_id)


# Retry policy: none; beat runs it again 10 s later, and brains left due are started then.
@shared_task(name="agents.tasks.ticks_start_due", ignore_result=True)
def ticks_start_due() -> int:
    return services.ticks_start_due()


# Retry policy: none; beat runs it again a minute later.
@shared_task(name="agents.tasks.ticks_sweep_stale", ignore_result=True)
def ticks_sweep_stale() -> int:
    return services.ticks_sweep_stale()
