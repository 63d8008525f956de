"""The caps of a brain's collections and texts (seed 002's table), overridable one by one in
MEMSITE_BRAIN_CAPS (`thought=5000,log=10000`)."""

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

DEFAULT_CAPS = {
    # lists: entries kept, the oldest trimmed
    "thought": 20_000,
    "inner_thought": 200,
    "episode": 2_000,
    "fact": 500,
    "self_instruction": 10,
    # chat lines memory.json's chatHistory keeps of the conversation: the newest (her own cap);
    # the conversation itself keeps every message
    "chat": 200,
    "log": 50_000,
    "user_message": 10,
    "goal": 20,
    "tick": 1_000,  # tick runs kept for the charts and their traces
    "embedding": 2_000,  # memory.json's embeddings, kept unused for its export (her own cap)
    # keyed collections: entries kept, the least recently used trimmed
    "path": 10_000,
    "url": 10_000,
    "neuron": 100_000,
    "synapse": 500_000,
    # texts, in characters
    "self_summary_chars": 2_000,
    "last_user_message_chars": 500,
    "last_error_chars": 200,
    "entry_chars": 4_000,  # one thought, fact, episode summary, chat line...
    # plan steps
    "plan_steps": 3,
}


def cap(name: str) -> int:
    value = settings.MEMSITE_BRAIN_CAPS.get(name, DEFAULT_CAPS[name])
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ImproperlyConfigured(f"MEMSITE_BRAIN_CAPS[{name!r}] must be a positive integer, got {value!r}.")
    return value


def clip(text: str, name: str) -> str:
    """`text` within the cap `name` (in characters)."""
    limit = cap(name)
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "\u2026"
