"""The dashboard's pages of spaces: the user's spaces and making one, switching the space the
dashboard acts in, a space's members, its tokens and its settings. Reads go to
`memsite.spaces.selectors` and writes to `memsite.spaces.services`, as the API's do.
Explained in docs/spaces.md."""

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import redirect
from django.utils import timezone
from django.utils.cache import add_never_cache_headers
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from memsite.errors import ServiceError
from memsite.pages import form_error, render_page
from memsite.request_types import AuthenticatedHttpRequest
from memsite.spaces import selectors, services
from memsite.spaces.forms import (
    LIMIT_LABELS,
    MemberSetForm,
    SpaceCreateForm,
    SpaceDeleteForm,
    SpaceSettingsForm,
    SpaceSwitchForm,
    TokenCreateForm,
)
from memsite.spaces.logic import (
    LLM_BUDGETS,
    MEMBER_LIMITS,
    SESSION_SPACE,
    Role,
    expiry_of,
    role_needed,
)
from memsite.spaces.middleware import outside_spaces, refusal_response
from memsite.spaces.principals import Principal, principal_in, role_require
from memsite.spaces.services import NewToken

SPACES = "spaces/space_list.html"
MEMBERS = "spaces/members.html"
TOKENS = "spaces/tokens.html"
TOKEN_REVOKE = "spaces/token_revoke.html"
SETTINGS = "spaces/settings.html"
TOKENS_PAGE_SIZE = 50
MEMBERS_PAGE_SIZE = 50
SpacePage = Callable[..., HttpResponse]


def space_page(needed: Role | None = None) -> Callable[[SpacePage], SpacePage]:
    """A page of the space its URL's `slug` names, which need not be the one the dashboard acts
    in: its members' only (anyone else gets a 404, as for no such space), with the role `needed`
    (else what the method needs) checked there, as SpaceRoleMiddleware checks the space acted in.
    The view is given the principal in that space."""

    def mark(view: SpacePage) -> SpacePage:
        @wraps(view)
        def checked(request: AuthenticatedHttpRequest, slug: str, **kwargs: Any) -> HttpResponse:
            try:
                principal = principal_in(request, slug)
                role_require(principal, role_needed(request.method or "GET", needed))
            except ServiceError as refusal:
                return refusal_response(refusal)
            return view(request, principal, **kwargs)

        return outside_spaces(login_required(checked))

    return mark


# -- the user's spaces, making one, switching -----------------------------------------------------


def _spaces_page(
    request: AuthenticatedHttpRequest, form: SpaceCreateForm, *, error: str = "", status: int = 200
) -> HttpResponse:
    context = {"memberships": selectors.memberships_of(user=request.user), "form": form, "error": error}
    return render_page(request, SPACES, context, status=status)


@require_GET
@outside_spaces  # a user in no space yet comes here to make one
@login_required
def space_list(request: AuthenticatedHttpRequest) -> HttpResponse:
    return _spaces_page(request, SpaceCreateForm())


@require_POST
@outside_spaces
@login_required
def space_create(request: AuthenticatedHttpRequest) -> HttpResponse:
    form = SpaceCreateForm(request.POST)
    if not form.is_valid():
        return _spaces_page(request, form, error=form_error(form), status=400)
    try:
        space = services.space_create(user=request.user, **form.cleaned_data)
    except ServiceError as error:
        return _spaces_page(request, form, error=error.message, status=error.status)
    request.session[SESSION_SPACE] = space.slug
    messages.success(request, f"Made the space '{space.name}'; the dashboard acts in it now.")
    return redirect("spaces:space_list")


