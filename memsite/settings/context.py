"""Agents' conversations: the summaries of context assembly's summarize strategy."""

from memsite.settings.env import env_int

# Summaries of agents' conversations (the summarize strategy of context assembly).
MEMSITE_SUMMARY_MAX_TOKENS = env_int("MEMSITE_SUMMARY_MAX_TOKENS", 1_000)  # one summary's length
MEMSITE_SUMMARY_CHUNK_TOKENS = env_int("MEMSITE_SUMMARY_CHUNK_TOKENS", 6_000)  # messages read per LLM call
MEMSITE_SUMMARY_MAX_CHUNKS = env_int("MEMSITE_SUMMARY_MAX_CHUNKS", 8)  # LLM calls of one summary
# A failed summary is tried again when an assembly asks for it this long after; a pending one
# whose worker went quiet, re-queued.
MEMSITE_SUMMARY_RETRY_S = env_int("MEMSITE_SUMMARY_RETRY_S", 60)
