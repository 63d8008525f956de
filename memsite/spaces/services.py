from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from memsite.errors import Conflict, Forbidden, InvalidInput, ServiceError, Unprocessable
from memsite.spaces import selectors
from memsite.spaces.logic import (
    LAST_USED_EVERY,
    LLM_BUDGETS,
    MEMBER_LIMITS,
    SHOWN_PREFIX_CHARS,
    Reach,
    Role,
    key_digest,
    key_new,
    last_owner_problem,
    last_use_due,
    limit_problem,
    manage_scope_problem,
    reach_of_made_token,
    role_allows,
    role_lower,
    space_delete_problem,
    space_delete_unconfirmed,
    spaces_owned_problem,
    token_refusal,
    token_role_default,
    wider_than_maker_problem,
    write_under_problem,
)
from memsite.spaces.models import ApiToken, Membership, Space
from memsite.spaces.principals import Principal, role_require, token_principal
from memsite.spaces.signals import space_deleting


class TokenRefused(ServiceError):
    """A key that authenticates nobody: unknown, revoked, expired, or its member is gone."""

    status = 401


HEADER_KEYWORDS = (b"token", b"bearer")


def header_key(header: bytes) -> str | None:
    """The key of an `Authorization: Token <key>` or `Bearer <key>` header, for token_authenticate
    (the API's and the MCP server's); None for another scheme, or none; TokenRefused (401) for a
    header of these schemes that holds no one key."""
    words = header.split()
    if not words or words[0].lower() not in HEADER_KEYWORDS:
        return None
    if len(words) != 2:
        raise TokenRefused("Invalid token header: one key after the keyword, without spaces.")
    try:
        return words[1].decode("ascii")
    except UnicodeDecodeError:
        raise TokenRefused("Invalid token header: the key is not ASCII.") from None


@dataclass(frozen=True)
class NewToken:
    token: ApiToken
    key: str  # shown once: only its digest is kept


@transaction.atomic
def membership_set(*, space: Space, member: AbstractBaseUser, role: str) -> Membership:
    """Make `member` a member of `space` with `role`, or change the role they have there. The
    space's last owner stays one: Conflict (409)."""
    role = _role(role)
    selectors.spaces_lock(space_ids=[space.pk])  # before the membership: see owner_kept_problem
    current = Membership.objects.select_for_update().filter(space=space, user_id=member.pk).first()
    if current is not None:
        _keep_an_owner(current, role)
    membership, _ = Membership.objects.update_or_create(space=space, user_id=member.pk, defaults={"role": role})
    return membership


@transaction.atomic
def membership_remove(*, space: Space, username: str) -> None:
    """Remove the member `username` from `space` (NotFound, 404, if they are not one), unless
    they are its last owner (Conflict, 409). Their tokens stay, refused while they are not a member."""
    selectors.spaces_lock(space_ids=[space.pk])  # before the membership: see owner_kept_problem
    membership = selectors.membership_get(space=space, username=username, for_update=True)
    _keep_an_owner(membership, None)
    membership.delete()


@transaction.atomic
def memberships_remove(*, memberships: Iterable[Membership]) -> int:
    """Remove these memberships, all or none: Conflict (409) if that would leave a space of
    theirs without an owner. Returns how many were removed."""
    chosen = list(memberships)
    if problem := owner_kept_problem([(membership, None) for membership in chosen]):
        raise Conflict(problem)
    return Membership.objects.filter(pk__in=[membership.pk for membership in chosen]).delete()[0]


def owner_kept_problem(changes: Iterable[tuple[Membership, Role | None]]) -> str | None:
    """Why making these changes together, each membership (as stored) to its new role (None:
    removed), would leave a space without an owner, if it would. The spaces are locked until the
    transaction ends: call it in the one that makes the changes, having locked no membership of
    theirs before (lock the space first), or two owners lowering each other at once deadlock."""
    changes = list(changes)
    # Two owners lowering each other at once must not leave none: the second waits, then counts.
    selectors.spaces_lock(space_ids={membership.space_id for membership, _ in changes})
    owners: dict[int, set[int]] = {}
    for membership, new_role in changes:
        if membership.space_id not in owners:
            owners[membership.space_id] = set(selectors.owner_ids(space=membership.space))
        left = owners[membership.space_id]
        if problem := last_owner_problem(
            username=membership.user.get_username(),
            slug=membership.space.slug,
            role=membership.role,
            new_role=new_role,
            owners=len(left),
        ):
            return problem
        if new_role != Role.OWNER:
            left.discard(membership.pk)
    return None


