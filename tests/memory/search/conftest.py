import pytest

from memory import services
from memory.models import Search
from memsite.llm.providers.openai import client_for, forget_working_modes
from tests.fake_openai import FakeOpenAI


@pytest.fixture(autouse=True)
def search_settings(settings, internal):
    """The offline provider, small budgets and no tool fallback unless a test asks for them."""
    settings.MEMSITE_LLM_PROVIDER = "offline"
    settings.OPENAI_API_KEY = None
    settings.OPENAI_BASE_URL = None
    settings.MEMSITE_LLM_MAX_REPAIRS = 1
    settings.MEMSITE_LLM_MAX_RETRIES = 0
    settings.MEMSITE_SEARCH_TOOLS = False
    settings.MEMSITE_SEARCH_MAX_RESTARTS = 0
    return settings


@pytest.fixture
def llm(search_settings, fake_openai: FakeOpenAI):
    """The gateway pointed at the fake server, whose replies each test scripts in order."""
    search_settings.MEMSITE_LLM_PROVIDER = "openai"
    search_settings.OPENAI_API_KEY = "sk-test"
    search_settings.OPENAI_BASE_URL = fake_openai.url
    forget_working_modes()
    yield fake_openai
    client_for.cache_clear()
    forget_working_modes()


def run_search(questions: list[str], **options) -> Search:
    search = services.search_start(user=None, questions=questions, **options)
    services.search_run(search_id=search.pk)
    search.refresh_from_db()
    return search
