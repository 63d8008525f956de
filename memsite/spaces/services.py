from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Q
from django.utils import timezone

from memsite.errors import Conflict, InvalidInput, ServiceError
from memsite.spaces import selectors
from memsite.spaces.logic import (
    LAST_USED_EVERY,
    SHOWN_PREFIX_CHARS,
    Role,
    key_digest,
    key_new,
    last_use_due,
    role_allows,
    token_refusal,
    write_under_problem,
)
from memsite.spaces.models import ApiToken, Membership, Space
from memsite.spaces.principals import Principal, token_principal


class TokenRefused(ServiceError):
    """A key that authenticates nobody: unknown, revoked, expired, or its member is gone."""

    status = 401


@dataclass(frozen=True)
class NewToken:
    token: ApiToken
    key: str  # shown once: only its digest is kept


def membership_set(*, space: Space, user: AbstractBaseUser, role: str) -> Membership:
    """Make `user` a member of `space` with `role`, or change the role they have there."""
    membership, _ = Membership.objects.update_or_create(space=space, user_id=user.pk, defaults={"role": Role(role)})
    return membership


def token_create(
    *,
    user: AbstractBaseUser,
    name: str,
    space: Space | None = None,
    role: str | None = None,
    write_under: str = "",
    expires_at: datetime | None = None,
) -> NewToken:
    """A token acting for `user` in `space` (the default space if none), with `role` (the
    member's own if none), which may not be above the member's: Conflict (409) otherwise."""
    space = space or selectors.space_default()
    member_role = selectors.membership_role(user=user, space_id=space.pk)
    if member_role is None:
        raise Conflict(f"{user} is not a member of the space '{space.slug}'.")
    try:
        role = Role(role or member_role)
    except ValueError:
        raise InvalidInput(f"No role '{role}'; the roles are {', '.join(Role)}.") from None
    if not role_allows(member_role, role):
        raise Conflict(f"{user} is {member_role} in '{space.slug}': a token of theirs cannot be {role}.")
    if problem := write_under_problem(write_under):
        raise InvalidInput(problem)
    key = key_new()
    token = ApiToken.objects.create(
        space=space,
        user_id=user.pk,
        name=name,
        role=role,
        digest=key_digest(key),
        prefix=key[:SHOWN_PREFIX_CHARS],
        write_under=write_under,
        expires_at=expires_at,
    )
    return NewToken(token, key)


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