def _keep_an_owner(membership: Membership, new_role: Role | None) -> None:
    if problem := owner_kept_problem([(membership, new_role)]):
        raise Conflict(problem)


def _role(role: str) -> Role:
    try:
        return Role(role)
    except ValueError:
        raise InvalidInput(f"No role '{role}'; the roles are {', '.join(Role)}.") from None


def token_create(
    *,
    member: AbstractBaseUser,
    name: str,
    space: Space,
    role: str | None = None,
    manage: bool = False,
    write_under: str = "",
    expires_at: datetime | None = None,
    llm_daily_calls: int | None = None,
    llm_daily_tokens: int | None = None,
    maker_role: str | None = None,
    minted_by: ApiToken | None = None,
) -> NewToken:
    """A token acting for `member` in `space`, with `role`, which may
    be above neither the member's nor `maker_role` (the role of whoever makes it, when a request
    does): Conflict (409) otherwise. Without `role`, an editor's, or the highest it may have if
    lower: an owner's token is asked for. The `manage` scope only with the owner role and no
    `write_under` (Unprocessable, 422). Its own daily LLM budget, if given, bounds the work it
    asks for within its member's; `minted_by`, the token that makes it, shares its budgets."""
    member_role = selectors.membership_role(member=member, space_id=space.pk)
    if member_role is None:
        raise Conflict(f"{member} is not a member of the space '{space.slug}'.")
    highest = role_lower(member_role, maker_role) if maker_role is not None else member_role
    role = _role(role) if role else token_role_default(highest)
    if not role_allows(member_role, role):
        raise Conflict(f"{member} is {member_role} in '{space.slug}': a token of theirs cannot be {role}.")
    if not role_allows(highest, role):
        raise Conflict(f"You act as {maker_role} in '{space.slug}': a token you make cannot be {role}.")
    if problem := write_under_problem(write_under):
        raise InvalidInput(problem)
    if problem := manage_scope_problem(manage=manage, role=role, write_under=write_under):
        raise Unprocessable(problem)
    _token_budget_check({"llm_daily_calls": llm_daily_calls, "llm_daily_tokens": llm_daily_tokens})
    key = key_new()
    token = ApiToken.objects.create(
        space=space,
        user_id=member.pk,
        name=name,
        role=role,
        manage=manage,
        digest=key_digest(key),
        prefix=key[:SHOWN_PREFIX_CHARS],
        write_under=write_under,
        expires_at=expires_at,
        llm_daily_calls=llm_daily_calls,
        llm_daily_tokens=llm_daily_tokens,
        minted_by=minted_by,
    )
    return NewToken(token, key)


def token_make(
    *,
    maker: Principal,
    name: str,
    username: str | None = None,
    role: str | None = None,
    manage: bool = False,
    write_under: str = "",
    expires_at: datetime | None = None,
    llm_daily_calls: int | None = None,
    llm_daily_tokens: int | None = None,
) -> NewToken:
    """A token made through the API or the dashboard by `maker`, in their space: for themselves,
    or for the member `username` when `maker` is an owner (Forbidden, 403, otherwise; NotFound,
    404, for one who is not a member). Never above `maker`'s own role; made by a token, never
    reaching further than it (its expiry, its budget), and minted by it: what the
    new one spends counts against the budgets of the token that made it."""
    user = maker.user
    if username is not None and username != getattr(user, "username", None):
        role_require(maker, Role.OWNER)
        user = selectors.membership_get(space=maker.space, username=username).user
    assert isinstance(user, AbstractBaseUser)  # a principal's user is a real one, never the anonymous
    reach = Reach(expires_at, llm_daily_calls, llm_daily_tokens)
    if maker.token is not None:
        reach = reach_of_made_token(reach, _reach_of(maker.token))
        if problem := wider_than_maker_problem(reach, _reach_of(maker.token)):
            raise Forbidden(problem)
    return token_create(
        member=user,
        space=maker.space,
        name=name,
        role=role,
        manage=manage,
        write_under=write_under,
        expires_at=reach.expires_at,
        llm_daily_calls=reach.llm_daily_calls,
        llm_daily_tokens=reach.llm_daily_tokens,
        maker_role=maker.role,
        minted_by=maker.token,
    )


def _token_budget_check(budget: dict[str, int | None]) -> None:
    for field, value in budget.items():
        if problem := limit_problem(field, value):
            raise InvalidInput(problem)


