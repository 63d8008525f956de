import pytest

from tests.security.world import World, build_world
from tests.shared_rows import built_once, own_copy


@pytest.fixture(autouse=True)
def offline(offline_llm):
    """The offline provider: chat and searches answer without a model."""
    return offline_llm


@pytest.fixture(scope="module")
def shared_world(django_db_setup, django_db_blocker):
    yield from built_once(django_db_blocker, build_world)


@pytest.fixture
def world(shared_world, db) -> World:
    return own_copy(shared_world)
