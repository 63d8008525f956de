"""Who acts: a user, or memsite itself, in one space, through a session or a token, with a role
there. Resolved once a request from its token or its session, rebuilt from its row for work that
runs later, and passed as `by=` to every service, check and LLM call; the one place a needed
role is checked."""

from dataclasses import dataclass
from typing import Any

from django.http import HttpRequest
from django.utils import timezone

from memsite.errors import Forbidden, NotFound
from memsite.spaces import selectors
from memsite.spaces.logic import (
    SESSION_SPACE,
    SPACE_HEADER,
    Role,
    manage_refusal,
    role_allows,
    role_lower,
    role_refusal,
    token_refusal,
)
from memsite.spaces.models import ActedAs, ApiToken, Space

NOT_A_MEMBER = "You are not a member of any space; an owner can add you."
CACHED = "memsite_principal"  # the attribute of the request that keeps its principal


@dataclass(frozen=True)
class Principal:
    user: Any  # a user row; None for memsite itself (its own upkeep: descriptions, summaries, demo data)
    space: Space
    role: Role
    write_under: str  # the token's; blank for anywhere (and for sessions)
    token: ApiToken | None  # None for a session

    @property
    def is_system(self) -> bool:
        return self.user is None

    @property
    def acted_as(self) -> ActedAs:
        return ActedAs.SYSTEM if self.is_system else ActedAs.USER

    @property
    def user_id(self) -> int | None:
        return getattr(self.user, "pk", None)

    @property
    def token_id(self) -> int | None:
        return self.token.pk if self.token is not None else None

    @property
    def manage_refusal(self) -> str | None:
        """Why it may not manage the space (members, tokens, settings, deleting it), if it may not."""
        return manage_refusal(
            role=self.role,
            through_token=self.token is not None,
            manage=self.token is not None and self.token.manage,
            write_under=self.write_under,
        )

    @property
    def may_manage(self) -> bool:
        return self.manage_refusal is None


def system_principal(space: Space) -> Principal:
    """memsite itself in `space`: its upkeep writes anywhere and is charged to the space's
    own system budget, not to a member's."""
    return Principal(None, space, Role.OWNER, "", None)


def principal_rebuilt(
    *, space: Space, user_id: int | None, token_id: int | None = None, acted_as: str = ActedAs.USER
) -> Principal | None:
    """The principal that asked for work that runs later, from what its row keeps: memsite's own
    for its own work; else the token's, if one asked; else the user's, with their role in the
    space now. Such work writes and spends: None when the asker can no longer do that there (a
    token revoked or expired, a user gone, inactive or no longer a member, a reader now)."""
    if acted_as == ActedAs.SYSTEM:
        return system_principal(space)
    principal = _token_rebuilt(space, token_id) if token_id is not None else _user_rebuilt(space, user_id)
    if principal is None or not getattr(principal.user, "is_active", False):
        return None
    return principal if role_allows(principal.role, Role.EDITOR) else None


def _token_rebuilt(space: Space, token_id: int) -> Principal | None:
    token = selectors.token_get(token_id=token_id)
    if token is None or token.space_id != space.pk:
        return None
    if token_refusal(revoked_at=token.revoked_at, expires_at=token.expires_at, now=timezone.now()) is not None:
        return None
    return token_principal(token)


def _user_rebuilt(space: Space, user_id: int | None) -> Principal | None:
    user = selectors.user_by_id(user_id=user_id) if user_id is not None else None
    role = selectors.membership_role(member=user, space_id=space.pk) if user is not None else None
    return Principal(user, space, role, "", None) if role is not None else None


def token_principal(token: ApiToken) -> Principal | None:
    """A token's principal, acting with its own role but never above its member's; None when
    its user is no longer a member of its space. A token read by `selectors.token_by_key`
    carries its member's role; any other is looked up."""
    if hasattr(token, "member_role"):
        member_role = Role(token.member_role) if token.member_role is not None else None
    else:
        member_role = selectors.membership_role(member=token.user, space_id=token.space_id)
    if member_role is None:
        return None
    return Principal(token.user, token.space, role_lower(token.role, member_role), token.write_under, token)


def principal_remember(request: object, principal: Principal) -> None:
    setattr(getattr(request, "_request", request), CACHED, principal)


def principal_of(request: object, slug: str | None = None) -> Principal:
    """The principal of an authenticated request (a DRF Request or Django's own). The space
    named by `slug` (a URL's), else by X-Memsite-Space, must be one the principal acts in: 404
    otherwise, as for a space that does not exist. A session without a membership is a 403."""
    http_request: HttpRequest = getattr(request, "_request", request)  # type: ignore[arg-type]
    slug = slug if slug is not None else http_request.headers.get(SPACE_HEADER)
    principal = getattr(http_request, CACHED, None)
    if principal is None:
        principal = _resolve(http_request, slug)
        principal_remember(http_request, principal)
    if slug is not None and slug != principal.space.slug:
        raise NotFound(f"No space '{slug}'.")
    return principal


def principal_in(request: HttpRequest, slug: str) -> Principal:
    """A session's principal in the space `slug` names, which need not be the one it acts in (a
    page about another of the user's spaces): NotFound (404) unless the user is a member there.
    Never kept as the request's principal."""
    return _resolve(request, slug)


def principal_in_space(request: HttpRequest, space: Space) -> Principal | None:
    """A session's principal in `space`, None unless its user is a member there: the admin's,
    which changes rows of every space and judges each by the space it is in."""
    role = selectors.membership_role(member=request.user, space_id=space.pk)
    return Principal(request.user, space, role, "", None) if role is not None else None


def _resolve(request: HttpRequest, slug: str | None) -> Principal:
    token = getattr(request, "auth", None)
    if isinstance(token, ApiToken):
        principal = token_principal(token)
        if principal is None:
            raise Forbidden(NOT_A_MEMBER)
        return principal
    chosen = request.session.get(SESSION_SPACE) if hasattr(request, "session") else None
    membership = selectors.membership_for_session(user=request.user, slug=slug, preferred=chosen)
    if membership is None:
        raise NotFound(f"No space '{slug}'.") if slug is not None else Forbidden(NOT_A_MEMBER)
    return Principal(request.user, membership.space, Role(membership.role), "", None)


def spaces_of(request: object) -> list[tuple[Space, Role]]:
    """The spaces a request acts in, with the role it acts with in each: a token its own space
    only; a session every space its user is a member of (none for a user not yet added)."""
    http_request: HttpRequest = getattr(request, "_request", request)  # type: ignore[arg-type]
    if isinstance(getattr(http_request, "auth", None), ApiToken):
        principal = principal_of(request)
        return [(principal.space, principal.role)]
    return [
        (membership.space, Role(membership.role)) for membership in selectors.memberships_of(user=http_request.user)
    ]


def role_require(principal: Principal, needed: str, *, manages: bool = False) -> None:
    """Forbidden (403), naming what is needed, unless the principal's role allows it. What needs
    an owner manages the space, as what `manages` (a session's own tokens, which any member
    manages) does for a token: a token may do it only with the owner role and the manage
    scope, and never when limited to a folder."""
    if principal.token is not None and (manages or needed == Role.OWNER):
        refusal = principal.manage_refusal
    else:
        refusal = None if role_allows(principal.role, needed) else role_refusal(principal.role, needed)
    if refusal is not None:
        raise Forbidden(refusal)
