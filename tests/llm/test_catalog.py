import logging
from decimal import Decimal

import pytest

from memsite.llm.catalog import DEFAULT_MODELS, model_table, parse_model_table, resolve_model
from memsite.llm.config import llm_config


def test_defaults_cover_common_models():
    for name in ("gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-4.1-mini", "gpt-3.5-turbo", "o3-mini"):
        info = DEFAULT_MODELS[name]
        assert info.context_window > 0 and info.max_output_tokens > 0 and info.known


def test_cost_is_priced_per_million_tokens():
    info = DEFAULT_MODELS["gpt-4o"]
    assert info.cost(prompt_tokens=1_000_000, completion_tokens=500_000) == Decimal("7.50")


def test_dated_variants_resolve_to_their_model():
    table = model_table()
    assert resolve_model("gpt-4o-mini-2024-07-18", table).name == "gpt-4o-mini"
    assert resolve_model("gpt-4o-2024-08-06", table).name == "gpt-4o"


def test_unknown_model_gets_a_safe_default_and_a_warning(caplog):
    with caplog.at_level(logging.WARNING, logger="memsite.llm.catalog"):
        info = resolve_model("llama-3-70b-local", model_table())

    assert info.known is False and info.context_window == 8_192
    assert "llama-3-70b-local" in caplog.text


def test_settings_override_and_extend_the_table(settings):
    settings.MEMSITE_LLM_MODELS = {
        "gpt-4o": {"input_price_per_million": "1.00"},
        "qwen-local": {"context_window": 32_768, "max_output_tokens": 4_096},
    }
    config = llm_config()

    assert config.model_info("gpt-4o").input_price_per_million == Decimal("1.00")
    assert config.model_info("gpt-4o").context_window == 128_000
    qwen = config.model_info("qwen-local")
    assert (qwen.context_window, qwen.input_price_per_million, qwen.known) == (32_768, 0, True)


def test_a_bad_override_is_refused():
    with pytest.raises(ValueError, match="context_window"):
        parse_model_table({"x": {"context_window": -1}})
    with pytest.raises(ValueError):
        parse_model_table({"x": {"colour": "blue"}})
