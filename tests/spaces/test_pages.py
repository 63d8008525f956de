"""The dashboard's pages of spaces, as a person sees them: the current space named on every
page and switched from the top bar; making a space, also for a user in none; members managed by
owners only; a token's key shown once, an editor's unless asked otherwise, and revoked once its
revoker saw what uses it; the settings, and deleting a space but the default one."""

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from memsite.spaces import services, views
from memsite.spaces.logic import Role
from memsite.spaces.models import ApiToken, Membership, Space
from memsite.spaces.services import membership_set, space_create
from tests.factories import StaffFactory, UserFactory, default_space

pytestmark = pytest.mark.django_db

CURRENT = re.compile(r'class="space-current"[^>]*>([^<]*)<')


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def current_space(response) -> str:
    """The name the top bar shows as the space the dashboard acts in."""
    match = CURRENT.search(response.content.decode())
    assert match is not None, "no current space in the top bar"
    return match.group(1)


def text(response) -> str:
    return response.content.decode()


def outsider():
    person = UserFactory()
    Membership.objects.filter(user=person).delete()
    return person


@pytest.fixture
def owner():
    return StaffFactory(username="olga")


@pytest.fixture
def lab(owner) -> Space:
    return space_create(user=owner, slug="lab", name="The Lab")


# -- the current space and the switcher --------------------------------------------------------


def test_every_page_names_the_current_space_and_the_switcher_switches(owner, lab):
    client = logged_in(owner)
    page = client.get(reverse("agents:agent_list"))
    assert current_space(page) == "Default"
    assert 'value="lab"' in text(page)  # the other space, to switch to

    switched = client.post(reverse("spaces:space_switch"), {"slug": "lab", "next": "/agents/"})
    assert switched.status_code == 302 and switched["Location"] == "/agents/"
    page = client.get("/agents/")
    assert current_space(page) == "The Lab"
    assert current_space(client.get(reverse("memory:browser"))) == "The Lab"
    assert 'value="default"' in text(page)  # and back


def test_switching_to_a_space_one_is_not_a_member_of_is_a_404(owner):
    stranger = UserFactory()
    space_create(user=stranger, slug="theirs", name="Theirs")
    client = logged_in(owner)
    assert client.post(reverse("spaces:space_switch"), {"slug": "theirs"}).status_code == 404
    assert current_space(client.get(reverse("agents:agent_list"))) == "Default"


def test_switching_goes_back_only_to_this_site(owner, lab):
    client = logged_in(owner)
    response = client.post(reverse("spaces:space_switch"), {"slug": "lab", "next": "https://evil.example/"})
    assert response.status_code == 302 and response["Location"] == reverse("home")


def test_the_top_bar_costs_three_queries_at_most(owner, lab, django_assert_max_num_queries):
    client = logged_in(owner)
    client.get(reverse("spaces:space_list"))  # the session is read and the user loaded; then:
    # The session, the user, the memberships listed; the top bar's two, and the questions badge's COUNT.
    with django_assert_max_num_queries(2 + 4):
        client.get(reverse("spaces:space_list"))


# -- spaces ------------------------------------------------------------------------------------


def test_a_user_in_no_space_sees_the_page_and_makes_one():
    person = outsider()
    client = logged_in(person)
    page = client.get(reverse("spaces:space_list"))
    assert page.status_code == 200
    assert "You are in no space yet" in text(page) and "No space yet" in text(page)

    made = client.post(reverse("spaces:space_create"), {"slug": "mine", "name": "Mine"}, follow=True)
    assert made.status_code == 200
    assert current_space(made) == "Mine"
    assert Membership.objects.get(user=person, space__slug="mine").role == Role.OWNER
    assert client.get(reverse("memory:browser")).status_code == 200  # a member now, the pages open


