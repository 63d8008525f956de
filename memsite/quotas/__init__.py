"""Fair background work: per-user caps on work in flight and a daily LLM budget (see checks)."""
