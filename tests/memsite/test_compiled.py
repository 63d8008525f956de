"""A read compiled once gives what its queryset gives (related rows, annotations, converted
values), runs one query a call, and compiles nothing after the first call on a connection."""

from datetime import timedelta

import pytest
from django.db.models import OuterRef, QuerySet, Subquery
from django.utils import timezone

from memsite.compiled import CompiledFirst
from memsite.spaces.logic import Role, key_digest
from memsite.spaces.models import ApiToken, Membership
from tests.factories import token_for

pytestmark = pytest.mark.django_db


def tokens(digest: str) -> QuerySet[ApiToken]:
    role = Membership.objects.filter(space_id=OuterRef("space_id"), user_id=OuterRef("user_id")).values("role")[:1]
    with_role = ApiToken.objects.select_related("user", "space").annotate(member_role=Subquery(role))
    return with_role.filter(digest=digest)


def columns(row: object) -> dict[str, object]:
    return {field.attname: getattr(row, field.attname) for field in row._meta.concrete_fields}


@pytest.fixture
def digest(user) -> str:
    return key_digest(token_for(user, role=Role.READER, expires_at=timezone.now() + timedelta(days=3)))


def test_it_gives_the_row_its_queryset_gives(digest):
    found = CompiledFirst(ApiToken, tokens, digest="-")(digest=digest)
    expected = tokens(digest).get()
    assert columns(found) == columns(expected)
    assert columns(found.user) == columns(expected.user) and columns(found.space) == columns(expected.space)
    assert found.member_role == expected.member_role == "editor"
    assert found.expires_at is not None and timezone.is_aware(found.expires_at)  # converted, not the stored text
    assert (found._state.adding, found._state.db) == (False, "default")


def test_no_row_is_none(db):
    assert CompiledFirst(ApiToken, tokens, digest="-")(digest=key_digest("nobody's")) is None


def test_it_compiles_once_and_queries_every_call(digest, compiles, django_assert_num_queries):
    read = CompiledFirst(ApiToken, tokens, digest="-")
    read(digest=digest)
    first = len(compiles)  # the query and its subquery
    assert first > 0
    with django_assert_num_queries(1):
        assert read(digest=digest).digest == digest
    with django_assert_num_queries(1):
        assert read(digest=key_digest("another")) is None
    assert len(compiles) == first


def test_a_placeholder_the_lookup_changes_is_refused(db):
    read = CompiledFirst(ApiToken, lambda name: ApiToken.objects.filter(name__contains=name), name="-")
    with pytest.raises(ValueError, match=r"does not pass \['name'\] as they are"):
        read(name="test")


def test_placeholders_of_one_value_are_refused(db):
    read = CompiledFirst(
        ApiToken, lambda name, prefix: ApiToken.objects.filter(name=name, prefix=prefix), name="-", prefix="-"
    )
    with pytest.raises(ValueError, match="have the same value"):
        read(name="a", prefix="b")


def test_parameters_must_be_the_placeholders(db):
    with pytest.raises(TypeError, match=r"Expected the parameters \['digest'\], got \['key'\]"):
        CompiledFirst(ApiToken, tokens, digest="-")(key="x")