def test_a_taken_slug_is_shown_as_an_error(owner, lab):
    response = logged_in(owner).post(reverse("spaces:space_create"), {"slug": "lab", "name": "Again"})
    assert response.status_code == 409
    assert "The slug &#x27;lab&#x27; is taken" in text(response)
    assert Space.objects.filter(slug="lab").count() == 1


# -- members -----------------------------------------------------------------------------------


def test_an_owner_adds_changes_and_removes_members(owner, lab):
    ada = UserFactory(username="ada")
    client = logged_in(owner)
    url = reverse("spaces:member_set", args=["lab"])
    assert client.post(url, {"username": "ada", "role": "reader"}).status_code == 302
    page = client.get(reverse("spaces:member_list", args=["lab"]))
    assert "ada" in text(page)
    assert client.post(url, {"username": "ada", "role": "editor"}).status_code == 302
    assert Membership.objects.get(space=lab, user=ada).role == Role.EDITOR
    assert client.post(reverse("spaces:member_remove", args=["lab", "ada"])).status_code == 302
    assert not Membership.objects.filter(space=lab, user=ada).exists()


def test_the_last_owner_stays_and_the_page_says_why(owner, lab):
    response = logged_in(owner).post(reverse("spaces:member_remove", args=["lab", "olga"]))
    assert response.status_code == 409
    assert "is the last owner of" in text(response) and 'role="alert"' in text(response)
    assert Membership.objects.get(space=lab, user=owner).role == Role.OWNER


def test_an_unknown_username_is_an_error_on_the_page(owner, lab):
    response = logged_in(owner).post(
        reverse("spaces:member_set", args=["lab"]), {"username": "nobody", "role": "reader"}
    )
    assert response.status_code == 404 and "No user &#x27;nobody&#x27;" in text(response)


def test_a_reader_sees_the_members_but_cannot_manage_them(owner, lab):
    reader = UserFactory(username="rita")
    membership_set(space=lab, member=reader, role=Role.READER)
    client = logged_in(reader)
    page = client.get(reverse("spaces:member_list", args=["lab"]))
    assert page.status_code == 200 and "olga" in text(page)
    assert "Add a member" not in text(page) and "Remove" not in text(page)

    before = list(Membership.objects.filter(space=lab).values_list("user__username", "role"))
    for url, form in (
        (reverse("spaces:member_set", args=["lab"]), {"username": "rita", "role": "owner"}),
        (reverse("spaces:member_remove", args=["lab", "olga"]), {}),
    ):
        response = client.post(url, form)
        assert response.status_code == 403 and "this needs an owner" in text(response)
    assert list(Membership.objects.filter(space=lab).values_list("user__username", "role")) == before
    assert client.get(reverse("spaces:space_settings", args=["lab"])).status_code == 403


def test_the_members_are_paginated(owner, lab, monkeypatch):
    monkeypatch.setattr(views, "MEMBERS_PAGE_SIZE", 2)
    for name in ("ada", "bob"):
        membership_set(space=lab, member=UserFactory(username=name), role=Role.READER)
    client, url = logged_in(owner), reverse("spaces:member_list", args=["lab"])

    first, second = text(client.get(url)), text(client.get(url, {"page": 2}))

    assert "<td>olga</td>" in first and "<td>ada</td>" in first and "<td>bob</td>" not in first
    assert "page 1 of 2" in first and '?page=2">next</a>' in first
    assert "<td>bob</td>" in second and "<td>olga</td>" not in second
    assert "page 2 of 2" in second and '?page=1">previous</a>' in second


def test_another_space_s_pages_are_404s(lab):
    client = logged_in(UserFactory())
    for name in ("member_list", "token_list", "space_settings"):
        assert client.get(reverse(f"spaces:{name}", args=["lab"])).status_code == 404, name
    assert client.post(reverse("spaces:token_create", args=["lab"]), {"name": "x"}).status_code == 404
    assert not ApiToken.objects.filter(space=lab).exists()


# -- tokens ------------------------------------------------------------------------------------


