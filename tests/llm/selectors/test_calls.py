from decimal import Decimal

import pytest
from django.utils import timezone

from memsite.errors import NotFound
from memsite.llm import selectors
from memsite.llm.selectors import LedgerFilter
from memsite.spaces.models import Space
from memsite.spaces.selectors import space_default
from tests.factories import system
from tests.llm.factories import days_ago, make_call

pytestmark = pytest.mark.django_db


def test_filters_combine():
    wanted = make_call(purpose="answer", model="gpt-4.1", ok=False, error_reason="timeout")
    make_call(purpose="answer", model="gpt-4.1")
    make_call(purpose="route", model="gpt-4.1", ok=False)
    make_call(purpose="answer", model="gpt-4.1", ok=False, created_at=days_ago(10))

    calls = selectors.llm_call_list(
        space=space_default(),
        filters=LedgerFilter(purpose="answer", model="gpt-4.1", status="error", date_from=days_ago(1).date()),
    )

    assert list(calls) == [wanted]


def test_date_range_is_inclusive():
    old = make_call(created_at=days_ago(3))
    make_call(created_at=days_ago(5))
    today = make_call()

    calls = selectors.llm_call_list(
        space=space_default(), filters=LedgerFilter(date_from=days_ago(3).date(), date_to=timezone.now().date())
    )

    assert set(calls) == {old, today}


def test_totals_per_day_and_per_purpose():
    make_call(purpose="route", prompt_tokens=10, completion_tokens=1, cost_usd=Decimal("0.1"))
    make_call(purpose="route", prompt_tokens=20, completion_tokens=2, cost_usd=Decimal("0.2"))
    make_call(purpose="answer", prompt_tokens=5, completion_tokens=5, cost_usd=Decimal("0.05"), created_at=days_ago(2))
    calls = selectors.llm_call_list(space=space_default())

    total = selectors.llm_call_totals(calls=calls)
    by_day = selectors.llm_call_totals_by_day(calls=calls)
    by_purpose = {row.key: row for row in selectors.llm_call_totals_by_purpose(calls=calls)}

    assert (total.calls, total.tokens, total.cost_usd) == (3, 43, Decimal("0.35"))
    assert [(row.key, row.calls, row.tokens) for row in by_day] == [
        (timezone.now().date(), 2, 33),
        (days_ago(2).date(), 1, 10),
    ]
    assert (by_purpose["route"].calls, by_purpose["route"].prompt_tokens, by_purpose["route"].cost_usd) == (
        2,
        30,
        Decimal("0.3"),
    )
    assert by_purpose["answer"].completion_tokens == 5


def test_empty_totals_are_zero():
    total = selectors.llm_call_totals(calls=selectors.llm_call_list(space=space_default()))
    assert (total.calls, total.tokens, total.cost_usd) == (0, 0, Decimal(0))


def test_calls_serving_a_row(user):
    served = make_call(served=user)
    make_call()

    assert list(selectors.llm_calls_serving(served=user)) == [served]


def test_missing_call_is_not_found():
    with pytest.raises(NotFound):
        selectors.llm_call_get(space=space_default(), call_id=404)


def test_the_ledger_is_the_spaces_own():
    mine = make_call()
    other = Space.objects.create(slug="other", name="Other")
    theirs = make_call(by=system(other), model="their-model")
    assert list(selectors.llm_call_list(space=space_default())) == [mine]
    assert selectors.llm_call_models(space=space_default()) == [mine.model]
    with pytest.raises(NotFound):
        selectors.llm_call_get(space=space_default(), call_id=theirs.pk)
    assert selectors.llm_call_get(space=other, call_id=theirs.pk) == theirs
