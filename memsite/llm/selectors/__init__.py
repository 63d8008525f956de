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
from memsite.llm.selectors.served import Served, ServedPage, llm_calls_served, register_served_page

__all__ = [
    "Served",
    "ServedPage",
    "llm_calls_served",
    "register_served_page",
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
