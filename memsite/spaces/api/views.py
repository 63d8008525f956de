"""The REST API of spaces: the caller's spaces, making one, its settings, members and tokens. Views only
translate HTTP: reads go to `memsite.spaces.selectors`, writes to `memsite.spaces.services`.
A space the caller does not act in is a 404, as one that does not exist.
Explained in docs/spaces.md."""

from typing import Any

from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from memsite.errors import Forbidden
from memsite.pagination import OrderedPagination
from memsite.request_types import AuthenticatedRequest
from memsite.schema import page_parameters, refusals
from memsite.serializers import StrictBooleanField, StrictCharField, StrictInputSerializer, StrictIntegerField
from memsite.spaces import selectors, services
from memsite.spaces.api.serializers import (
    MemberPageSerializer,
    MemberSerializer,
    NewTokenSerializer,
    SpaceDetailSerializer,
    SpaceSerializer,
    TokenPageSerializer,
    TokenSerializer,
)
from memsite.spaces.logic import MAX_EXPIRES_IN_DAYS, Role, expiry_of, expiry_problem
from memsite.spaces.models import ApiToken
from memsite.spaces.principals import Principal, principal_of, spaces_of

TAG = "spaces"
SLUG = OpenApiParameter(
    "slug", OpenApiTypes.STR, OpenApiParameter.PATH, description="The space's slug, such as `default`."
)
USERNAME = OpenApiParameter("username", OpenApiTypes.STR, OpenApiParameter.PATH, description="The member's username.")
TOKEN_ID = OpenApiParameter("token_id", OpenApiTypes.INT, OpenApiParameter.PATH, description="The token's id.")

errors = refusals(
    {
        403: "The role in the space does not allow this: managing the space (members, settings, deleting it, "
        "another member's tokens) needs an owner; through a token, managing it and its tokens needs the owner "
        "role and the manage scope, which a token limited to a folder never has.",
        404: "No space of the caller's by that slug (a token's is its own), or no such member, user or token "
        "of the caller's there.",
        409: "The space's last owner cannot be removed or lowered; a token cannot be above its member's role "
        "or the role of whoever makes it; a slug is taken, or the caller made as many spaces as one may; the "
        "default space cannot be deleted.",
        422: "The manage scope asked for a token that is not an owner's, or that is limited to a folder.",
    }
)


def _choice(**kwargs: Any) -> serializers.ChoiceField:
    return serializers.ChoiceField(
        choices=list(Role),
        error_messages={"invalid_choice": f"Must be one of {', '.join(Role)}; got {{input!r}}."},
        **kwargs,
    )


class SpaceApi(APIView):
    """A view of one space, named by the URL's `slug`: the request acts there (SpaceRolePermission)."""

    space_url_kwarg = "slug"

    def principal(self) -> Principal:
        return principal_of(self.request, slug=self.kwargs[self.space_url_kwarg])


def _limit_field(**kwargs: Any) -> StrictIntegerField:
    return StrictIntegerField(required=False, allow_null=True, min_value=0, **kwargs)


TOKEN_CALLS_HELP = "LLM calls the work the token asks for may make a day; null: its member's budget alone."
TOKEN_TOKENS_HELP = "LLM tokens the work the token asks for may spend a day; null: its member's budget alone."


