"""Reasoning graphs (seed 004)."""

from memsite.settings.env import env_int

# Reasoning graphs (seed 004): the default context trigger (at most half the model's window),
# the tokens of graph shown in a memorize or recall prompt, and the lease a worker holds on a
# graph while it runs its operations.
MEMSITE_GRAPH_TRIGGER_TOKENS = env_int("MEMSITE_GRAPH_TRIGGER_TOKENS", 32_000)
MEMSITE_GRAPH_PROMPT_TOKENS = env_int("MEMSITE_GRAPH_PROMPT_TOKENS", 3_000)
MEMSITE_GRAPH_LEASE_S = env_int("MEMSITE_GRAPH_LEASE_S", 300)
MEMSITE_GRAPH_SNAPSHOT_MAX_BYTES = env_int("MEMSITE_GRAPH_SNAPSHOT_MAX_BYTES", 20 * 1024 * 1024)
# The steps (an assistant turn and the results after it, one LLM call each) one memorize takes.
MEMSITE_GRAPH_MEMORIZE_MAX_STEPS = env_int("MEMSITE_GRAPH_MEMORIZE_MAX_STEPS", 20, minimum=1)
