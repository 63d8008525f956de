"""The whole REST API fuzzed from its schema (as tests/memsite/test_api_fuzz.py does) with a
second space's tokens, a reader's and an editor's in turn, aimed at the first space's ids about
half of the time. An id of the first space is never found: a refusal, never a 2xx, answers it;
and after all an operation was sent, no row the first space had has changed or gone, row for
row."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pytest
import schemathesis
from django.core.wsgi import get_wsgi_application
from schemathesis.checks import not_a_server_error

from memsite.spaces.logic import Role
from memsite.spaces.models import Membership, Space
from memsite.spaces.services import membership_set, token_create
from tests.factories import UserFactory
from tests.memsite.test_api_fuzz import WORLD, existing_ids_half_of_the_time, fuzzed, quiet, world, world_keys
from tests.security.rows import Rows, changed_since, rows_by_key

pytestmark = [pytest.mark.fuzz, pytest.mark.django_db]
__all__ = ["quiet", "world"]  # fixtures, used by name

MAX_EXAMPLES = 8  # per operation, in the fuzzing phase only: the main fuzz covers the schema's breadth
SENT: Counter[str] = Counter()
schema = schemathesis.openapi.from_wsgi("/api/schema/", get_wsgi_application())
schema.config.phases.update(phases=["fuzzing"])
schema.config.generation.update(modes=["positive", "negative"])
schema.hook("flatmap_path_parameters")(existing_ids_half_of_the_time)


@pytest.fixture
def first_space(world, quiet) -> Iterator[Rows]:
    """The rows of the first space's world, read before the second space exists; after every
    request fuzzed at one operation, each of them must be as it was."""
    before = rows_by_key()
    yield before
    assert changed_since(before) == []


@pytest.fixture
def other_keys(first_space) -> list[str]:
    """Keys of a reader and an editor of a second space, members of no other."""
    elsewhere = Space.objects.create(slug="elsewhere", name="Elsewhere")
    keys = []
    for role in (Role.READER, Role.EDITOR):
        user = UserFactory()
        Membership.objects.filter(user=user).delete()
        membership_set(space=elsewhere, member=user, role=role)
        keys.append(token_create(member=user, space=elsewhere, name=f"elsewhere {role}").key)
    return keys


def aims_at_the_first_space(case) -> bool:
    """Whether the case names rows of the first space by their ids. An OPTIONS names none: its
    answer (what the view accepts) is the same for any id."""
    if case.method == "OPTIONS":
        return False
    keys = world_keys(case.operation, case.path_parameters) if case.path_parameters else None
    return keys is not None and all(case.path_parameters[name] in WORLD[key] for name, key in keys.items())


@schema.parametrize()
@fuzzed(MAX_EXAMPLES)
def test_another_spaces_tokens_change_and_find_nothing_of_this_one(case, first_space, other_keys):
    SENT[case.operation.label] += 1
    key = other_keys[SENT[case.operation.label] % 2]
    response = case.call_and_validate(headers={"Authorization": f"Token {key}"}, checks=[not_a_server_error])
    if aims_at_the_first_space(case):
        assert response.status_code >= 400, f"{case.method} {case.formatted_path} found the first space's row"
