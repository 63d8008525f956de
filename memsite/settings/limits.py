"""What a request, a write or a user may take: rates, sizes, waits and quotas."""

import re

from django.core.exceptions import ImproperlyConfigured

from memsite.settings.env import env_int, env_str

# Requests a user (token or session) may make of the API: `N/s`, `N/min`, `N/hour` or `N/day`.
MEMSITE_API_RATE = env_str("MEMSITE_API_RATE", "1200/min")
if not re.fullmatch(r"[1-9][0-9]*/(s|sec|second|m|min|minute|h|hour|d|day)", MEMSITE_API_RATE):
    raise ImproperlyConfigured(f"MEMSITE_API_RATE must look like 1200/min, got {MEMSITE_API_RATE!r}.")
# Failed logins per client address and username pair in a window (the streak waits longer after
# each failure past the first three); past them the login answers that pair 429, even to the
# right password, until the window passes. Looser bounds hold one address guessing many
# usernames, and many addresses guessing one username: ten strangers' addresses at least, so
# that one stranger cannot lock an account out for everyone.
MEMSITE_LOGIN_MAX_FAILURES = env_int("MEMSITE_LOGIN_MAX_FAILURES", 10, minimum=1)
MEMSITE_LOGIN_ADDRESS_MAX_FAILURES = env_int("MEMSITE_LOGIN_ADDRESS_MAX_FAILURES", 30, minimum=1)
MEMSITE_LOGIN_USERNAME_MAX_FAILURES = env_int("MEMSITE_LOGIN_USERNAME_MAX_FAILURES", 100, minimum=1)
MEMSITE_LOGIN_WINDOW_S = env_int("MEMSITE_LOGIN_WINDOW_S", 900, minimum=1)
# Requests that wait (a search's `?wait`, chat's LLM call) each hold a web thread: at most this
# many at once per process, fewer than gunicorn's threads, so that the others serve the rest.
MEMSITE_WAIT_SLOTS = env_int("MEMSITE_WAIT_SLOTS", 2, minimum=1)
# Requests one user (token or session), or one address without a login, may have under way at
# once per process; past it, 429 with Retry-After. Half of gunicorn's threads: whatever one
# caller sends, the other half serve everyone else, the health check among them.
MEMSITE_USER_CONCURRENCY = env_int(
    "MEMSITE_USER_CONCURRENCY", max(1, env_int("GUNICORN_THREADS", 4, minimum=1) // 2), minimum=1
)
# Under gunicorn, how long a request body may go without a byte arriving before a 408.
MEMSITE_BODY_TIMEOUT_S = env_int("MEMSITE_BODY_TIMEOUT_S", 10, minimum=1)
# Limits on what one write may carry. Every write path enforces them.
MEMSITE_MAX_CONTENT_BYTES = env_int("MEMSITE_MAX_CONTENT_BYTES", 10 * 1024 * 1024)
MEMSITE_ARCHIVE_MAX_BYTES = env_int("MEMSITE_ARCHIVE_MAX_BYTES", 50 * 1024 * 1024)
MEMSITE_ARCHIVE_MAX_FILES = env_int("MEMSITE_ARCHIVE_MAX_FILES", 5_000)
MEMSITE_ARCHIVE_MAX_UNPACKED_BYTES = env_int("MEMSITE_ARCHIVE_MAX_UNPACKED_BYTES", 200 * 1024 * 1024)
MEMSITE_CHILDREN_PAGE_SIZE = env_int("MEMSITE_CHILDREN_PAGE_SIZE", 100)
# Background LLM work one user may have at once (memsite/quotas): searches queued or running,
# ticks queued or running, agents ticking on a schedule, graph operations queued; past it, 429.
MEMSITE_QUOTA_SEARCHES = env_int("MEMSITE_QUOTA_SEARCHES", 8, minimum=1)
MEMSITE_QUOTA_TICKS = env_int("MEMSITE_QUOTA_TICKS", 4, minimum=1)
MEMSITE_QUOTA_TICKING_AGENTS = env_int("MEMSITE_QUOTA_TICKING_AGENTS", 10, minimum=1)
MEMSITE_QUOTA_GRAPH_OPS = env_int("MEMSITE_QUOTA_GRAPH_OPS", 4, minimum=1)
# LLM calls and tokens one user's work may spend in a day (UTC), in all their spaces together,
# counted from the ledger.
MEMSITE_LLM_DAILY_CALLS = env_int("MEMSITE_LLM_DAILY_CALLS", 2_000, minimum=1)
MEMSITE_LLM_DAILY_TOKENS = env_int("MEMSITE_LLM_DAILY_TOKENS", 2_000_000, minimum=1)
# LLM calls and tokens memsite's own upkeep in one space (descriptions, summaries, embeddings)
# may spend in a day (UTC); past it, that upkeep waits for the next day.
MEMSITE_SYSTEM_LLM_DAILY_CALLS = env_int("MEMSITE_SYSTEM_LLM_DAILY_CALLS", 2_000, minimum=1)
MEMSITE_SYSTEM_LLM_DAILY_TOKENS = env_int("MEMSITE_SYSTEM_LLM_DAILY_TOKENS", 2_000_000, minimum=1)
# Calls to the offline provider cost nothing and no budget above counts them; this cap, on a
# user's in all spaces and on memsite's own in a space, only stops a loop that never ends.
MEMSITE_OFFLINE_LLM_DAILY_CALLS = env_int("MEMSITE_OFFLINE_LLM_DAILY_CALLS", 20_000, minimum=1)
# Spaces one user may have made that still exist; past it, creating another is a 409.
MEMSITE_SPACES_PER_USER = env_int("MEMSITE_SPACES_PER_USER", 20, minimum=1)

# The largest body a request may carry, a form's (the login's included) or JSON, but for the few
# views with larger limits of their own (memsite/limits.py: JSON writes of content, uploads, the
# document editor's save). An uploaded file's size is checked by the view that takes it.
DATA_UPLOAD_MAX_MEMORY_SIZE = 1024 * 1024  # nginx's client_max_body_size, but where a view takes more
# Fields one form or query string may hold; no form of the site has more than a few dozen.
DATA_UPLOAD_MAX_NUMBER_FIELDS = 1000
# The editor's live preview: it renders the start of the text (memory.rendering's 200,000
# bytes), which this holds with room for its escapes; the editor sends no more than that.
MEMSITE_PREVIEW_MAX_BYTES = 256 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 2_621_440
