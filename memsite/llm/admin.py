"""The LLM ledger in Django's admin: read, and nothing more."""

from django.contrib import admin

from memsite.admin import ReadOnlyAdmin
from memsite.llm.models import LLMCall


@admin.register(LLMCall)
class LLMCallAdmin(ReadOnlyAdmin):
    """Read-only: the ledger is written by the gateway alone, and the budgets are counted from
    it, so no row of it is deleted here either."""

    list_display = [
        "created_at",
        "purpose",
        "provider",
        "model",
        "status",
        "acted_as",
        "prompt_tokens",
        "completion_tokens",
        "cost_usd",
    ]
    list_filter = ["purpose", "provider", "status", "acted_as"]
    date_hierarchy = "created_at"
