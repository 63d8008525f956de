"""The quota checks the services make before they start work in a space, inside the
transaction that writes it: each locks the user's row first, so two requests of one user count
one after the other (on SQLite every write transaction is serialized anyway), and raises
`QuotaExceeded` (429) past a cap or once a daily LLM budget is spent, which rolls it back.
Explained in docs/memsite.md."""

from collections.abc import Callable
from functools import partial

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import transaction
from django.utils import timezone

from memsite.quotas import selectors
from memsite.quotas.logic import QuotaExceeded, budget_refusal, in_flight_refusal
from memsite.spaces.logic import MEMBER_LIMITS
from memsite.spaces.models import ApiToken, Space


def acting_user_id(user: AbstractBaseUser | AnonymousUser | None) -> int | None:
    """The id of the user work is for; None for no user or an anonymous one."""
    if user is None or not getattr(user, "is_authenticated", False):
        return None
    return user.pk


def token_id_of(token: ApiToken | None) -> int | None:
    """The id of the token work is asked through; None for a session's."""
    return token.pk if token is not None else None


def _locked(user_id: int) -> None:
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("Quota checks belong inside the transaction that starts the work.")
    get_user_model().objects.select_for_update().filter(pk=user_id).exists()


def _raise(refusal: QuotaExceeded | None) -> None:
    if refusal is not None:
        raise refusal


def llm_budget_require(*, user_id: int | None, space: Space, token: ApiToken | None = None) -> None:
    """QuotaExceeded once the member's LLM budget in the space for today is spent, the whole
    space's, or the asking token's."""
    now = timezone.now()
    for spend in selectors.spends_today(user_id=user_id, space=space, token=token, now=now):
        _raise(budget_refusal(spend, now=now))


def _work_require(
    user_id: int, space: Space, token: ApiToken | None, *, what: str, cap_field: str, in_flight: Callable[[], int]
) -> None:
    """Room for one more piece of work under the member's cap `cap_field` names, and budget to run it."""
    _locked(user_id)
    chosen = getattr(space, cap_field)
    setting = MEMBER_LIMITS[cap_field] if chosen is None else f"the space's {cap_field}"
    cap = selectors.member_cap(space, cap_field)
    _raise(in_flight_refusal(what=what, in_flight=in_flight(), cap=cap, setting=setting))
    llm_budget_require(user_id=user_id, space=space, token=token)


def search_quota_require(*, user_id: int | None, space: Space, token: ApiToken | None = None) -> None:
    if user_id is not None:
        count = partial(selectors.searches_in_flight, user_id=user_id, space_id=space.pk)
        _work_require(user_id, space, token, what="searches", cap_field="quota_searches", in_flight=count)


def tick_quota_require(*, user_id: int | None, space: Space, token: ApiToken | None = None) -> None:
    if user_id is not None:
        count = partial(selectors.ticks_in_flight, user_id=user_id, space_id=space.pk)
        _work_require(user_id, space, token, what="ticks", cap_field="quota_ticks", in_flight=count)


def ticking_quota_require(*, user_id: int | None, space: Space, agent_id: int, token: ApiToken | None = None) -> None:
    """The agent itself, if it ticks for the user already, is not one more."""
    if user_id is not None:
        count = partial(selectors.ticking_agents, user_id=user_id, space_id=space.pk, excluding=agent_id)
        _work_require(user_id, space, token, what="agents ticking", cap_field="quota_ticking_agents", in_flight=count)


def graph_op_quota_require(*, user_id: int | None, space: Space, token: ApiToken | None = None) -> None:
    if user_id is not None:
        count = partial(selectors.graph_ops_in_flight, user_id=user_id, space_id=space.pk)
        _work_require(user_id, space, token, what="graph operations", cap_field="quota_graph_ops", in_flight=count)
