import pytest

from tests.security.world import World, build_world


@pytest.fixture(autouse=True)
def offline(offline_llm):
    """The offline provider: chat and searches answer without a model."""
    return offline_llm


@pytest.fixture
def world(db) -> World:
    return build_world()
