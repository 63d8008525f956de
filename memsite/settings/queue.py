"""Celery's broker, queues and beat schedule, and the cache (Redis when REDIS_URL is set)."""

from memsite.settings.base import VAR_DIR
from memsite.settings.brains import MEMSITE_TICK_MIN_INTERVAL_S
from memsite.settings.env import env_str

# Celery: Redis when REDIS_URL is set, otherwise kombu's filesystem broker under var/.
REDIS_URL = env_str("REDIS_URL")
BROKER_DIR = VAR_DIR / "broker"
# A broker that does not answer is known within CELERY_BROKER_CONNECTION_TIMEOUT seconds: a
# request that starts work then answers 503 and changes nothing (memsite/queue.py); a publish
# after the commit retries for about two seconds. Workers and beat retry their connection for
# as long as it takes and pick the queued work up when the broker is back.
CELERY_BROKER_CONNECTION_TIMEOUT = 2
CELERY_BROKER_CONNECTION_RETRY = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_CONNECTION_MAX_RETRIES = None  # never give up
# A task under way when the broker goes keeps running (it needs only the database); its
# acknowledgement is lost, and the message handed out again later finds the work done.
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = False
CELERY_TASK_PUBLISH_RETRY = True
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 3, "interval_start": 0, "interval_step": 0.5, "interval_max": 1}
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    # Without a socket timeout a publish waits forever on a connection whose broker vanished
    # without closing it; 5 s stays above the worker's 1 s BRPOP.
    CELERY_BROKER_TRANSPORT_OPTIONS: dict = {
        "socket_connect_timeout": CELERY_BROKER_CONNECTION_TIMEOUT,
        "socket_timeout": 5,
    }
else:
    # The host names nothing (the folders below are the broker), but without one kombu warns
    # "No hostname was supplied" at every connection.
    CELERY_BROKER_URL = "filesystem://localhost/"
    # kombu's transport, with messages written whole before a reader can see them (memsite/broker.py).
    CELERY_BROKER_TRANSPORT = "memsite.broker:Transport"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR / "queue"),
        "data_folder_out": str(BROKER_DIR / "queue"),
        "processed_folder": str(BROKER_DIR / "processed"),
        "control_folder": str(BROKER_DIR / "control"),
        "store_processed": False,
        # kombu's default 1 s poll held each worker to about one task a second.
        "polling_interval": 0.1,
    }
# The cache counts API requests for the rate limit (memsite.api.UserRequestThrottle): in Redis
# when there is one, shared by every web worker; otherwise in each process's memory.
CACHES = {
    "default": (
        {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": "memsite",
            "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
        }
        if REDIS_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
CELERY_BEAT_SCHEDULE: dict = {
    "searches-sweep-stale": {"task": "memory.tasks.searches_sweep_stale", "schedule": 60.0},
    # Beat's period follows the shortest ticking interval, so the two cannot disagree: a brain
    # ticks as often as it asks, and a shorter interval is refused with the period named.
    "ticks-start-due": {"task": "agents.tasks.ticks_start_due", "schedule": float(MEMSITE_TICK_MIN_INTERVAL_S)},
    # Work a killed worker left: ticks' runs failed, graphs' operations queued again.
    "ticks-sweep-stale": {"task": "agents.tasks.ticks_sweep_stale", "schedule": 60.0},
    "graphs-sweep-stale": {"task": "agents.tasks.graphs_sweep_stale", "schedule": 60.0},
    "index-embed-sweep": {"task": "memory.tasks.index_embed_sweep", "schedule": 60.0},
    "descriptions-sweep": {"task": "memory.tasks.descriptions_sweep", "schedule": 60.0},
}
# Beat's jobs have a queue and a worker of their own (`upkeep` in the Procfiles and compose),
# so due ticks start and stale work is swept while a backlog of searches waits on the work
# queue. What a job queues (a tick, a search again) has no route: it goes to the work queue.
CELERY_TASK_DEFAULT_QUEUE = "celery"
MEMSITE_UPKEEP_QUEUE = "upkeep"
CELERY_TASK_ROUTES = {entry["task"]: {"queue": MEMSITE_UPKEEP_QUEUE} for entry in CELERY_BEAT_SCHEDULE.values()}