def _reach_of(token: ApiToken) -> Reach:
    return Reach(token.expires_at, token.llm_daily_calls, token.llm_daily_tokens)


def token_budget_set(*, by: Principal, token: ApiToken, **changes: int | None) -> ApiToken:
    """Change the token's own daily LLM budget (`llm_daily_calls`, `llm_daily_tokens`; None: its
    member's alone); a field not given keeps its value. Through a token, never above that
    token's own budget (Forbidden, 403): a key cannot raise its own."""
    if unknown := set(changes) - set(LLM_BUDGETS):
        raise InvalidInput(f"A token's budget has no field {', '.join(sorted(unknown))}.")
    budget = {field: changes.get(field, getattr(token, field)) for field in LLM_BUDGETS}
    _token_budget_check(budget)
    reach = replace(_reach_of(token), **budget)
    if by.token is not None and (problem := wider_than_maker_problem(reach, _reach_of(by.token))):
        raise Forbidden(problem)
    for field, value in budget.items():
        setattr(token, field, value)
    token.save(update_fields=list(LLM_BUDGETS))
    return token


def token_revoke(*, token: ApiToken) -> ApiToken:
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
    return token


def token_authenticate(*, key: str) -> Principal:
    """The principal a key acts as; TokenRefused (401), saying why, if it acts as nobody."""
    token = selectors.token_by_key(key=key)
    if token is None:
        raise TokenRefused("Invalid token.")
    if refusal := token_refusal(revoked_at=token.revoked_at, expires_at=token.expires_at, now=timezone.now()):
        raise TokenRefused(refusal)
    if not token.user.is_active:
        raise TokenRefused("The token's user is inactive.")
    principal = token_principal(token)
    if principal is None:
        raise TokenRefused("The token's user is no longer a member of its space.")
    return principal


def token_use_note(*, token: ApiToken) -> None:
    """Note that the token was used now, if it was last noted a minute ago or more."""
    now = timezone.now()
    if last_use_due(token.last_used_at, now):
        # Conditional: of requests that find it due at once, one writes.
        stale = Q(last_used_at__isnull=True) | Q(last_used_at__lte=now - LAST_USED_EVERY)
        ApiToken.objects.filter(stale, pk=token.pk).update(last_used_at=now)
        token.last_used_at = now


@transaction.atomic
def space_create(*, user: AbstractBaseUser, slug: str, name: str) -> Space:
    """A new space with `user` as its owner: Conflict (409) if the slug is taken or the user
    made as many spaces as one may. Its rooms set it up as they see it made (its folders)."""
    get_user_model().objects.select_for_update().filter(pk=user.pk).exists()  # counts one request at a time
    owned = Space.objects.filter(created_by_id=user.pk).count()
    if problem := spaces_owned_problem(owned, settings.MEMSITE_SPACES_PER_USER):
        raise Conflict(problem)
    if Space.objects.filter(slug=slug).exists():
        raise Conflict(f"The slug '{slug}' is taken; choose another.")
    space = Space.objects.create(slug=slug, name=name, created_by_id=user.pk)
    Membership.objects.create(space=space, user_id=user.pk, role=Role.OWNER)
    return space


def space_update(*, space: Space, **changes: Any) -> Space:
    """Change a space's name and limits. A member's cap above the site's is refused (400) and
    nothing changes."""
    for field, value in changes.items():
        if field in MEMBER_LIMITS or field in LLM_BUDGETS:
            site_cap = getattr(settings, MEMBER_LIMITS[field]) if field in MEMBER_LIMITS else None
            if problem := limit_problem(field, value, site_cap):
                raise InvalidInput(problem)
        elif field != "name":
            raise InvalidInput(f"A space has no setting '{field}'.")
    for field, value in changes.items():
        setattr(space, field, value)
    space.save(update_fields=list(changes))
    return space


@transaction.atomic
def space_delete(*, space: Space, confirm: str | None) -> None:
    """Delete a space with everything in it: its memory, agents, searches, members and tokens,
    once its slug is typed again as `confirm` (InvalidInput, 400, otherwise). The default space
    stays (409)."""
    if problem := space_delete_unconfirmed(space.slug, confirm):
        raise InvalidInput(problem)
    if problem := space_delete_problem(space.slug):
        raise Conflict(problem)
    # The space before its memberships, as the changes of a member take them: no deadlock.
    selectors.spaces_lock(space_ids=[space.pk])
    space_deleting.send(sender=Space, space=space)
    space.delete()
