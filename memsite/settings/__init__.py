"""memsite settings. Every value that varies between deployments is read through `env`."""

import json
import re
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from memsite.llm.catalog import parse_model_table
from memsite.llm.purposes import COMPLETION_PURPOSES
from memsite.settings.env import env_bool, env_int, env_int_map, env_list, env_str
from memsite.settings.security import content_security_policy, production_secret_key

BASE_DIR = Path(__file__).resolve().parent.parent.parent
VAR_DIR = Path(env_str("MEMSITE_VAR_DIR", str(BASE_DIR / "var")))

# Off unless asked for (`make run` asks): a deployment that forgets it gets production's
# defaults, not tracebacks and debug pages.
DEBUG = env_bool("DJANGO_DEBUG", False)
# The embedded default runs on a developer's machine; production must bring a strong key of its own.
SECRET_KEY = (
    env_str("DJANGO_SECRET_KEY", "memsite-embedded-insecure-key")
    if DEBUG
    else production_secret_key(env_str("DJANGO_SECRET_KEY"))
)
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", [])

# HTTPS, with DEBUG off. memsite is served behind a proxy that terminates TLS (deploy/nginx/ in
# docker-compose) and says so in X-Forwarded-Proto, which the proxy sets itself whatever the
# client sent. Cookies travel over HTTPS only; browsers are told to come back over HTTPS only
# (HSTS); plain HTTP is redirected, but for /healthz, which load balancers probe over HTTP.
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = not DEBUG
SECURE_PROXY_SSL_HEADER = (
    ("HTTP_X_FORWARDED_PROTO", "https") if not DEBUG and env_bool("DJANGO_SECURE_PROXY_SSL_HEADER", True) else None
)
SECURE_SSL_REDIRECT = not DEBUG and env_bool("DJANGO_SECURE_SSL_REDIRECT", True)
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SECURE_HSTS_SECONDS = 0 if DEBUG else env_int("DJANGO_SECURE_HSTS_SECONDS", 365 * 24 * 3600)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS", True)
SECURE_HSTS_PRELOAD = env_bool("DJANGO_SECURE_HSTS_PRELOAD", False)
# Preloading puts the domain in browsers' built-in lists, which takes months to undo: the
# deployment opts in (DJANGO_SECURE_HSTS_PRELOAD=true); until then check --deploy's reminder
# (security.W021) is silenced.
SILENCED_SYSTEM_CHECKS = [] if SECURE_HSTS_PRELOAD else ["security.W021"]
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# Sent with DEBUG off (memsite/csp.py). Scripts come only from memsite's static files (htmx,
# Swagger UI): no inline script, no eval. Inline styles stay allowed: the context bars size
# their segments with style attributes, and htmx adds its indicator styles.
MEMSITE_CONTENT_SECURITY_POLICY = content_security_policy(
    {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:"],  # Swagger UI draws its icons from data: URLs
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
)

INSTALLED_APPS = [
    "memsite.apps.AdminConfig",  # django.contrib.admin, its login limited (memsite/login.py)
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # the API docs page's Swagger UI, served from static files
    "django_htmx",
    "template_partials",
    "treebeard",
    "memsite",
    "memsite.llm",
    "memory",
    "agents",  # the three apps below and the migrations their tables were made by
    "agents.context",
    "agents.brains",
    "agents.graphs",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "memsite.csp.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "memsite.middleware.DatabaseUnavailableMiddleware",  # a lost database: 503, not a traceback
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "memsite.limits.RequestBodyLimitMiddleware",  # 413 from Content-Length, before the CSRF check reads a form
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "memsite.urls"
WSGI_APPLICATION = "memsite.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "memsite.llm.context_processors.llm_status",
            ],
        },
    },
]

