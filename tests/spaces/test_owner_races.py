"""Two owners of a space removing or demoting each other at the same moment, through tokens that
manage it: one wins, the other gets 409 and the space keeps an owner. On PostgreSQL each call
locks rows of its own first, so the calls must take their locks in one order or they deadlock
(a 503)."""

from functools import partial

import pytest
from rest_framework.test import APIClient

from memsite.spaces.logic import Role
from memsite.spaces.models import Membership, Space
from memsite.spaces.services import membership_set
from tests.factories import UserFactory, token_for
from tests.hardening.test_concurrency import race

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("sqlite_waits_for_locks")]

# A deadlock needs both calls between their two locks at once: a few rounds make it near certain.
ROUNDS = 8


def two_owners(round_number: int) -> tuple[Space, list[tuple[str, str]]]:
    """A space of its own for the round, owned by two users: each one's key there, with the
    other's username."""
    space = Space.objects.create(slug=f"race-{round_number}", name=f"Race {round_number}")
    owners = [UserFactory(), UserFactory()]
    for owner in owners:
        membership_set(space=space, member=owner, role=Role.OWNER)
    keys = [token_for(owner, space=space, manage=True) for owner in owners]
    return space, [(keys[0], owners[1].username), (keys[1], owners[0].username)]


def call(key: str, method: str, url: str, body: dict | None) -> int:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return getattr(client, method)(url, body, format="json").status_code


# The loser's call that starts after the winner's has ended finds its caller no longer an owner
# (a 401 once removed, a 403 once demoted); one that overlaps it gets the 409.
@pytest.mark.parametrize(
    ("method", "body", "done", "too_late"),
    [("delete", None, 204, 401), ("put", {"role": Role.EDITOR}, 200, 403)],
    ids=["removing", "demoting"],
)
def test_two_owners_changing_each_other_at_once_one_wins_the_other_gets_409(method, body, done, too_late):
    for round_number in range(ROUNDS):
        space, callers = two_owners(round_number)
        outcomes = race(
            *(partial(call, key, method, f"/api/spaces/{space.slug}/members/{other}/", body) for key, other in callers)
        )
        assert [outcome.trace for outcome in outcomes if outcome.error] == []
        statuses = sorted(outcome.value for outcome in outcomes)
        assert statuses in (sorted([done, 409]), sorted([done, too_late])), f"round {round_number}: {statuses}"
        assert Membership.objects.filter(space=space, role=Role.OWNER).count() == 1
