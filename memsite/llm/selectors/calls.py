"""Reads of the ledger."""

import datetime
from collections.abc import Collection
from dataclasses import dataclass
from decimal import Decimal

from django.contrib.contenttypes.models import ContentType
from django.db import models
from django.db.models import Count, Sum
from django.db.models.functions import Coalesce, TruncDate
from django.utils import timezone

from memsite.errors import NotFound
from memsite.llm.config import OFFLINE
from memsite.llm.models import LLMCall
from memsite.spaces.models import Space


@dataclass(frozen=True)
class LedgerFilter:
    purpose: str = ""
    model: str = ""
    status: str = ""
    date_from: datetime.date | None = None
    date_to: datetime.date | None = None


@dataclass(frozen=True)
class LedgerTotal:
    key: object  # a date, a purpose, or None for the grand total
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: Decimal

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


def llm_call_list(*, space: Space, filters: LedgerFilter | None = None) -> models.QuerySet[LLMCall]:
    """The space's calls, newest first, without the heavy message and reply columns."""
    calls = LLMCall.objects.filter(space=space).defer("messages", "reply", "error")
    filters = filters or LedgerFilter()
    if filters.purpose:
        calls = calls.filter(purpose=filters.purpose)
    if filters.model:
        calls = calls.filter(model=filters.model)
    if filters.status:
        calls = calls.filter(status=filters.status)
    # As ranges of `created_at`, so that the (space, created_at) index bounds the read.
    if filters.date_from:
        calls = calls.filter(created_at__gte=_day_start(filters.date_from))
    if filters.date_to:
        calls = calls.filter(created_at__lt=_day_start(filters.date_to + datetime.timedelta(days=1)))
    return calls


def _day_start(day: datetime.date) -> datetime.datetime:
    """The start of `day` in the current time zone, the one `__date` lookups use."""
    return timezone.make_aware(datetime.datetime.combine(day, datetime.time.min))


def llm_call_get(*, space: Space, call_id: int) -> LLMCall:
    """One of the space's calls: another space's is the same 404 as a missing one."""
    try:
        return LLMCall.objects.select_related("served_type", "user", "token").get(pk=call_id, space=space)
    except LLMCall.DoesNotExist:
        raise NotFound(f"No LLM call {call_id}.") from None


def llm_calls_serving(*, served: models.Model) -> models.QuerySet[LLMCall]:
    """The calls made for one row (a search, a tick, a graph)."""
    return LLMCall.objects.filter(served_type=ContentType.objects.get_for_model(served), served_id=served.pk)


def llm_providers_serving(*, model: type[models.Model], served_ids: Collection[int]) -> dict[int, str]:
    """Whose calls produced the rows of `model` (searches, ticks, graph operations, summaries),
    by id: `offline` when any of a row's answered calls ran offline, since heuristics then wrote
    some of it; else its calls' provider. A row with no answered call on record is left out."""
    calls = LLMCall.objects.filter(
        served_type=ContentType.objects.get_for_model(model), served_id__in=served_ids, status=LLMCall.Status.OK
    )
    providers: dict[int, set[str]] = {}
    for served_id, provider in calls.values_list("served_id", "provider").distinct():
        if served_id is not None:  # the filter asked for ids; mypy cannot know
            providers.setdefault(served_id, set()).add(provider)
    return {key: OFFLINE if OFFLINE in found else min(found) for key, found in providers.items()}


def llm_provider_serving(*, model: type[models.Model], served_id: int) -> str | None:
    """`llm_providers_serving` of one row: None when no answered call is on record."""
    return llm_providers_serving(model=model, served_ids=[served_id]).get(served_id)


_SUMS = {
    "calls": Count("id"),
    "prompt": Coalesce(Sum("prompt_tokens"), 0),
    "completion": Coalesce(Sum("completion_tokens"), 0),
    "cost": Coalesce(Sum("cost_usd"), Decimal(0), output_field=models.DecimalField()),
}


def _total(key: object, row: dict) -> LedgerTotal:
    return LedgerTotal(
        key=key,
        calls=row["calls"],
        prompt_tokens=row["prompt"],
        completion_tokens=row["completion"],
        cost_usd=Decimal(row["cost"]),
    )


def llm_call_totals(*, calls: models.QuerySet[LLMCall]) -> LedgerTotal:
    return _total(None, calls.order_by().aggregate(**_SUMS))


def llm_call_totals_by_day(*, calls: models.QuerySet[LLMCall]) -> list[LedgerTotal]:
    rows = calls.order_by().annotate(day=TruncDate("created_at")).values("day").annotate(**_SUMS).order_by("-day")
    return [_total(row["day"], row) for row in rows]


def llm_call_totals_by_purpose(*, calls: models.QuerySet[LLMCall]) -> list[LedgerTotal]:
    rows = calls.order_by().values("purpose").annotate(**_SUMS).order_by("purpose")
    return [_total(row["purpose"], row) for row in rows]


def llm_call_models(*, space: Space) -> list[str]:
    """Model names seen in the space's ledger, for the filter."""
    return list(LLMCall.objects.filter(space=space).order_by("model").values_list("model", flat=True).distinct())
