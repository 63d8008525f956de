"""The rules of roles and tokens, without a database."""

from datetime import UTC, datetime, timedelta

import pytest

from memsite.spaces.logic import (
    MANAGE_NEEDS,
    Reach,
    Role,
    expiry_of,
    expiry_problem,
    key_digest,
    key_new,
    last_owner_problem,
    last_use_due,
    manage_refusal,
    manage_scope_problem,
    reach_of_made_token,
    role_allows,
    role_lower,
    role_needed,
    role_refusal,
    space_delete_unconfirmed,
    token_refusal,
    token_role_default,
    wider_than_maker_problem,
    write_under_problem,
    write_under_refusal,
)

NOW = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    "role, needed, allowed",
    [
        (Role.READER, Role.READER, True),
        (Role.READER, Role.EDITOR, False),
        (Role.READER, Role.OWNER, False),
        (Role.EDITOR, Role.READER, True),
        (Role.EDITOR, Role.EDITOR, True),
        (Role.EDITOR, Role.OWNER, False),
        (Role.OWNER, Role.READER, True),
        (Role.OWNER, Role.EDITOR, True),
        (Role.OWNER, Role.OWNER, True),
        (None, Role.READER, False),
    ],
)
def test_each_role_allows_what_the_roles_below_it_allow(role, needed, allowed):
    assert role_allows(role, needed) is allowed


def test_a_token_acts_with_the_lower_of_its_role_and_its_members():
    assert role_lower(Role.OWNER, Role.EDITOR) == Role.EDITOR
    assert role_lower(Role.READER, Role.OWNER) == Role.READER
    assert role_lower("editor", "editor") == Role.EDITOR


def test_a_refusal_names_the_role_needed():
    assert role_refusal(Role.READER, Role.EDITOR) == "Readers can only read; this needs an editor."
    assert role_refusal(Role.EDITOR, Role.OWNER).endswith("; this needs an owner.")


@pytest.mark.parametrize(
    "method, declared, needed",
    [
        ("GET", None, Role.READER),
        ("HEAD", None, Role.READER),
        ("OPTIONS", None, Role.READER),
        ("POST", None, Role.EDITOR),
        ("PUT", None, Role.EDITOR),
        ("PATCH", None, Role.EDITOR),
        ("DELETE", None, Role.EDITOR),
        ("POST", Role.READER, Role.READER),
        ("GET", Role.OWNER, Role.OWNER),
    ],
)
def test_reading_needs_a_reader_and_writing_an_editor_unless_the_view_says_otherwise(method, declared, needed):
    assert role_needed(method, declared) == needed


def test_a_token_is_refused_once_revoked_or_expired():
    assert token_refusal(revoked_at=None, expires_at=None, now=NOW) is None
    assert token_refusal(revoked_at=None, expires_at=NOW + timedelta(seconds=1), now=NOW) is None
    assert token_refusal(revoked_at=None, expires_at=NOW, now=NOW) == "The token has expired."
    assert token_refusal(revoked_at=NOW, expires_at=None, now=NOW) == "The token has been revoked."


def test_a_use_is_noted_at_most_once_a_minute():
    assert last_use_due(None, NOW)
    assert not last_use_due(NOW - timedelta(seconds=59), NOW)
    assert last_use_due(NOW - timedelta(minutes=1), NOW)


def test_keys_are_random_and_kept_as_their_sha256():
    first, second = key_new(), key_new()
    assert first.startswith("ms_") and len(first) > 40 and first != second
    assert key_digest(first) != key_digest(second) and len(key_digest(first)) == 64
    assert key_digest("ms_abc") == "d4ad970b1d69ee97565b18c6274140b237009a31c29b55863013cfdc70b9a996"


@pytest.mark.parametrize("path", ["", "/", "/swarmstar/nodes/a/"])
def test_write_under_is_blank_or_a_path_from_the_root_ending_with_a_slash(path):
    assert write_under_problem(path) is None


@pytest.mark.parametrize("path", ["swarmstar/", "/swarmstar", "nodes"])
def test_other_write_under_paths_are_refused(path):
    assert "write_under" in write_under_problem(path)


SCOPE = "/swarmstar/nodes/a/"
REFUSAL = "This token writes only under /swarmstar/nodes/a/."


@pytest.mark.parametrize("path", ["/swarmstar/nodes/a/notes.md", "/swarmstar/nodes/a/deep/er/x"])
def test_a_token_writes_the_nodes_under_its_folder(path):
    assert write_under_refusal(path, SCOPE) is None


@pytest.mark.parametrize(
    "path", ["/swarmstar/nodes/a", "/swarmstar/nodes", "/swarmstar/nodes/ab/x", "/swarmstar/nodes/b/a/x", "/user/a"]
)
def test_a_token_writes_neither_its_folder_nor_anything_outside_it(path):
    assert write_under_refusal(path, SCOPE) == REFUSAL


@pytest.mark.parametrize("folder", ["/swarmstar/nodes/a", "/swarmstar/nodes/a/deep"])
def test_a_token_puts_nodes_into_its_folder_and_the_folders_under_it(folder):
    assert write_under_refusal(folder, SCOPE, into=True) is None


@pytest.mark.parametrize("folder", ["/swarmstar/nodes", "/swarmstar/nodes/ab", "/swarmstar", "/user"])
def test_a_token_puts_nothing_into_a_folder_outside_it(folder):
    assert write_under_refusal(folder, SCOPE, into=True) == REFUSAL