def test_a_key_is_shown_once_and_never_again(owner, lab):
    client = logged_in(owner)
    made = client.post(
        reverse("spaces:token_create", args=["lab"]),
        {"name": "swarm node b", "role": "editor", "write_under": "/swarmstar/nodes/b/", "expires_in_days": "30"},
    )
    assert made.status_code == 200
    key = re.search(r'id="new-key">([^<]+)<', text(made)).group(1)
    assert "It will not be shown again" in text(made)
    assert "no-store" in made["Cache-Control"]
    token = ApiToken.objects.get(space=lab, name="swarm node b")
    assert token.role == Role.EDITOR and token.write_under == "/swarmstar/nodes/b/" and token.expires_at is not None
    assert services.token_authenticate(key=key).space == lab

    listed = client.get(reverse("spaces:token_list", args=["lab"]))
    assert "swarm node b" in text(listed) and token.prefix in text(listed)
    assert key not in text(listed)


def test_a_token_above_the_member_s_role_is_refused(lab):
    reader = UserFactory()
    membership_set(space=lab, member=reader, role=Role.READER)
    response = logged_in(reader).post(reverse("spaces:token_create", args=["lab"]), {"name": "n", "role": "owner"})
    assert response.status_code == 409 and 'id="new-key"' not in text(response)
    assert not ApiToken.objects.filter(space=lab).exists()


def test_members_see_and_revoke_their_own_tokens_and_owners_all(owner, lab):
    editor = UserFactory(username="eddie")
    membership_set(space=lab, member=editor, role=Role.EDITOR)
    own = services.token_create(member=editor, space=lab, name="eddie's").token
    owners = services.token_create(member=owner, space=lab, name="olga's").token
    client = logged_in(editor)
    page = text(client.get(reverse("spaces:token_list", args=["lab"])))
    assert "eddie&#x27;s" in page and "olga&#x27;s" not in page
    assert client.post(reverse("spaces:token_revoke", args=["lab", owners.pk])).status_code == 404
    assert client.post(reverse("spaces:token_revoke", args=["lab", own.pk])).status_code == 302
    owners.refresh_from_db(), own.refresh_from_db()
    assert owners.revoked_at is None and own.revoked_at is not None
    assert "eddie&#x27;s" in text(logged_in(owner).get(reverse("spaces:token_list", args=["lab"])))


def member_choice(response) -> tuple[list[str], str | None]:
    """The usernames the token form offers to make a token for, and the one chosen."""
    select = re.search(r'<select name="user">(.*?)</select>', text(response), re.DOTALL)
    if select is None:
        return [], None
    options = re.findall(r'<option value="([^"]+)"( selected)?>', select.group(1))
    return [value for value, _ in options], next((value for value, chosen in options if chosen), None)


def make_token(client: Client, **form):
    return client.post(reverse("spaces:token_create", args=["lab"]), {"name": "for a node", **form})


def test_an_owner_makes_a_token_for_another_member(owner, lab):
    eddie = UserFactory(username="eddie")
    membership_set(space=lab, member=eddie, role=Role.EDITOR)
    client = logged_in(owner)
    assert member_choice(client.get(reverse("spaces:token_list", args=["lab"]))) == (["eddie", "olga"], "olga")

    made = make_token(client, user="eddie", write_under="/swarmstar/nodes/e/")

    assert made.status_code == 200 and "of eddie</strong>" in text(made)
    key = re.search(r'id="new-key">([^<]+)<', text(made)).group(1)
    token = ApiToken.objects.get(space=lab, name="for a node")
    assert (token.user, token.role, token.write_under) == (eddie, Role.EDITOR, "/swarmstar/nodes/e/")
    assert services.token_authenticate(key=key).user == eddie
    assert member_choice(made) == (["eddie", "olga"], "olga")  # the next one is the owner's again


