import pytest


@pytest.fixture(autouse=True)
def model_table(settings):
    """A model with a 1,100-token context: with 100 reserved for output, a 1,000-token window
    that tests fill with a few messages."""
    settings.MEMSITE_LLM_MODELS = {"test-1k": {"context_window": 1_100, "max_output_tokens": 100}}
    return settings
