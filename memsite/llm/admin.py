from django.contrib import admin

from memsite.llm.models import LLMCall


@admin.register(LLMCall)
class LLMCallAdmin(admin.ModelAdmin):
    """Read-only: the ledger is written by the gateway alone."""

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

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