class SpaceListApi(APIView):
    # A user in no space yet may list (none) and make one: no role to check.
    permission_classes = [IsAuthenticated]

    class InputSerializer(StrictInputSerializer):
        slug = serializers.SlugField(max_length=50, help_text="Letters, digits, '-' and '_': the space's name in URLs.")
        name = StrictCharField(max_length=200, help_text="What lists show.")

        class Meta:
            ref_name = "SpaceCreate"

    OutputSerializer = SpaceSerializer

    @extend_schema(
        tags=[TAG],
        operation_id="space_list",
        summary="The spaces the caller acts in, with its role in each",
        description="A session: every space its user is a member of. A token: its own space only, with the "
        "role it acts with (the lower of its own and its member's).",
        responses={200: SpaceSerializer(many=True)},
    )
    def get(self, request: Request) -> Response:
        return Response(self.OutputSerializer(spaces_of(request), many=True).data)

    @extend_schema(
        tags=[TAG],
        operation_id="space_create",
        summary="Make a space, with the caller as its owner and its own empty memory",
        description="Sessions only: a token acts in its own space. A taken slug, or more spaces than "
        "MEMSITE_SPACES_PER_USER made by the caller, is a 409.",
        request=InputSerializer,
        responses={201: SpaceDetailSerializer, **errors(400, 403, 409)},
    )
    def post(self, request: AuthenticatedRequest) -> Response:
        if request.auth is not None:
            raise Forbidden("A token acts in its own space only; make spaces while logged in.")
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        space = services.space_create(user=request.user, **serializer.validated_data)
        return Response(SpaceDetailSerializer((space, Role.OWNER)).data, status=status.HTTP_201_CREATED)


class SpaceDeleteSerializer(StrictInputSerializer):
    """Deleting a space, confirmed by its slug typed again."""

    # Left out, the service says what to send: the slug, typed again.
    confirm = StrictCharField(
        required=False,
        allow_blank=True,
        max_length=50,
        help_text="The space's slug again, to confirm deleting everything in it.",
    )

    class Meta:
        ref_name = "SpaceDelete"


class SpaceDetailApi(SpaceApi):
    required_roles = {"PATCH": Role.OWNER, "DELETE": Role.OWNER}  # managing it: a token needs `manage`
    delete_input = SpaceDeleteSerializer  # its body, in the schema (memsite.schema.AutoSchema)

    class InputSerializer(StrictInputSerializer):
        name = StrictCharField(required=False, max_length=200)
        quota_searches = _limit_field(help_text="Searches a member may have in flight; null: the site's.")
        quota_ticks = _limit_field(help_text="Ticks a member may have queued or running; null: the site's.")
        quota_ticking_agents = _limit_field(help_text="Agents a member may set ticking; null: the site's.")
        quota_graph_ops = _limit_field(help_text="Graph operations a member may have queued; null: the site's.")
        member_llm_daily_calls = _limit_field(help_text="LLM calls a member's work may make a day; null: the site's.")
        member_llm_daily_tokens = _limit_field(
            help_text="LLM tokens a member's work may spend a day; null: the site's."
        )
        llm_daily_calls = _limit_field(help_text="LLM calls the whole space may make a day; null: no such budget.")
        llm_daily_tokens = _limit_field(help_text="LLM tokens the whole space may spend a day; null: no such budget.")

        class Meta:
            ref_name = "SpaceUpdate"

    OutputSerializer = SpaceDetailSerializer

    @extend_schema(
        tags=[TAG],
        operation_id="space_get",
        summary="A space: its name, the caller's role, and the caps and budgets its work runs under",
        parameters=[SLUG],
        responses={200: SpaceDetailSerializer, **errors(404)},
    )
    def get(self, request: Request, slug: str) -> Response:
        principal = self.principal()
        return Response(self.OutputSerializer((principal.space, principal.role)).data)

    @extend_schema(
        tags=[TAG],
        operation_id="space_update",
        summary="Rename a space or set its caps and budgets",
        description="Owners only (a token: with the manage scope). A member's cap may be at most the site's; "
        "null gives the site's back.",
        parameters=[SLUG],
        request=InputSerializer,
        responses={200: SpaceDetailSerializer, **errors(400, 403, 404)},
    )
    def patch(self, request: Request, slug: str) -> Response:
        principal = self.principal()
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        space = services.space_update(space=principal.space, **serializer.validated_data)
        return Response(self.OutputSerializer((space, principal.role)).data)

    @extend_schema(
        tags=[TAG],
        operation_id="space_delete",
        summary="Delete a space with everything in it",
        description="Owners only (a token: with the manage scope): its memory, agents, brains, graphs, "
        'searches, members and tokens go. The body names the slug again, `{"confirm": "<slug>"}`: '
        "without it, or another, a 400 that deletes nothing. The default space stays (409).",
        parameters=[SLUG],
        responses={204: OpenApiResponse(description="Deleted."), **errors(400, 403, 404, 409)},
    )
    def delete(self, request: Request, slug: str) -> Response:
        space = self.principal().space
        serializer = SpaceDeleteSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        services.space_delete(space=space, confirm=serializer.validated_data.get("confirm"))
        return Response(status=status.HTTP_204_NO_CONTENT)