def test_an_owner_s_own_token_is_the_default(owner, lab):
    made = make_token(logged_in(owner))
    assert made.status_code == 200 and "of olga" not in text(made)
    assert ApiToken.objects.get(space=lab, name="for a node").user == owner


def test_an_owner_s_token_is_an_editor_unless_an_owner_that_manages_is_asked_for(owner, lab):
    client = logged_in(owner)
    assert make_token(client, name="node").status_code == 200
    node = ApiToken.objects.get(space=lab, name="node")
    assert (node.role, node.manage) == (Role.EDITOR, False)
    made = make_token(client, name="admin", role="owner", manage="on")
    assert made.status_code == 200 and "and manages it" in text(made)
    admin = ApiToken.objects.get(space=lab, name="admin")
    assert (admin.role, admin.manage) == (Role.OWNER, True)


def test_the_manage_scope_with_a_folder_is_refused(owner, lab):
    response = make_token(logged_in(owner), role="owner", manage="on", write_under="/swarmstar/nodes/b/")
    assert response.status_code == 422 and "cannot have the manage scope" in text(response)
    assert not ApiToken.objects.filter(space=lab).exists()


def test_only_an_owner_is_offered_the_manage_scope(owner, lab):
    assert 'name="manage"' in text(logged_in(owner).get(reverse("spaces:token_list", args=["lab"])))
    editor = UserFactory()
    membership_set(space=lab, member=editor, role=Role.EDITOR)
    assert 'name="manage"' not in text(logged_in(editor).get(reverse("spaces:token_list", args=["lab"])))


def test_a_token_above_its_member_s_role_is_refused_and_the_choice_kept(owner, lab):
    membership_set(space=lab, member=UserFactory(username="rita"), role=Role.READER)

    response = make_token(logged_in(owner), user="rita", role="editor")

    assert response.status_code == 409 and "rita is reader in &#x27;lab&#x27;" in text(response)
    assert member_choice(response) == (["olga", "rita"], "rita")
    assert not ApiToken.objects.filter(space=lab).exists()


def test_a_non_member_gets_no_token(owner, lab):
    UserFactory(username="stranger")
    response = make_token(logged_in(owner), user="stranger")
    assert response.status_code == 404 and "No member &#x27;stranger&#x27; in &#x27;lab&#x27;" in text(response)
    assert not ApiToken.objects.filter(space=lab).exists()


def test_a_non_owner_has_no_choice_and_makes_tokens_only_for_themselves(owner, lab):
    editor = UserFactory(username="eddie")
    membership_set(space=lab, member=editor, role=Role.EDITOR)
    client = logged_in(editor)
    assert member_choice(client.get(reverse("spaces:token_list", args=["lab"]))) == ([], None)

    refused = make_token(client, user="olga")
    assert refused.status_code == 403 and "this needs an owner" in text(refused)
    assert not ApiToken.objects.filter(space=lab).exists()
    assert make_token(client, user="eddie").status_code == 200  # naming oneself is no choice
    assert ApiToken.objects.get(space=lab).user == editor


def test_revoking_asks_first_naming_the_token_and_its_last_use(owner, lab):
    node = services.token_create(member=owner, space=lab, name="swarm node b").token
    client = logged_in(owner)
    url = reverse("spaces:token_revoke", args=["lab", node.pk])
    listed = text(client.get(reverse("spaces:token_list", args=["lab"])))
    assert f'href="{url}"' in listed and f'action="{url}"' not in listed  # a link to ask, no form that revokes

    asked = client.get(url)
    assert asked.status_code == 200
    assert "Revoke the token 'swarm node b'?" in text(asked)
    assert re.search(r'id="last-used">never used<', text(asked))
    assert f'action="{url}"' in text(asked)
    node.refresh_from_db()
    assert node.revoked_at is None  # asking changes nothing

    used = timezone.now() - timedelta(hours=3)
    ApiToken.objects.filter(pk=node.pk).update(last_used_at=used)
    asked = text(client.get(url))
    assert f'id="last-used">{timezone.localtime(used):%Y-%m-%d %H:%M} (3' in asked
    assert "is refused from its next call on" in asked

    assert client.post(url).status_code == 302
    node.refresh_from_db()
    assert node.revoked_at is not None
    assert "was revoked on" in text(client.get(url)) and f'action="{url}"' not in text(client.get(url))


