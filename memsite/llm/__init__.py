"""The LLM gateway (see gateway.py). Exports resolve lazily: memory.types imports
memsite.llm.tokens while models load, before this app's models can be imported."""

from typing import TYPE_CHECKING, Any

from memsite.llm.errors import LLMError, Reason
from memsite.llm.purposes import Purpose

if TYPE_CHECKING:
    from memsite.llm.gateway import Completion, Usage, complete

__all__ = ["Completion", "LLMError", "Purpose", "Reason", "Usage", "complete"]


def __getattr__(name: str) -> Any:
    if name in ("Completion", "Usage", "complete"):
        from memsite.llm import gateway

        return getattr(gateway, name)
    raise AttributeError(f"module 'memsite.llm' has no attribute {name!r}")
