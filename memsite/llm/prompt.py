"""A prompt: the messages a model reads, and the same request as data for the offline provider,
which reads no prose (memsite.text.reading)."""

from dataclasses import dataclass
from typing import Any

from memsite.text.reading import Reading


@dataclass(frozen=True)
class Prompt:
    messages: list[dict[str, Any]]
    reading: Reading
