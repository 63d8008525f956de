from django.db.models import Case, IntegerField, Value, When

from memsite.errors import NotFound
from memsite.spaces.logic import DEFAULT_SPACE, Role, key_digest
from memsite.spaces.models import ApiToken, Membership, Space


def space_default() -> Space:
    space = Space.objects.filter(slug=DEFAULT_SPACE).first()
    if space is None:
        raise NotFound(f"The space '{DEFAULT_SPACE}' is missing; run the migrations.")
    return space


def membership_role(*, user: object, space_id: int | None = None) -> Role | None:
    """`user`'s role in the space (the default space if none is named), None if not a member."""
    user_id = _member_id(user)
    if user_id is None:
        return None
    memberships = Membership.objects.filter(user_id=user_id)
    if space_id is not None:
        memberships = memberships.filter(space_id=space_id)
    else:
        memberships = memberships.filter(space__slug=DEFAULT_SPACE)
    role = memberships.values_list("role", flat=True).first()
    return Role(role) if role is not None else None


def membership_for_session(*, user: object, slug: str | None) -> Membership | None:
    """The membership a logged-in user acts through: of the space `slug` names; else of the
    default space; else their first."""
    user_id = _member_id(user)
    if user_id is None:
        return None
    memberships = Membership.objects.select_related("space").filter(user_id=user_id)
    if slug is not None:
        return memberships.filter(space__slug=slug).first()
    default_first = Case(When(space__slug=DEFAULT_SPACE, then=Value(0)), default=Value(1), output_field=IntegerField())
    return memberships.order_by(default_first, "pk").first()


def _member_id(user: object) -> int | None:
    """The id of a user who could be a member: None for nobody (the system) and the anonymous."""
    user_id = getattr(user, "pk", None) if getattr(user, "is_authenticated", False) else None
    return user_id if isinstance(user_id, int) else None


def token_by_key(*, key: str) -> ApiToken | None:
    return ApiToken.objects.select_related("user", "space").filter(digest=key_digest(key)).first()
