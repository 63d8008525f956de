import pytest

from tests.security.world import World, build_world


@pytest.fixture(autouse=True)
def offline(settings):
    """The offline provider: chat and searches answer without a model."""
    settings.MEMSITE_LLM_PROVIDER = "offline"
    settings.OPENAI_API_KEY = None
    settings.OPENAI_BASE_URL = None
    return settings


@pytest.fixture
def world(db) -> World:
    return build_world()
