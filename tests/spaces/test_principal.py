"""Who a request acts as. A token acts in its space; a session in the space X-Memsite-Space
names, else in `default`, else in its first. A space the caller is not in is a 404, as one that
does not exist; a session in no space is a 403."""

from datetime import timedelta

import pytest
from django.test import Client, RequestFactory
from django.utils import timezone

from memsite.errors import Forbidden, NotFound
from memsite.spaces.logic import Role, key_digest
from memsite.spaces.models import ActedAs, ApiToken, Membership, Space
from memsite.spaces.principals import NOT_A_MEMBER, principal_of, principal_rebuilt, system_principal
from memsite.spaces.selectors import space_default
from memsite.spaces.services import membership_set, token_revoke
from tests.factories import token_for

pytestmark = pytest.mark.django_db


def session_request(user, **headers):
    request = RequestFactory().get("/", headers=headers)
    request.user = user
    return request


@pytest.fixture
def other_space(db) -> Space:
    return Space.objects.create(slug="lab", name="Lab")


def test_a_session_acts_in_the_default_space(user):
    principal = principal_of(session_request(user))
    assert (principal.user, principal.space, principal.role, principal.token) == (user, space_default(), "editor", None)


def test_a_session_acts_in_the_space_the_header_names(user, other_space):
    membership_set(space=other_space, member=user, role=Role.READER)
    principal = principal_of(session_request(user, **{"X-Memsite-Space": "lab"}))
    assert (principal.space, principal.role) == (other_space, Role.READER)


def test_without_the_default_space_a_session_acts_in_its_first(user, other_space):
    Membership.objects.filter(user=user).delete()
    membership_set(space=other_space, member=user, role=Role.OWNER)
    assert principal_of(session_request(user)).space == other_space


@pytest.mark.parametrize("slug", ["lab", "nowhere"])
def test_a_space_the_user_is_not_in_is_not_found_whether_it_exists_or_not(user, other_space, slug):
    with pytest.raises(NotFound) as refused:
        principal_of(session_request(user, **{"X-Memsite-Space": slug}))
    assert refused.value.message == f"No space '{slug}'."


def test_a_session_in_no_space_is_refused(user):
    Membership.objects.filter(user=user).delete()
    with pytest.raises(Forbidden, match="not a member of any space"):
        principal_of(session_request(user))


def test_the_principal_is_resolved_once_a_request(user, django_assert_num_queries):
    request = session_request(user)
    first = principal_of(request)
    with django_assert_num_queries(0):
        assert principal_of(request) is first


def test_a_session_in_no_space_gets_403_on_the_api_and_the_pages(client, user, internal):
    Membership.objects.filter(user=user).delete()
    client.force_login(user)
    for url in ("/api/nodes/roots/", "/memory/"):
        response = client.get(url)
        assert response.status_code == 403 and NOT_A_MEMBER in response.content.decode(), url
    assert client.post("/logout/").status_code == 302  # but they may log out


def test_the_header_over_http(client, user, other_space, internal):
    client.force_login(user)
    assert client.get("/api/nodes/roots/", headers={"X-Memsite-Space": "default"}).status_code == 200
    refused = client.get("/api/nodes/roots/", headers={"X-Memsite-Space": "lab"})
    assert refused.status_code == 404 and refused.json()["detail"] == "No space 'lab'."
    page = client.get("/memory/", headers={"X-Memsite-Space": "lab"})
    assert page.status_code == 404 and page["Content-Type"].startswith("text/plain")


def test_a_token_acts_in_its_own_space_and_no_other(user, other_space, internal):
    membership_set(space=other_space, member=user, role=Role.EDITOR)
    headers = {"Authorization": f"Bearer {token_for(user, role=Role.READER)}"}
    client = Client(headers=headers)
    response = client.get("/api/nodes/roots/")
    assert response.status_code == 200
    principal = principal_of(response.wsgi_request)
    assert (principal.space, principal.role, principal.token.role) == (space_default(), Role.READER, Role.READER)
    assert client.get("/api/nodes/roots/", headers={"X-Memsite-Space": "lab"}).status_code == 404


def test_memsite_itself_acts_as_the_system_principal_of_a_space(other_space):
    principal = system_principal(other_space)
    assert (principal.is_system, principal.user_id, principal.token_id) == (True, None, None)
    assert (principal.space, principal.role, principal.write_under) == (other_space, Role.OWNER, "")


def test_work_that_runs_later_acts_as_the_user_who_asked_with_their_role_now(user, other_space):
    membership_set(space=other_space, member=user, role=Role.EDITOR)
    principal = principal_rebuilt(space=other_space, user_id=user.pk)
    assert (principal.user, principal.role, principal.token, principal.is_system) == (user, Role.EDITOR, None, False)


def test_work_that_runs_later_acts_through_the_token_that_asked(user):
    token_for(user, role=Role.EDITOR, write_under="/a/")
    token = ApiToken.objects.get(user=user)
    principal = principal_rebuilt(space=space_default(), user_id=user.pk, token_id=token.pk)
    assert (principal.token, principal.role, principal.write_under) == (token, Role.EDITOR, "/a/")


def test_work_of_someone_who_can_no_longer_act_there_has_no_principal(user, other_space):
    token_for(user)
    token = ApiToken.objects.get(user=user)
    assert principal_rebuilt(space=other_space, user_id=user.pk) is None  # never a member there
    assert principal_rebuilt(space=other_space, user_id=user.pk, token_id=token.pk) is None  # another space's token
    assert principal_rebuilt(space=space_default(), user_id=10**9) is None  # no such user
    assert principal_rebuilt(space=space_default(), user_id=None) is None  # a user since deleted


def test_work_of_a_token_revoked_or_expired_or_of_a_reader_now_has_no_principal(user):
    revoked, expired = (ApiToken.objects.get(digest=key_digest(token_for(user))) for _ in range(2))
    token_revoke(token=revoked)
    ApiToken.objects.filter(pk=expired.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    for token in (revoked, expired):
        assert principal_rebuilt(space=space_default(), user_id=user.pk, token_id=token.pk) is None
    membership_set(space=space_default(), member=user, role=Role.READER)  # work writes: a reader's cannot run
    assert principal_rebuilt(space=space_default(), user_id=user.pk) is None
    membership_set(space=space_default(), member=user, role=Role.EDITOR)
    type(user).objects.filter(pk=user.pk).update(is_active=False)
    assert principal_rebuilt(space=space_default(), user_id=user.pk) is None


def test_memsites_own_work_is_memsites_however_its_row_was_left(other_space):
    rebuilt = principal_rebuilt(space=other_space, user_id=None, acted_as=ActedAs.SYSTEM)
    assert rebuilt == system_principal(other_space) and rebuilt.acted_as == ActedAs.SYSTEM
