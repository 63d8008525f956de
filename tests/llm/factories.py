import datetime
from decimal import Decimal

from django.utils import timezone

from memsite.llm.models import LLMCall
from memsite.llm.services import llm_call_record
from memsite.spaces.principals import Principal
from tests.factories import system


def make_call(*, created_at: datetime.datetime | None = None, by: Principal | None = None, **overrides) -> LLMCall:
    """A ledger row written through the service, as the gateway writes it, for `by`: memsite
    itself in the default space unless it says otherwise."""
    values = {
        "purpose": "route",
        "provider": "openai",
        "model": "gpt-4o-mini",
        "ok": True,
        "messages": [{"role": "user", "content": "hello"}],
        "reply": "{}",
        "prompt_tokens": 100,
        "completion_tokens": 20,
        "tokens_reported": True,
        "tokens_approximate": False,
        "latency_ms": 30,
        "cost_usd": Decimal("0.000027"),
        "retries": 0,
        "repairs": 0,
        "response_mode": "json_schema",
        "schema_name": "RouteChoice",
    } | overrides
    call = llm_call_record(by=by or system(), **values)
    if created_at is not None:
        LLMCall.objects.filter(pk=call.pk).update(created_at=created_at)
        call.refresh_from_db()
    return call


def days_ago(days: int) -> datetime.datetime:
    return timezone.now() - datetime.timedelta(days=days)
