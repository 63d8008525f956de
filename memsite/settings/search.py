"""Searches (seed 001) and the content index they and the shortcuts read."""

from django.core.exceptions import ImproperlyConfigured

from memsite.settings.env import env_bool, env_int, env_str

# Searches (seed 001): default budgets, and the walk's limits.
MEMSITE_SEARCH_MAX_LLM_CALLS = env_int("MEMSITE_SEARCH_MAX_LLM_CALLS", 40)
MEMSITE_SEARCH_MAX_TOKENS = env_int("MEMSITE_SEARCH_MAX_TOKENS", 200_000)
MEMSITE_SEARCH_TIMEOUT_S = env_int("MEMSITE_SEARCH_TIMEOUT_S", 300)
MEMSITE_SEARCH_MAX_RESTARTS = env_int("MEMSITE_SEARCH_MAX_RESTARTS", 1)
MEMSITE_SEARCH_MAX_DEPTH = env_int("MEMSITE_SEARCH_MAX_DEPTH", 2)  # sub-searches within sub-searches
# Once every question has an answer in part, the readings in a row that may add nothing to any
# before the walk ends (`settled`): a reader may find the rest further on, but rarely after this.
MEMSITE_SEARCH_SETTLE_READS = env_int("MEMSITE_SEARCH_SETTLE_READS", 2, minimum=1)
# A walk that has found nothing for any question ends after this many readings: the index's best
# passages and the nodes the router chose from them were read, and the rest is guessing.
MEMSITE_SEARCH_FRUITLESS_READS = env_int("MEMSITE_SEARCH_FRUITLESS_READS", 6, minimum=1)
MEMSITE_SEARCH_ROUTE_TOKENS = env_int("MEMSITE_SEARCH_ROUTE_TOKENS", 3_000)  # options shown per routing call
MEMSITE_SEARCH_READ_TOKENS = env_int("MEMSITE_SEARCH_READ_TOKENS", 3_000)  # content shown per reading call
MEMSITE_SEARCH_TOOLS = env_bool("MEMSITE_SEARCH_TOOLS", True)  # offer a folder's tool tree before leaving it
MEMSITE_SEARCH_NOTES_TOKENS = env_int("MEMSITE_SEARCH_NOTES_TOKENS", 1_500)  # what was learnt, in each prompt
MEMSITE_SEARCH_MAX_CHUNKS = env_int("MEMSITE_SEARCH_MAX_CHUNKS", 4)  # chunks of one node's content read
# The index's best passages, of any node, read before the walk begins, within this many tokens
# (0: none): a question they answer costs one call.
MEMSITE_SEARCH_FIRST_READ_TOKENS = env_int("MEMSITE_SEARCH_FIRST_READ_TOKENS", 1_500, minimum=0)
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