@pytest.mark.parametrize("path", ["/swarmstar", "/user/notes/plan.md"])
def test_a_blank_or_root_write_under_writes_anywhere(path):
    for write_under in ("", "/"):
        assert write_under_refusal(path, write_under) is None
        assert write_under_refusal(path, write_under, into=True) is None


def test_a_new_token_expires_at_a_moment_or_some_days_from_now_or_never():
    later = NOW + timedelta(hours=1)
    assert expiry_of(expires_at=None, expires_in_days=None, now=NOW) is None
    assert expiry_of(expires_at=later, expires_in_days=None, now=NOW) == later
    assert expiry_of(expires_at=None, expires_in_days=30, now=NOW) == NOW + timedelta(days=30)


def test_an_expiry_is_one_form_and_in_the_future():
    assert expiry_problem(expires_at=NOW + timedelta(seconds=1), expires_in_days=None, now=NOW) is None
    assert expiry_problem(expires_at=None, expires_in_days=1, now=NOW) is None
    assert expiry_problem(expires_at=NOW, expires_in_days=None, now=NOW) == "expires_at must be in the future."
    both = expiry_problem(expires_at=NOW + timedelta(days=1), expires_in_days=1, now=NOW)
    assert both == "Send expires_at or expires_in_days, not both."


@pytest.mark.parametrize(
    "role, new_role, owners, refused",
    [
        (Role.OWNER, None, 1, "cannot be removed"),
        (Role.OWNER, Role.EDITOR, 1, "cannot be made editor"),
        (Role.OWNER, Role.READER, 1, "cannot be made reader"),
        (Role.OWNER, Role.OWNER, 1, None),
        (Role.OWNER, None, 2, None),
        (Role.OWNER, Role.READER, 2, None),
        (Role.EDITOR, None, 1, None),
        (Role.READER, Role.EDITOR, 0, None),
    ],
)
def test_the_last_owner_is_neither_removed_nor_lowered(role, new_role, owners, refused):
    problem = last_owner_problem(username="ada", slug="default", role=role, new_role=new_role, owners=owners)
    if refused is None:
        assert problem is None
    else:
        assert problem.startswith(f"ada is the last owner of 'default' and {refused};")


def test_a_made_token_takes_its_makers_expiry_and_budget_unless_given_its_own():
    maker = Reach(NOW + timedelta(days=1), 3)
    assert reach_of_made_token(Reach(None), maker) == maker
    assert reach_of_made_token(Reach(NOW, 2), maker) == Reach(NOW, 2)


def test_a_made_token_reaches_no_further_than_its_maker():
    maker = Reach(NOW + timedelta(days=1), 3)
    assert wider_than_maker_problem(Reach(NOW, 3), maker) is None
    assert "expire no later" in wider_than_maker_problem(Reach(None, 3), maker)
    assert "no larger one" in wider_than_maker_problem(Reach(NOW, 4), maker)
    assert "no larger one" in wider_than_maker_problem(Reach(NOW, None), maker)  # none where the maker has one
    assert wider_than_maker_problem(Reach(None), Reach(None)) is None


@pytest.mark.parametrize(
    "highest, default", [(Role.OWNER, Role.EDITOR), (Role.EDITOR, Role.EDITOR), (Role.READER, Role.READER)]
)
def test_a_token_is_an_editor_unless_its_member_or_maker_is_lower(highest, default):
    assert token_role_default(highest) == default


@pytest.mark.parametrize(
    "role, through_token, manage, write_under, refused",
    [
        (Role.OWNER, False, False, "", None),
        (Role.EDITOR, False, False, "", "this needs an owner."),
        (Role.OWNER, True, True, "", None),
        (Role.OWNER, True, False, "", "This token needs the manage scope for this"),
        (Role.EDITOR, True, True, "", "Editors can read and write but not manage the space"),
        (Role.READER, True, False, "", "Readers can only read"),
        (Role.OWNER, True, True, "/a/", "A token that writes only under /a/ manages nothing"),
    ],
)
def test_only_an_owners_session_or_an_owner_token_with_manage_manages(
    role, through_token, manage, write_under, refused
):
    refusal = manage_refusal(role=role, through_token=through_token, manage=manage, write_under=write_under)
    if refused is None:
        assert refusal is None
    else:
        assert refused in refusal
        assert not through_token or refusal.endswith(f"{MANAGE_NEEDS}.")


@pytest.mark.parametrize(
    "role, write_under, problem",
    [
        (Role.OWNER, "", None),
        (Role.EDITOR, "", "ask for the role owner, not editor"),
        (Role.OWNER, "/a/", "cannot have the manage scope"),
    ],
)
def test_the_manage_scope_is_for_owner_tokens_without_a_folder(role, write_under, problem):
    found = manage_scope_problem(manage=True, role=role, write_under=write_under)
    assert (found is None) if problem is None else (problem in found)
    assert manage_scope_problem(manage=False, role=role, write_under=write_under) is None


def test_deleting_a_space_is_confirmed_by_its_slug_typed_again():
    assert space_delete_unconfirmed("lab", "lab") is None
    for confirm in (None, "", "la", "LAB"):
        assert space_delete_unconfirmed("lab", confirm) == "Type the space's slug, lab, to confirm deleting it."
