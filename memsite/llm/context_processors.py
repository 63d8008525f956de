from dataclasses import dataclass

from django.http import HttpRequest

from memsite.llm.config import llm_config


@dataclass(frozen=True)
class LLMStatus:
    provider: str
    model: str  # the default model; "" for the offline provider, which is no model
    is_offline: bool

    @property
    def label(self) -> str:
        return "offline heuristics (no LLM)" if self.is_offline else f"{self.provider} · {self.model}"

    def __str__(self) -> str:
        return self.label


def llm_status(request: HttpRequest) -> dict[str, LLMStatus]:
    """`llm_status` in every template: which provider and model the gateway uses now."""
    config = llm_config()
    return {
        "llm_status": LLMStatus(
            provider=config.provider,
            model="" if config.is_offline else config.default_model,
            is_offline=config.is_offline,
        )
    }