# SQLite in WAL mode unless DATABASE_URL names another database. IMMEDIATE transactions make
# the web server and the Celery worker queue for the write lock instead of failing.
DATABASE_URL = env_str("DATABASE_URL")
if DATABASE_URL:
    DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=60, conn_health_checks=True)}
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": VAR_DIR / "memsite.sqlite3",
            "OPTIONS": {
                "init_command": (
                    "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;"
                ),
                "transaction_mode": "IMMEDIATE",
                "timeout": 20,
            },
        }
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "memory:browser"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "memsite.schema.AutoSchema",
    "EXCEPTION_HANDLER": "memsite.api.exception_handler",
    "DEFAULT_THROTTLE_CLASSES": ["memsite.throttles.UserRequestThrottle"],
    # The client's address, for the limits on anonymous requests and failed logins: the
    # connection's own, or the one the last of MEMSITE_TRUSTED_PROXIES put in X-Forwarded-For.
    "NUM_PROXIES": env_int("MEMSITE_TRUSTED_PROXIES", 0),
    "DEFAULT_PARSER_CLASSES": [
        "memsite.api.JSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
}
SPECTACULAR_SETTINGS = {
    "TITLE": "memsite API",
    "DESCRIPTION": "Memory for LLM agent swarms: the memory tree, its content and archives.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    # Swagger UI from drf-spectacular-sidecar's static files, not a CDN: the docs page works
    # offline and its CSP needs no other host.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

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
    CELERY_BROKER_URL = "filesystem://"
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
    "ticks-start-due": {"task": "agents.tasks.ticks_start_due", "schedule": 10.0},
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

# Requests a user (token or session) may make of the API: `N/s`, `N/min`, `N/hour` or `N/day`.
MEMSITE_API_RATE = env_str("MEMSITE_API_RATE", "1200/min")
if not re.fullmatch(r"[1-9][0-9]*/(s|sec|second|m|min|minute|h|hour|d|day)", MEMSITE_API_RATE):
    raise ImproperlyConfigured(f"MEMSITE_API_RATE must look like 1200/min, got {MEMSITE_API_RATE!r}.")
# Failed logins per username and per client address in a window; past them the login answers
# 429, even to the right password, until the window passes.
MEMSITE_LOGIN_MAX_FAILURES = env_int("MEMSITE_LOGIN_MAX_FAILURES", 10, minimum=1)
MEMSITE_LOGIN_WINDOW_S = env_int("MEMSITE_LOGIN_WINDOW_S", 900, minimum=1)
# Requests that wait (a search's `?wait`, chat's LLM call) each hold a web thread: at most this
# many at once per process, fewer than gunicorn's threads, so that the others serve the rest.
MEMSITE_WAIT_SLOTS = env_int("MEMSITE_WAIT_SLOTS", 2, minimum=1)
# Under gunicorn, how long a request body may go without a byte arriving before a 408.
MEMSITE_BODY_TIMEOUT_S = env_int("MEMSITE_BODY_TIMEOUT_S", 10, minimum=1)
# Limits on what one write may carry. Every write path enforces them.
MEMSITE_MAX_CONTENT_BYTES = env_int("MEMSITE_MAX_CONTENT_BYTES", 10 * 1024 * 1024)
MEMSITE_ARCHIVE_MAX_BYTES = env_int("MEMSITE_ARCHIVE_MAX_BYTES", 50 * 1024 * 1024)
MEMSITE_ARCHIVE_MAX_FILES = env_int("MEMSITE_ARCHIVE_MAX_FILES", 5_000)
MEMSITE_ARCHIVE_MAX_UNPACKED_BYTES = env_int("MEMSITE_ARCHIVE_MAX_UNPACKED_BYTES", 200 * 1024 * 1024)
MEMSITE_CHILDREN_PAGE_SIZE = env_int("MEMSITE_CHILDREN_PAGE_SIZE", 100)
# Searches (seed 001): default budgets, and the walk's limits.
MEMSITE_SEARCH_MAX_LLM_CALLS = env_int("MEMSITE_SEARCH_MAX_LLM_CALLS", 40)
MEMSITE_SEARCH_MAX_TOKENS = env_int("MEMSITE_SEARCH_MAX_TOKENS", 200_000)
MEMSITE_SEARCH_TIMEOUT_S = env_int("MEMSITE_SEARCH_TIMEOUT_S", 300)
MEMSITE_SEARCH_MAX_RESTARTS = env_int("MEMSITE_SEARCH_MAX_RESTARTS", 1)
MEMSITE_SEARCH_MAX_DEPTH = env_int("MEMSITE_SEARCH_MAX_DEPTH", 2)  # sub-searches within sub-searches
MEMSITE_SEARCH_ROUTE_TOKENS = env_int("MEMSITE_SEARCH_ROUTE_TOKENS", 3_000)  # options shown per routing call
MEMSITE_SEARCH_READ_TOKENS = env_int("MEMSITE_SEARCH_READ_TOKENS", 3_000)  # content shown per reading call
MEMSITE_SEARCH_TOOLS = env_bool("MEMSITE_SEARCH_TOOLS", True)  # offer a folder's tool tree before leaving it
MEMSITE_SEARCH_NOTES_TOKENS = env_int("MEMSITE_SEARCH_NOTES_TOKENS", 1_500)  # what was learnt, in each prompt
MEMSITE_SEARCH_MAX_CHUNKS = env_int("MEMSITE_SEARCH_MAX_CHUNKS", 4)  # chunks of one node's content read
# Nodes of the best passages offered to the router before it routes from the start (0: none).
MEMSITE_SEARCH_SHORTCUT_HITS = env_int("MEMSITE_SEARCH_SHORTCUT_HITS", 5, minimum=0)
# A running search whose worker has not written a step for this long is re-queued (or failed
# after MEMSITE_SEARCH_MAX_REQUEUES) by the beat job.
MEMSITE_SEARCH_STALE_S = env_int("MEMSITE_SEARCH_STALE_S", 180)
MEMSITE_SEARCH_MAX_REQUEUES = env_int("MEMSITE_SEARCH_MAX_REQUEUES", 3)

# The content index (memory.index): how much of one node's content is cut into passages, and
# how many candidates each ranking hands to the fusion.
MEMSITE_INDEX_MAX_BYTES = env_int("MEMSITE_INDEX_MAX_BYTES", 2_000_000)
MEMSITE_INDEX_CANDIDATES = env_int("MEMSITE_INDEX_CANDIDATES", 100)
MEMSITE_INDEX_RELOAD_S = env_int("MEMSITE_INDEX_RELOAD_S", 600)  # each process rereads every vector
# How long one upkeep task (embedding passages, describing nodes) may hold its lock: longer
# than a task's share of the work takes, so a worker that dies holding it frees it.
MEMSITE_UPKEEP_LOCK_S = env_int("MEMSITE_UPKEEP_LOCK_S", 900)
# Sentence embeddings of passages: `local` (all-MiniLM-L6-v2 on the CPU), `server` (the
# OpenAI-compatible server's /v1/embeddings, through the LLM gateway) or `off` (full text alone).
MEMSITE_EMBEDDINGS = env_str("MEMSITE_EMBEDDINGS", "local")
if MEMSITE_EMBEDDINGS not in ("local", "server", "off"):
    raise ImproperlyConfigured(f"MEMSITE_EMBEDDINGS must be local, server or off, got {MEMSITE_EMBEDDINGS!r}.")

# Summaries of agents' conversations (the summarize strategy of context assembly).
MEMSITE_SUMMARY_MAX_TOKENS = env_int("MEMSITE_SUMMARY_MAX_TOKENS", 1_000)  # one summary's length
MEMSITE_SUMMARY_CHUNK_TOKENS = env_int("MEMSITE_SUMMARY_CHUNK_TOKENS", 6_000)  # messages read per LLM call
MEMSITE_SUMMARY_MAX_CHUNKS = env_int("MEMSITE_SUMMARY_MAX_CHUNKS", 8)  # LLM calls of one summary
# A failed summary is tried again when an assembly asks for it this long after; a pending one
# whose worker went quiet, re-queued.
MEMSITE_SUMMARY_RETRY_S = env_int("MEMSITE_SUMMARY_RETRY_S", 60)
# Agents' brains: caps of their collections over the defaults in agents/brain/caps.py, as
# `thought=5000,log=10000`.
MEMSITE_BRAIN_CAPS = env_int_map("MEMSITE_BRAIN_CAPS")
# Reasoning graphs (seed 004): the default context trigger (at most half the model's window),
# the tokens of graph shown in a memorize or recall prompt, and the lease a worker holds on a
# graph while it runs its operations.
MEMSITE_GRAPH_TRIGGER_TOKENS = env_int("MEMSITE_GRAPH_TRIGGER_TOKENS", 32_000)
MEMSITE_GRAPH_PROMPT_TOKENS = env_int("MEMSITE_GRAPH_PROMPT_TOKENS", 3_000)
MEMSITE_GRAPH_LEASE_S = env_int("MEMSITE_GRAPH_LEASE_S", 300)
MEMSITE_GRAPH_SNAPSHOT_MAX_BYTES = env_int("MEMSITE_GRAPH_SNAPSHOT_MAX_BYTES", 20 * 1024 * 1024)
# The largest memory.json (seed 002's file of a whole brain) an import accepts.
MEMSITE_BRAIN_IMPORT_MAX_BYTES = env_int("MEMSITE_BRAIN_IMPORT_MAX_BYTES", 50 * 1024 * 1024)
# Ticks of the reflection loop: a tick's lease on its brain expires after MEMSITE_TICK_LEASE_S,
# so a killed worker's brain ticks again; deepReflect runs every MEMSITE_TICK_DEEP_REFLECT_EVERY
# ticks; read_file and fetch_url show the LLM at most MEMSITE_TICK_READ_TOKENS of what they read.
MEMSITE_TICK_LEASE_S = env_int("MEMSITE_TICK_LEASE_S", 300, minimum=1)
MEMSITE_TICK_DEEP_REFLECT_EVERY = env_int("MEMSITE_TICK_DEEP_REFLECT_EVERY", 5, minimum=1)
MEMSITE_TICK_READ_TOKENS = env_int("MEMSITE_TICK_READ_TOKENS", 2_000, minimum=1)
# The shortest interval an agent may tick at: beat's period for ticks_start_due (a shorter one
# would tick no faster, only queue ticks that wait).
MEMSITE_TICK_MIN_INTERVAL_S = env_int("MEMSITE_TICK_MIN_INTERVAL_S", 10, minimum=1)
# Background LLM work one user may have at once (memsite/quotas): searches queued or running,
# ticks queued or running, agents ticking on a schedule, graph operations queued; past it, 429.
MEMSITE_QUOTA_SEARCHES = env_int("MEMSITE_QUOTA_SEARCHES", 8, minimum=1)
MEMSITE_QUOTA_TICKS = env_int("MEMSITE_QUOTA_TICKS", 4, minimum=1)
MEMSITE_QUOTA_TICKING_AGENTS = env_int("MEMSITE_QUOTA_TICKING_AGENTS", 10, minimum=1)
MEMSITE_QUOTA_GRAPH_OPS = env_int("MEMSITE_QUOTA_GRAPH_OPS", 4, minimum=1)
# LLM calls and tokens one user's work may spend in a day (UTC), counted from the ledger.
MEMSITE_LLM_DAILY_CALLS = env_int("MEMSITE_LLM_DAILY_CALLS", 2_000, minimum=1)
MEMSITE_LLM_DAILY_TOKENS = env_int("MEMSITE_LLM_DAILY_TOKENS", 2_000_000, minimum=1)
# The steps (an assistant turn and the results after it, one LLM call each) one memorize takes.
MEMSITE_GRAPH_MEMORIZE_MAX_STEPS = env_int("MEMSITE_GRAPH_MEMORIZE_MAX_STEPS", 20, minimum=1)

# Bounds request bodies other than uploaded files (a file's size is checked by the view that
# takes it), and what any request may announce in its Content-Length but for the few views with
# larger limits of their own (memsite/limits.py): the largest is the dashboard's form-encoded
# document save, where a non-ASCII
# document at the content cap grows up to 3x when percent-encoded (each byte as `%XX`), plus
# room for the other fields.
DATA_UPLOAD_MAX_MEMORY_SIZE = 3 * MEMSITE_MAX_CONTENT_BYTES + 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 2_621_440

# The LLM gateway (memsite/llm). Without a key it runs the offline heuristics.
OPENAI_API_KEY = env_str("OPENAI_API_KEY")
OPENAI_BASE_URL = env_str("OPENAI_BASE_URL")
MEMSITE_LLM_PROVIDER = env_str("MEMSITE_LLM_PROVIDER", "openai" if OPENAI_API_KEY else "offline")
if MEMSITE_LLM_PROVIDER not in ("openai", "offline"):
    raise ImproperlyConfigured(f"MEMSITE_LLM_PROVIDER must be openai or offline, got {MEMSITE_LLM_PROVIDER!r}.")
if MEMSITE_LLM_PROVIDER == "openai" and not (OPENAI_API_KEY or OPENAI_BASE_URL):
    raise ImproperlyConfigured("MEMSITE_LLM_PROVIDER=openai needs OPENAI_API_KEY or OPENAI_BASE_URL.")
MEMSITE_LLM_MODEL = env_str("MEMSITE_LLM_MODEL", "gpt-4o-mini")
# The model of /v1/embeddings when MEMSITE_EMBEDDINGS=server: asked for 384 dimensions, the
# index's, and refused if it gives others.
MEMSITE_EMBEDDING_MODEL = env_str("MEMSITE_EMBEDDING_MODEL", "text-embedding-3-small")
if MEMSITE_EMBEDDINGS == "server" and not (OPENAI_API_KEY or OPENAI_BASE_URL):
    raise ImproperlyConfigured("MEMSITE_EMBEDDINGS=server needs OPENAI_API_KEY or OPENAI_BASE_URL.")
# A model per purpose, e.g. MEMSITE_LLM_MODEL_DEEP_REFLECT=gpt-4.1; unset purposes use the default.
# `embed` is not one of them: its one setting is MEMSITE_EMBEDDING_MODEL.
MEMSITE_LLM_PURPOSE_MODELS = {
    purpose: model
    for purpose in COMPLETION_PURPOSES
    if (model := env_str(f"MEMSITE_LLM_MODEL_{purpose.upper()}"))
}
# Additions to and overrides of the model table, as JSON: {"name": {"context_window": 32768,
# "max_output_tokens": 4096, "input_price_per_million": 0.2, "output_price_per_million": 0.6}}.
try:
    MEMSITE_LLM_MODELS = json.loads(env_str("MEMSITE_LLM_MODELS", "{}"))
    parse_model_table(MEMSITE_LLM_MODELS)
except ValueError as exc:
    raise ImproperlyConfigured(f"MEMSITE_LLM_MODELS: {exc}") from None
MEMSITE_LLM_TIMEOUT_MS = env_int("MEMSITE_LLM_TIMEOUT_MS", 120_000)  # one call, all retries included
MEMSITE_LLM_REQUEST_TIMEOUT_MS = env_int("MEMSITE_LLM_REQUEST_TIMEOUT_MS", 60_000)
MEMSITE_LLM_MAX_RETRIES = env_int("MEMSITE_LLM_MAX_RETRIES", 4)
MEMSITE_LLM_MAX_REPAIRS = env_int("MEMSITE_LLM_MAX_REPAIRS", 2)
MEMSITE_LLM_BACKOFF_BASE_MS = env_int("MEMSITE_LLM_BACKOFF_BASE_MS", 500)
MEMSITE_LLM_BACKOFF_MAX_MS = env_int("MEMSITE_LLM_BACKOFF_MAX_MS", 20_000)
MEMSITE_LLM_RETRY_AFTER_MAX_MS = env_int("MEMSITE_LLM_RETRY_AFTER_MAX_MS", 60_000)

# Agents' fetch_url (memsite/fetch.py) reaches only these hosts: `docs.example.org`, or
# `.example.org` for it and its subdomains, with `:8080` for a port other than 80 and 443.
# Empty, nothing can be fetched.
MEMSITE_FETCH_ALLOWED_HOSTS = env_list("MEMSITE_FETCH_ALLOWED_HOSTS", [])
MEMSITE_FETCH_MAX_BYTES = env_int("MEMSITE_FETCH_MAX_BYTES", 1_000_000)  # read of one response
MEMSITE_FETCH_MAX_REDIRECTS = env_int("MEMSITE_FETCH_MAX_REDIRECTS", 3)
MEMSITE_FETCH_TIMEOUT_S = env_int("MEMSITE_FETCH_TIMEOUT_S", 10)  # each hop, resolution to last byte

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("MEMSITE_LOG_LEVEL", "INFO")},
}
