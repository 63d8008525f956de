from collections.abc import Iterable
from typing import TYPE_CHECKING

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db.models import OuterRef, QuerySet, Subquery

from memsite.compiled import CompiledFirst
from memsite.errors import NotFound
from memsite.spaces.logic import DEFAULT_SPACE, Role, key_digest, role_allows
from memsite.spaces.models import ApiToken, Membership, Space

if TYPE_CHECKING:  # principals are built from these selectors
    from memsite.spaces.principals import Principal


def space_default() -> Space:
    space = Space.objects.filter(slug=DEFAULT_SPACE).first()
    if space is None:
        raise NotFound(f"The space '{DEFAULT_SPACE}' is missing; run the migrations.")
    return space


def space_get_by_slug(*, slug: str) -> Space:
    space = Space.objects.filter(slug=slug).first()
    if space is None:
        raise NotFound(f"No space '{slug}'.")
    return space


def space_get(*, space_id: int) -> Space | None:
    return Space.objects.filter(pk=space_id).first()


def token_get(*, token_id: int) -> ApiToken | None:
    """A token by id, revoked or expired ones included: work it asked for still counts."""
    return ApiToken.objects.filter(pk=token_id).first()


def token_family_ids(*, token_id: int) -> set[int]:
    """The token and every token minted from it, however far down (one query a generation): the
    tokens whose spend its budget counts, so that minting keys resets no budget."""
    family = makers = {token_id}
    while makers:
        makers = set(ApiToken.objects.filter(minted_by_id__in=makers).values_list("pk", flat=True)) - family
        family = family | makers
    return family


def token_makers(*, token: ApiToken) -> list[ApiToken]:
    """The tokens that minted `token`, its maker first, up to one made another way: whose
    budgets its spend counts against too."""
    makers: list[ApiToken] = []
    maker = token.minted_by
    while maker is not None:
        makers.append(maker)
        maker = maker.minted_by
    return makers


def membership_role(*, member: object, space_id: int) -> Role | None:
    """`member`'s role in the space, None if not a member."""
    user_id = _member_id(member)
    if user_id is None:
        return None
    role = Membership.objects.filter(user_id=user_id, space_id=space_id).values_list("role", flat=True).first()
    return Role(role) if role is not None else None


def _memberships(user_id: int) -> QuerySet[Membership]:
    return Membership.objects.select_related("space").filter(user_id=user_id)


# Every page and API call of a session begins here; compiled once (memsite/compiled.py).
_membership_in = CompiledFirst(
    Membership,
    lambda user_id, slug: _memberships(user_id).filter(space__slug=slug),
    user_id=-1,
    slug="-",
)


def membership_for_session(*, user: object, slug: str | None, preferred: str | None = None) -> Membership | None:
    """The membership a logged-in user acts through: of the space `slug` names; else of the
    space they last chose (`preferred`), if they are still a member; else of the default
    space; else their first. One query for a member of the space looked for first."""
    user_id = _member_id(user)
    if user_id is None:
        return None
    if slug is not None:
        return _membership_in(user_id=user_id, slug=slug)
    for choice in dict.fromkeys(filter(None, (preferred, DEFAULT_SPACE))):
        membership = _membership_in(user_id=user_id, slug=choice)
        if membership is not None:
            return membership
    return _memberships(user_id).order_by("pk").first()


def memberships_of(*, user: object) -> QuerySet[Membership]:
    """`user`'s memberships with their spaces, by the spaces' slugs."""
    user_id = _member_id(user)
    if user_id is None:
        return Membership.objects.none()
    return Membership.objects.select_related("space").filter(user_id=user_id).order_by("space__slug")


def members(*, space: Space) -> QuerySet[Membership]:
    return Membership.objects.select_related("user").filter(space=space)


def membership_get(*, space: Space, username: str, for_update: bool = False) -> Membership:
    """The membership of the user named `username` in `space`: NotFound (404) if they are not a member."""
    memberships = Membership.objects.select_related("user")
    if for_update:
        memberships = memberships.select_for_update(of=("self",))
    membership = memberships.filter(space=space, user__username=username).first()
    if membership is None:
        raise NotFound(f"No member '{username}' in '{space.slug}'.")
    return membership


def user_get(*, username: str) -> AbstractBaseUser:
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise NotFound(f"No user '{username}'.")
    return user


def user_by_id(*, user_id: int) -> AbstractBaseUser | None:
    return get_user_model().objects.filter(pk=user_id).first()


def owner_ids(*, space: Space) -> list[int]:
    """The ids of the owners' memberships."""
    return list(Membership.objects.filter(space=space, role=Role.OWNER).values_list("pk", flat=True))


def spaces_lock(*, space_ids: Iterable[int]) -> None:
    """Locks the spaces' rows until the transaction ends, in the order of their ids, so that two
    transactions locking some of the same spaces wait for each other instead of deadlocking.
    Without their keys: rows that refer to a space are still written meanwhile."""
    list(Space.objects.select_for_update(no_key=True).filter(pk__in=space_ids).order_by("pk").values_list("pk"))


def tokens_seen_by(*, by: "Principal") -> QuerySet[ApiToken]:
    """The tokens of `by`'s space that it may see and revoke: an owner's every one, anyone
    else's their own."""
    tokens = ApiToken.objects.select_related("user").filter(space=by.space)
    if role_allows(by.role, Role.OWNER):
        return tokens
    user_id = _member_id(by.user)
    return tokens.filter(user_id=user_id) if user_id is not None else tokens.none()


def token_seen_by(*, by: "Principal", token_id: int) -> ApiToken:
    """One of the tokens `tokens_seen_by` gives: NotFound (404) for any other, whether it exists or not."""
    token = tokens_seen_by(by=by).filter(pk=token_id).first()
    if token is None:
        raise NotFound(f"No token {token_id} in '{by.space.slug}'.")
    return token


def _member_id(user: object) -> int | None:
    """The id of a user who could be a member: None for nobody (the system) and the anonymous."""
    user_id = getattr(user, "pk", None) if getattr(user, "is_authenticated", False) else None
    return user_id if isinstance(user_id, int) else None


def _tokens_by_digest(digest: str) -> QuerySet[ApiToken]:
    role = Membership.objects.filter(space_id=OuterRef("space_id"), user_id=OuterRef("user_id")).values("role")[:1]
    tokens = ApiToken.objects.select_related("user", "space").annotate(member_role=Subquery(role))
    return tokens.filter(digest=digest)


# Every API call a token makes begins here; compiled once (memsite/compiled.py).
_token_by_digest = CompiledFirst(ApiToken, _tokens_by_digest, digest="-")


def token_by_key(*, key: str) -> ApiToken | None:
    """The token with its user, its space and its member's role there (`member_role`, None if
    they are no longer a member), in one query."""
    return _token_by_digest(digest=key_digest(key))
