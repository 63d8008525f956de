import socket

import pytest

from memsite.llm.providers.openai import client_for, forget_working_modes
from tests.fake_openai import FakeOpenAI

LOOPBACK = ("127.0.0.1", "::1", "localhost")


@pytest.fixture(autouse=True)
def no_internet(monkeypatch):
    """Any connection beyond loopback fails the test at once, instead of hanging on a download."""
    original = socket.socket.connect

    def loopback_only(sock, address):
        if sock.family in (socket.AF_INET, socket.AF_INET6) and address[0] not in LOOPBACK:
            raise AssertionError(f"A test tried to reach {address!r}.")
        return original(sock, address)

    monkeypatch.setattr(socket.socket, "connect", loopback_only)


@pytest.fixture(autouse=True)
def llm_settings(settings):
    """The offline provider, as with no key, and sleeps short enough for tests."""
    settings.MEMSITE_LLM_PROVIDER = "offline"
    settings.OPENAI_API_KEY = None
    settings.OPENAI_BASE_URL = None
    settings.MEMSITE_LLM_MODEL = "gpt-4o-mini"
    settings.MEMSITE_LLM_PURPOSE_MODELS = {}
    settings.MEMSITE_LLM_MODELS = {}
    settings.MEMSITE_LLM_TIMEOUT_MS = 5_000
    settings.MEMSITE_LLM_REQUEST_TIMEOUT_MS = 2_000
    settings.MEMSITE_LLM_MAX_RETRIES = 3
    settings.MEMSITE_LLM_MAX_REPAIRS = 2
    settings.MEMSITE_LLM_BACKOFF_BASE_MS = 1
    settings.MEMSITE_LLM_BACKOFF_MAX_MS = 5
    settings.MEMSITE_LLM_RETRY_AFTER_MAX_MS = 1_000
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast users
    forget_working_modes()
    yield settings
    forget_working_modes()


@pytest.fixture
def openai_llm(llm_settings, fake_openai: FakeOpenAI) -> FakeOpenAI:
    """The gateway pointed at the fake server through the real openai client."""
    llm_settings.MEMSITE_LLM_PROVIDER = "openai"
    llm_settings.OPENAI_API_KEY = "sk-test"
    llm_settings.OPENAI_BASE_URL = fake_openai.url
    yield fake_openai
    client_for.cache_clear()
