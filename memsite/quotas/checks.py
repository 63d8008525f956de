"""The quota checks the services make before they start work in a space, inside the
transaction that writes it: each locks the user's row first, so two requests of one user count
one after the other (on SQLite every write transaction is serialized anyway), and raises
`QuotaExceeded` (429) past a cap or once a daily LLM budget is spent, which rolls it back.
Explained in docs/memsite.md."""

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from memsite.quotas import selectors
from memsite.quotas.logic import QuotaExceeded, budget_refusal, in_flight_refusal
from memsite.spaces.logic import MEMBER_LIMITS
from memsite.spaces.principals import Principal


def _locked(user_id: int) -> None:
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("Quota checks belong inside the transaction that starts the work.")
    get_user_model().objects.select_for_update().filter(pk=user_id).exists()


def _raise(refusal: QuotaExceeded | None) -> None:
    if refusal is not None:
        raise refusal


def llm_budget_require(*, by: Principal) -> None:
    """QuotaExceeded once a daily LLM budget `by`'s work counts against is spent (see
    `selectors.spends_today`)."""
    now = timezone.now()
    for spend in selectors.spends_today(by=by, now=now):
        _raise(budget_refusal(spend, now=now))


def _work_require(by: Principal, kind: str, *, what: str, **options: object) -> None:
    """Room for one more piece of work of `kind` under the member's cap on it, and budget to run
    it. memsite's own work has no member's cap; its budget still bounds it."""
    if by.user_id is not None:
        _locked(by.user_id)
        cap_field = selectors.CAPS[kind]
        chosen = getattr(by.space, cap_field)
        setting = MEMBER_LIMITS[cap_field] if chosen is None else f"the space's {cap_field}"
        cap = selectors.member_cap(by.space, cap_field)
        count = selectors.in_flight(kind, by=by, **options)
        _raise(in_flight_refusal(what=what, in_flight=count, cap=cap, setting=setting))
    llm_budget_require(by=by)


def search_quota_require(*, by: Principal) -> None:
    _work_require(by, "searches", what="searches")


def tick_quota_require(*, by: Principal) -> None:
    _work_require(by, "ticks", what="ticks")


def ticking_quota_require(*, by: Principal, agent_id: int) -> None:
    """The agent itself, if it ticks for the user already, is not one more."""
    _work_require(by, "ticking_agents", what="agents ticking", excluding=agent_id)


def graph_op_quota_require(*, by: Principal) -> None:
    _work_require(by, "graph_ops", what="graph operations")
