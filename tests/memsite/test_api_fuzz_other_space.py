"""The whole REST API fuzzed from its schema (as tests/memsite/test_api_fuzz.py does) with a
second space's tokens, a reader's and an editor's in turn, aimed at the first space's ids about
half of the time. Whatever they send, no row the first space had changes or goes, row for row,
and an id of the first space is never found: a refusal, never a 2xx, answers it."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings
from schemathesis.checks import not_a_server_error

from memsite.spaces.logic import Role
from memsite.spaces.models import Membership, Space
from memsite.spaces.services import membership_set, token_create
from tests.factories import UserFactory
from tests.memsite.test_api_fuzz import WORLD, quiet, schema, with_existing_ids, world, world_keys
from tests.security.rows import Rows, changed_since, rows_by_key

pytestmark = [pytest.mark.fuzz, pytest.mark.django_db]
__all__ = ["quiet", "world"]  # fixtures, used by name

MAX_EXAMPLES = 8  # per operation in the fuzzing phase: the main fuzz covers the schema's breadth
SENT: Counter[str] = Counter()


@pytest.fixture
def first_space(world, quiet) -> Rows:
    """The rows of the first space's world, read before the second space exists."""
    return rows_by_key()


@pytest.fixture
def other_keys(first_space) -> list[str]:
    """Keys of a reader and an editor of a second space, members of no other."""
    elsewhere = Space.objects.create(slug="elsewhere", name="Elsewhere")
    keys = []
    for role in (Role.READER, Role.EDITOR):
        user = UserFactory()
        Membership.objects.filter(user=user).delete()
        membership_set(space=elsewhere, user=user, role=role)
        keys.append(token_create(user=user, space=elsewhere, name=f"elsewhere {role}").key)
    return keys


def aims_at_the_first_space(case) -> bool:
    keys = world_keys(case.operation, case.path_parameters) if case.path_parameters else None
    return keys is not None and all(case.path_parameters[name] in WORLD[key] for name, key in keys.items())


@schema.parametrize()
@hypothesis_settings(
    max_examples=MAX_EXAMPLES,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.filter_too_much],
)
def test_another_spaces_tokens_change_and_find_nothing_of_this_one(case, first_space, other_keys):
    with_existing_ids(case)
    SENT[case.operation.label] += 1
    key = other_keys[SENT[case.operation.label] % 2]
    response = case.call_and_validate(headers={"Authorization": f"Token {key}"}, checks=[not_a_server_error])
    if aims_at_the_first_space(case):
        assert response.status_code >= 400, f"{case.method} {case.formatted_path} found the first space's row"
    assert changed_since(first_space) == []
