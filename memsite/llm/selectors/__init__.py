from memsite.llm.selectors.calls import (
    LedgerFilter,
    LedgerTotal,
    llm_call_get,
    llm_call_list,
    llm_call_models,
    llm_call_totals,
    llm_call_totals_by_day,
    llm_call_totals_by_purpose,
    llm_calls_serving,
    llm_provider_serving,
    llm_providers_serving,
)

__all__ = [
    "LedgerFilter",
    "LedgerTotal",
    "llm_call_get",
    "llm_call_list",
    "llm_call_models",
    "llm_call_totals",
    "llm_call_totals_by_day",
    "llm_call_totals_by_purpose",
    "llm_calls_serving",
    "llm_provider_serving",
    "llm_providers_serving",
]