def test_another_member_s_token_is_not_shown_for_revoking(owner, lab):
    node = services.token_create(member=owner, space=lab, name="olga's node").token
    editor = UserFactory()
    membership_set(space=lab, member=editor, role=Role.EDITOR)
    response = logged_in(editor).get(reverse("spaces:token_revoke", args=["lab", node.pk]))
    assert response.status_code == 404 and "olga" not in text(response)


# -- settings ----------------------------------------------------------------------------------


def test_an_owner_renames_and_sets_caps_blank_being_the_site_s(owner, lab):
    client = logged_in(owner)
    form = {"name": "Lab two", "quota_searches": "2", "llm_daily_calls": "", "member_llm_daily_calls": ""}
    assert client.post(reverse("spaces:space_update", args=["lab"]), form).status_code == 302
    lab.refresh_from_db()
    assert (lab.name, lab.quota_searches, lab.llm_daily_calls) == ("Lab two", 2, None)


def test_a_cap_above_the_site_s_is_shown_and_changes_nothing(owner, lab, settings):
    settings.MEMSITE_QUOTA_SEARCHES = 3
    response = logged_in(owner).post(
        reverse("spaces:space_update", args=["lab"]), {"name": "Renamed", "quota_searches": "4"}
    )
    assert response.status_code == 400 and "at most the site" in text(response)
    lab.refresh_from_db()
    assert (lab.name, lab.quota_searches) == ("The Lab", None)


def test_an_editor_cannot_change_the_settings(lab):
    editor = UserFactory()
    membership_set(space=lab, member=editor, role=Role.EDITOR)
    response = logged_in(editor).post(reverse("spaces:space_update", args=["lab"]), {"name": "Mine"})
    assert response.status_code == 403
    lab.refresh_from_db()
    assert lab.name == "The Lab"


def test_deleting_a_space_needs_its_slug_typed(owner, lab):
    client = logged_in(owner)
    url = reverse("spaces:space_delete", args=["lab"])
    wrong = client.post(url, {"confirm": "la"})
    assert wrong.status_code == 400 and "Type the space&#x27;s slug, lab" in text(wrong)
    assert Space.objects.filter(slug="lab").exists()
    assert client.post(url, {"confirm": "lab"}).status_code == 302
    assert not Space.objects.filter(slug="lab").exists()
    assert current_space(client.get(reverse("agents:agent_list"))) == "Default"


def test_the_default_space_cannot_be_deleted(owner):
    response = logged_in(owner).post(reverse("spaces:space_delete", args=["default"]), {"confirm": "default"})
    assert response.status_code == 409 and "cannot be deleted" in text(response)
    assert default_space().pk is not None and Space.objects.filter(slug="default").exists()


def test_a_token_is_made_with_its_own_daily_budget_and_the_list_shows_it(owner, lab):
    client = logged_in(owner)
    made = make_token(client, llm_daily_calls="40", llm_daily_tokens="")
    assert made.status_code == 200
    token = ApiToken.objects.get(space=lab, name="for a node")
    assert (token.llm_daily_calls, token.llm_daily_tokens) == (40, None)
    row = re.search(rf'<tr id="token-{token.pk}">(.*?)</tr>', text(made), re.DOTALL).group(1)
    assert "<td>40 calls</td>" in row
    too_big = make_token(client, name="huge", llm_daily_tokens=str(2**70))
    assert too_big.status_code == 400 and "llm_daily_tokens must be from 0" in text(too_big)
    assert not ApiToken.objects.filter(space=lab, name="huge").exists()