class MemberListApi(SpaceApi):
    OutputSerializer = MemberSerializer

    @extend_schema(
        tags=[TAG],
        operation_id="member_list",
        summary="The space's members and their roles, in the order they joined, a page at a time",
        parameters=[SLUG, *page_parameters(OrderedPagination)],
        responses={200: MemberPageSerializer, **errors(400, 404)},
    )
    def get(self, request: Request, slug: str) -> Response:
        paginator = OrderedPagination("id")
        page = paginator.paginate_queryset(selectors.members(space=self.principal().space), request, view=self)
        return paginator.get_paginated_response(self.OutputSerializer(page, many=True).data)


class MemberApi(SpaceApi):
    required_role = Role.OWNER  # managing the space: a token needs `manage`

    class InputSerializer(StrictInputSerializer):
        role = _choice()

        class Meta:
            ref_name = "MemberSet"

    OutputSerializer = MemberSerializer

    @extend_schema(
        tags=[TAG],
        operation_id="member_set",
        summary="Add a user to the space with a role, or change a member's role",
        description="Owners only (a token: with the manage scope). Lowering the last owner is a 409.",
        parameters=[SLUG, USERNAME],
        request=InputSerializer,
        responses={200: MemberSerializer, **errors(400, 403, 404, 409)},
    )
    def put(self, request: Request, slug: str, username: str) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        user = selectors.user_get(username=username)
        membership = services.membership_set(
            space=self.principal().space, member=user, role=serializer.validated_data["role"]
        )
        return Response(self.OutputSerializer(membership).data)

    @extend_schema(
        tags=[TAG],
        operation_id="member_remove",
        summary="Remove a member from the space",
        description="Owners only (a token: with the manage scope). Removing the last owner is a 409. The "
        "member's tokens stay, and are refused while they are not a member.",
        parameters=[SLUG, USERNAME],
        responses={204: OpenApiResponse(description="Removed."), **errors(403, 404, 409)},
    )
    def delete(self, request: Request, slug: str, username: str) -> Response:
        services.membership_remove(space=self.principal().space, username=username)
        return Response(status=status.HTTP_204_NO_CONTENT)


