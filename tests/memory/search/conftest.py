import pytest

from memory import services
from memory.models import Search
from tests.factories import system
from tests.fake_openai import FakeOpenAI


@pytest.fixture(autouse=True)
def search_settings(settings, internal):
    """The offline provider, small budgets, no tool fallback and no shortcut to the best
    passages (the scripted walks follow the tree) unless a test asks for them; full text alone
    ranks passages."""
    settings.MEMSITE_LLM_PROVIDER = "offline"
    settings.OPENAI_API_KEY = None
    settings.OPENAI_BASE_URL = None
    settings.MEMSITE_LLM_MAX_REPAIRS = 1
    settings.MEMSITE_LLM_MAX_RETRIES = 0
    settings.MEMSITE_SEARCH_TOOLS = False
    settings.MEMSITE_SEARCH_MAX_RESTARTS = 0
    settings.MEMSITE_SEARCH_SHORTCUT_HITS = 0
    settings.MEMSITE_SEARCH_FIRST_READ_TOKENS = 0
    settings.MEMSITE_EMBEDDINGS = "off"
    return settings


@pytest.fixture
def llm(search_settings, openai_gateway: FakeOpenAI) -> FakeOpenAI:
    return openai_gateway


def run_search(questions: list[str], **options) -> Search:
    search = services.search_start(by=system(), questions=questions, **options)
    services.search_run(search_id=search.pk)
    search.refresh_from_db()
    return search