@require_POST
@outside_spaces  # a member of any space may switch to another of theirs
@login_required
def space_switch(request: AuthenticatedHttpRequest) -> HttpResponse:
    """Act in another of the user's spaces from now on, back on the page they came from."""
    form = SpaceSwitchForm(request.POST)
    if not form.is_valid():
        return HttpResponse(form_error(form), status=400, content_type="text/plain; charset=utf-8")
    membership = selectors.membership_for_session(user=request.user, slug=form.cleaned_data["slug"])
    if membership is None:
        raise Http404("No such space of yours.")
    request.session[SESSION_SPACE] = membership.space.slug
    messages.success(request, f"You act in '{membership.space.name}' now.")
    back = form.cleaned_data["next"]
    if back and url_has_allowed_host_and_scheme(
        back, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return redirect(back)
    return redirect("home")


# -- members -----------------------------------------------------------------------------------


def _members_page(
    request: AuthenticatedHttpRequest, principal: Principal, *, error: str = "", status: int = 200
) -> HttpResponse:
    members = selectors.members(space=principal.space).order_by("pk")
    context = {
        "space": principal.space,
        "role": principal.role,
        "is_owner": principal.may_manage,
        "page": Paginator(members, MEMBERS_PAGE_SIZE).get_page(request.GET.get("page")),
        "roles": list(Role),
        "error": error,
    }
    return render_page(request, MEMBERS, context, status=status)


@require_GET
@space_page()
def member_list(request: AuthenticatedHttpRequest, principal: Principal) -> HttpResponse:
    return _members_page(request, principal)


@require_POST
@space_page(Role.OWNER)
def member_set(request: AuthenticatedHttpRequest, principal: Principal) -> HttpResponse:
    """Add a user by their username with a role, or change a member's role."""
    form = MemberSetForm(request.POST)
    if not form.is_valid():
        return _members_page(request, principal, error=form_error(form), status=400)
    try:
        user = selectors.user_get(username=form.cleaned_data["username"])
        membership = services.membership_set(space=principal.space, member=user, role=form.cleaned_data["role"])
    except ServiceError as error:
        return _members_page(request, principal, error=error.message, status=error.status)
    messages.success(request, f"{membership.user.get_username()} is {membership.role} of '{principal.space.name}'.")
    return redirect("spaces:member_list", slug=principal.space.slug)


@require_POST
@space_page(Role.OWNER)
def member_remove(request: AuthenticatedHttpRequest, principal: Principal, username: str) -> HttpResponse:
    try:
        services.membership_remove(space=principal.space, username=username)
    except ServiceError as error:
        return _members_page(request, principal, error=error.message, status=error.status)
    messages.success(request, f"Removed {username} from '{principal.space.name}'.")
    return redirect("spaces:member_list", slug=principal.space.slug)


# -- tokens ------------------------------------------------------------------------------------


def _tokens_page(
    request: AuthenticatedHttpRequest,
    principal: Principal,
    form: TokenCreateForm,
    *,
    made: NewToken | None = None,
    error: str = "",
    status: int = 200,
) -> HttpResponse:
    tokens = selectors.tokens_seen_by(by=principal)
    is_owner = principal.may_manage
    context = {
        "space": principal.space,
        "is_owner": is_owner,
        # Whom an owner may make a token for: any member (the form chooses the owner).
        "members": selectors.members(space=principal.space).order_by("user__username") if is_owner else None,
        "me": request.user.get_username(),
        "page": Paginator(tokens.order_by("-pk"), TOKENS_PAGE_SIZE).get_page(request.GET.get("page")),
        "form": form,
        "roles": list(Role),
        "made": made,
        "now": timezone.now(),
        "error": error,
    }
    response = render_page(request, TOKENS, context, status=status)
    if made is not None:
        add_never_cache_headers(response)  # the key is shown once: no cache keeps it
    return response


@require_GET
@space_page()
def token_list(request: AuthenticatedHttpRequest, principal: Principal) -> HttpResponse:
    return _tokens_page(request, principal, TokenCreateForm())


@require_POST
@space_page(Role.READER)  # any member makes tokens of their own, none above their role
def token_create(request: AuthenticatedHttpRequest, principal: Principal) -> HttpResponse:
    """Make a token and show its key, on this answer only: for oneself, or for the member an
    owner chose."""
    form = TokenCreateForm(request.POST)
    if not form.is_valid():
        return _tokens_page(request, principal, form, error=form_error(form), status=400)
    options = form.cleaned_data
    expires_at = expiry_of(expires_at=None, expires_in_days=options["expires_in_days"], now=timezone.now())
    try:
        made = services.token_make(
            maker=principal,
            name=options["name"],
            username=options["user"] or None,
            role=options["role"] or None,
            manage=options["manage"],
            write_under=options["write_under"],
            expires_at=expires_at,
            llm_daily_calls=options["llm_daily_calls"],
            llm_daily_tokens=options["llm_daily_tokens"],
        )
    except ServiceError as error:
        return _tokens_page(request, principal, form, error=error.message, status=error.status)
    return _tokens_page(request, principal, TokenCreateForm(), made=made)


@require_http_methods(["GET", "POST"])
@space_page(Role.READER)  # a member revokes their own; an owner any of the space's
def token_revoke(request: AuthenticatedHttpRequest, principal: Principal, token_id: int) -> HttpResponse:
    """Asks first, naming the token and its last use (what may still use it, a swarm node cut
    off at once), then revokes it on the page's POST."""
    try:
        token = selectors.token_seen_by(by=principal, token_id=token_id)
    except ServiceError as error:
        return _tokens_page(request, principal, TokenCreateForm(), error=error.message, status=error.status)
    if request.method == "GET":
        context = {"space": principal.space, "is_owner": principal.may_manage, "token": token}
        return render_page(request, TOKEN_REVOKE, context)
    services.token_revoke(token=token)
    messages.success(request, f"Revoked the token '{token.name}'.")
    return redirect("spaces:token_list", slug=principal.space.slug)


# -- settings ----------------------------------------------------------------------------------


def _settings_page(
    request: AuthenticatedHttpRequest,
    principal: Principal,
    form: SpaceSettingsForm | None = None,
    *,
    error: str = "",
    delete_error: str = "",
    status: int = 200,
) -> HttpResponse:
    space = principal.space
    if form is None:
        fields = ("name", *MEMBER_LIMITS, *LLM_BUDGETS)
        form = SpaceSettingsForm(initial={field: getattr(space, field) for field in fields})
    limits = [
        (form[field], getattr(settings, MEMBER_LIMITS[field]) if field in MEMBER_LIMITS else None)
        for field in LIMIT_LABELS
    ]
    context = {"space": space, "form": form, "limits": limits, "error": error, "delete_error": delete_error}
    return render_page(request, SETTINGS, context, status=status)


@require_GET
@space_page(Role.OWNER)
def space_settings(request: AuthenticatedHttpRequest, principal: Principal) -> HttpResponse:
    return _settings_page(request, principal)


@require_POST
@space_page(Role.OWNER)
def space_update(request: AuthenticatedHttpRequest, principal: Principal) -> HttpResponse:
    """Rename the space and set its caps and budgets; a blank one is the site's."""
    form = SpaceSettingsForm(request.POST)
    if not form.is_valid():
        return _settings_page(request, principal, form, error=form_error(form), status=400)
    try:
        space = services.space_update(space=principal.space, **form.cleaned_data)
    except ServiceError as error:
        return _settings_page(request, principal, form, error=error.message, status=error.status)
    messages.success(request, f"Saved the settings of '{space.name}'.")
    return redirect("spaces:space_settings", slug=space.slug)


@require_POST
@space_page(Role.OWNER)
def space_delete(request: AuthenticatedHttpRequest, principal: Principal) -> HttpResponse:
    """Delete the space with everything in it, once its slug is typed to confirm."""
    space = principal.space
    form = SpaceDeleteForm(request.POST)
    try:
        services.space_delete(space=space, confirm=form.cleaned_data["confirm"] if form.is_valid() else None)
    except ServiceError as error:
        return _settings_page(request, principal, delete_error=error.message, status=error.status)
    messages.success(request, f"Deleted the space '{space.name}' and everything in it.")
    return redirect("spaces:space_list")