class TokenListApi(SpaceApi):
    # Any member's session may list, make and revoke their own tokens; the views ask for an owner
    # where another member's are concerned. A token makes tokens only if it manages the space.
    required_role = Role.READER
    manages = {"POST"}

    class InputSerializer(StrictInputSerializer):
        name = StrictCharField(max_length=200, help_text="What the token is for, as lists show it.")
        role = _choice(
            required=False,
            help_text="At most the member's role and the caller's; editor by default (or the highest of those, "
            "if lower): an owner's token is asked for.",
        )
        manage = StrictBooleanField(
            required=False,
            default=False,
            help_text="The manage scope, for a token that manages the space (members, tokens, settings, "
            "deleting it): only with the role owner, never with write_under (422).",
        )
        write_under = StrictCharField(
            required=False,
            allow_blank=True,
            max_length=1000,
            help_text="A tree path from the root ending with '/', like /swarmstar/nodes/a/; blank for anywhere.",
        )
        expires_at = serializers.DateTimeField(required=False, help_text="When it expires; in the future.")
        expires_in_days = StrictIntegerField(
            required=False, min_value=1, max_value=MAX_EXPIRES_IN_DAYS, help_text="Or: days until it expires."
        )
        user = StrictCharField(
            required=False, max_length=150, help_text="The member it acts for (owners only); the caller by default."
        )
        llm_daily_calls = _limit_field(help_text=TOKEN_CALLS_HELP)
        llm_daily_tokens = _limit_field(help_text=TOKEN_TOKENS_HELP)

        class Meta:
            ref_name = "TokenCreate"

        def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
            when = {"expires_at": attrs.pop("expires_at", None), "expires_in_days": attrs.pop("expires_in_days", None)}
            now = timezone.now()
            if problem := expiry_problem(**when, now=now):
                raise serializers.ValidationError(problem)
            return {**attrs, "expires_at": expiry_of(**when, now=now)}

    OutputSerializer = TokenSerializer

    @extend_schema(
        tags=[TAG],
        operation_id="token_list",
        summary="The space's tokens, newest first, a page at a time",
        description="An owner sees every token of the space, anyone else their own. Never a key or its digest.",
        parameters=[SLUG, *page_parameters(OrderedPagination)],
        responses={200: TokenPageSerializer, **errors(400, 404)},
    )
    def get(self, request: Request, slug: str) -> Response:
        principal = self.principal()
        tokens = selectors.tokens_seen_by(by=principal)
        paginator = OrderedPagination("-id")
        page = paginator.paginate_queryset(tokens, request, view=self)
        return paginator.get_paginated_response(self.OutputSerializer(page, many=True).data)

    @extend_schema(
        tags=[TAG],
        operation_id="token_create",
        summary="Make a token; its key is in the answer, and only there",
        description="For the caller, or (owners only) for another member named by `user`. Its role is at "
        "most its member's and the caller's: above either, a 409; editor unless one is asked for. Through a "
        "token, only one with the owner role and the manage scope makes tokens; the new one is minted by it "
        "(`minted_by`), reaches no further and shares its budgets.",
        parameters=[SLUG],
        request=InputSerializer,
        responses={201: NewTokenSerializer, **errors(400, 403, 404, 409, 422)},
    )
    def post(self, request: Request, slug: str) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        options = dict(serializer.validated_data)
        made = services.token_make(maker=self.principal(), username=options.pop("user", None), **options)
        return Response(NewTokenSerializer(made).data, status=status.HTTP_201_CREATED)


class TokenApi(SpaceApi):
    required_role = Role.READER  # a member revokes their own tokens; only an owner sees the others
    manages = {"PATCH", "DELETE"}  # through a token, only one that manages the space

    class InputSerializer(StrictInputSerializer):
        llm_daily_calls = _limit_field(help_text=TOKEN_CALLS_HELP)
        llm_daily_tokens = _limit_field(help_text=TOKEN_TOKENS_HELP)

        class Meta:
            ref_name = "TokenBudget"

    OutputSerializer = TokenSerializer

    def _token(self, token_id: int) -> ApiToken:
        principal = self.principal()
        return selectors.token_seen_by(by=principal, token_id=token_id)

    @extend_schema(
        tags=[TAG],
        operation_id="token_budget_set",
        summary="Set a token's own daily LLM budget",
        description="Owners for any token of the space, anyone else for their own; another's is a 404. A "
        "field left out keeps its value; null removes the token's own bound. Through a token, only one with "
        "the owner role and the manage scope, and never above that token's own budget (403).",
        parameters=[SLUG, TOKEN_ID],
        request=InputSerializer,
        responses={200: TokenSerializer, **errors(400, 403, 404)},
    )
    def patch(self, request: Request, slug: str, token_id: int) -> Response:
        token = self._token(token_id)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        changed = services.token_budget_set(by=self.principal(), token=token, **serializer.validated_data)
        return Response(self.OutputSerializer(changed).data)

    @extend_schema(
        tags=[TAG],
        operation_id="token_revoke",
        summary="Revoke a token",
        description="An owner revokes any token of the space, anyone else their own; another's is a 404. "
        "Through a token, only one with the owner role and the manage scope (403). Revoking a revoked token "
        "changes nothing.",
        parameters=[SLUG, TOKEN_ID],
        responses={200: TokenSerializer, **errors(403, 404)},
    )
    def delete(self, request: Request, slug: str, token_id: int) -> Response:
        return Response(self.OutputSerializer(services.token_revoke(token=self._token(token_id))).data)
