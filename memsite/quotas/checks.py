"""The quota checks the services make before they start work, inside the transaction that
writes it: each locks the user's row first, so two requests of one user count one after the
other (on SQLite every write transaction is serialized anyway), and raises `QuotaExceeded`
(429) past a cap or once the day's LLM budget is spent, which rolls the write back.
Explained in docs/memsite.md."""

from collections.abc import Callable
from functools import partial

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import transaction
from django.utils import timezone

from memsite.quotas import selectors
from memsite.quotas.logic import QuotaExceeded, Spend, budget_refusal, in_flight_refusal


def acting_user_id(user: AbstractBaseUser | AnonymousUser | None) -> int | None:
    """The id of the user work is for; None for no user or an anonymous one."""
    if user is None or not getattr(user, "is_authenticated", False):
        return None
    return user.pk


def _locked(user_id: int) -> None:
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("Quota checks belong inside the transaction that starts the work.")
    get_user_model().objects.select_for_update().filter(pk=user_id).exists()


def _raise(refusal: QuotaExceeded | None) -> None:
    if refusal is not None:
        raise refusal


def llm_budget_require(*, user_id: int | None) -> Spend | None:
    """QuotaExceeded once the user's LLM budget for today is spent; their spend otherwise."""
    if user_id is None:
        return None
    now = timezone.now()
    spend = selectors.llm_spend_today(user_id=user_id, now=now)
    _raise(budget_refusal(spend, now=now))
    return spend


def _work_require(user_id: int, *, what: str, setting: str, in_flight: Callable[[], int]) -> None:
    """Room for one more piece of work under the cap `setting` names, and budget to run it."""
    _locked(user_id)
    cap = getattr(settings, setting)
    _raise(in_flight_refusal(what=what, in_flight=in_flight(), cap=cap, setting=setting))
    llm_budget_require(user_id=user_id)


def search_quota_require(*, user_id: int | None) -> None:
    if user_id is not None:
        count = partial(selectors.searches_in_flight, user_id=user_id)
        _work_require(user_id, what="searches", setting="MEMSITE_QUOTA_SEARCHES", in_flight=count)


def tick_quota_require(*, user_id: int | None) -> None:
    if user_id is not None:
        count = partial(selectors.ticks_in_flight, user_id=user_id)
        _work_require(user_id, what="ticks", setting="MEMSITE_QUOTA_TICKS", in_flight=count)


def ticking_quota_require(*, user_id: int | None, agent_id: int) -> None:
    """The agent itself, if it ticks for the user already, is not one more."""
    if user_id is not None:
        count = partial(selectors.ticking_agents, user_id=user_id, excluding=agent_id)
        _work_require(user_id, what="agents ticking", setting="MEMSITE_QUOTA_TICKING_AGENTS", in_flight=count)


def graph_op_quota_require(*, user_id: int | None) -> None:
    if user_id is not None:
        count = partial(selectors.graph_ops_in_flight, user_id=user_id)
        _work_require(user_id, what="graph operations", setting="MEMSITE_QUOTA_GRAPH_OPS", in_flight=count)
