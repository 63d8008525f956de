from memsite.llm.providers.base import CallTrace, LLMRequest, Provider


def get_provider(name: str) -> Provider:
    # Imported here so that the offline default never loads the openai package.
    if name == "offline":
        from memsite.llm.providers.offline import OfflineProvider

        return OfflineProvider()
    if name == "openai":
        from memsite.llm.providers.openai import OpenAIProvider

        return OpenAIProvider()
    from memsite.llm.errors import LLMError, Reason

    raise LLMError(Reason.CONFIGURATION, f"Unknown LLM provider {name!r}.")


__all__ = ["CallTrace", "LLMRequest", "Provider", "get_provider"]
