"""The API's OpenAPI schema, shared by every app: the shape of invalid-input errors and of the
refusals of work past a quota (memsite.quotas), and the refusals the framework itself answers on
every operation.
Explained in docs/memsite.md."""

from collections.abc import Callable, Mapping
from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension, OpenApiSerializerExtension
from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, inline_serializer
from rest_framework import serializers
from rest_framework.permissions import AllowAny

from memsite.errors import MAX_ERRORS, MORE_ERRORS
from memsite.spaces.logic import SPACE_HEADER

# The body of a 400 for invalid input: `detail` for a refusal as a whole, otherwise each invalid
# field by name with its messages. A nested object's or a list's errors nest the same way, by
# field name or by position: {"budgets": {"timeout_s": [...]}}, {"questions": {"0": [...]}},
# {"messages": [{}, {"role": [...]}]}, {"messages": {"non_field_errors": [...]}}. At most
# MAX_ERRORS errors are named (memsite.errors.bounded); an object that leaves some out says how
# many in `more_errors`, a list in its last item; a message that echoes its input is cut.
INVALID_INPUT = {
    "type": "object",
    "properties": {
        "detail": {"type": "string"},
        MORE_ERRORS: {
            "type": "array",
            "items": {"type": "string"},
            "description": f"Past the first {MAX_ERRORS} errors: how many more there are, or that the rest "
            "of a list was not checked. Nested objects of errors may have one too.",
        },
    },
    "additionalProperties": {
        "anyOf": [
            {"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "object"}]}},
            {"type": "object"},
        ]
    },
    "example": {"name": ["This field is required."]},
}
REFUSED = inline_serializer("RequestRefused", fields={"detail": serializers.CharField()})
# What the refusals every app answers alike mean; an app names its own 404s, 409s and so on.
COMMON_MEANINGS = {
    400: "Malformed or invalid input; the body names the problem.",
    503: "The task queue is unavailable: nothing was started or changed; try again after Retry-After seconds.",
}


def refusals(meanings: Mapping[int, str], bodies: Mapping[int, Any] | None = None) -> Callable[..., dict]:
    """An `errors(*codes)` for an app's `extend_schema(responses=...)`: each code with its
    meaning (the app's, else COMMON_MEANINGS) and its body (INVALID_INPUT for 400, `bodies`'
    own, else a plain `detail`)."""
    meanings = {**COMMON_MEANINGS, **meanings}
    bodies = {400: INVALID_INPUT, **(bodies or {})}

    def errors(*codes: int) -> dict[int, OpenApiResponse]:
        return {code: OpenApiResponse(bodies.get(code, REFUSED), description=meanings[code]) for code in codes}

    return errors


QUOTA_REFUSED = inline_serializer(
    "QuotaRefused",
    fields={
        "detail": serializers.CharField(),
        "quota": serializers.CharField(
            required=False,
            help_text="The cap reached (its setting, e.g. MEMSITE_QUOTA_SEARCHES), or the budget spent: "
            "daily_llm_budget (the user's, in all their spaces), member_daily_llm_budget (the one the space's "
            "owner set for each member), space_daily_llm_budget, token_daily_llm_budget or "
            "system_daily_llm_budget (memsite's own upkeep in the space).",
        ),
        "cap": serializers.IntegerField(required=False),
        "in_flight": serializers.IntegerField(required=False, help_text="The user's work of that kind now."),
        "calls": serializers.IntegerField(required=False, help_text="LLM calls charged to the user today."),
        "calls_limit": serializers.IntegerField(required=False, allow_null=True, help_text="Null: not bounded."),
        "tokens": serializers.IntegerField(required=False, help_text="Tokens charged to the user today."),
        "tokens_limit": serializers.IntegerField(required=False, allow_null=True, help_text="Null: not bounded."),
        "resets_at": serializers.DateTimeField(required=False, help_text="When the day's budget starts afresh."),
    },
)


def quota_refusals(*, also: str = "") -> dict[int, OpenApiResponse]:
    """The 429 of an operation that starts LLM work, for its `extend_schema(responses=...)`;
    `also` names the operation's other reasons for a 429."""
    return {
        429: OpenApiResponse(
            QUOTA_REFUSED,
            description="Past MEMSITE_API_RATE, past one of the user's caps on work in flight, or with the "
            f"user's daily LLM budget spent{', ' + also if also else ''}; nothing was started. The body says "
            "which, with the numbers, and Retry-After when to try again.",
        )
    }


def page_size_type(maximum: int) -> dict:
    """The schema of a `page_size` query parameter, with the bounds its pagination enforces."""
    return {"type": "integer", "minimum": 1, "maximum": maximum}


def page_parameters(pagination: Any) -> list[OpenApiParameter]:
    """The query parameters of a page of `pagination` (a CheckedCursorPagination class)."""
    return [
        OpenApiParameter("cursor", OpenApiTypes.STR, description="From a page's next/previous link."),
        OpenApiParameter(
            "page_size",
            page_size_type(pagination.max_page_size),
            description=f"1 to {pagination.max_page_size}; the default is {pagination.default_page_size}.",
        ),
    ]


class AutoSchema(SpectacularAutoSchema):
    """Every API operation's schema (DEFAULT_SCHEMA_CLASS), with the refusals DRF answers before
    the view's own code runs added to the responses the view declares: 401 without credentials,
    403 for a role that does not allow it, 404 for a space header naming no space of the caller's,
    429 past the rate limit, 415 for a body whose media type none of the view's parsers reads
    (or that has none), and 413 for a body announced larger than the operation reads
    (memsite/limits.py).

    Added where the responses are mapped rather than in get_response_serializers, which
    @extend_schema replaces with the view's own declaration. Lists of objects (`many=True`)
    also get the bounds they are checked against, which drf-spectacular maps for ListFields
    only."""

    def _map_serializer_field(self, field, direction, bypass_extensions=False):
        schema = super()._map_serializer_field(field, direction, bypass_extensions)
        if isinstance(field, serializers.ListSerializer) and schema.get("type") == "array":
            if field.min_length is not None:
                schema["minItems"] = field.min_length
            if field.max_length is not None:
                schema["maxItems"] = field.max_length
        return schema

    def framework_refusals(self) -> dict[int, OpenApiResponse]:
        refusals = {}
        if not all(isinstance(permission, AllowAny) for permission in self.view.get_permissions()):
            refusals[401] = OpenApiResponse(
                REFUSED, description="No valid token or session; a token's says why (unknown, revoked, expired)."
            )
            refusals[403] = OpenApiResponse(
                REFUSED, description="The role in the space does not allow this; the message names the role needed."
            )
            refusals[404] = OpenApiResponse(
                REFUSED, description=f"No such thing, or no space of the caller's that {SPACE_HEADER} names."
            )
        if self.view.get_throttles():
            refusals[429] = OpenApiResponse(
                REFUSED, description="Past MEMSITE_API_RATE; the Retry-After header says when to try again."
            )
        if self._reads_body() and self.get_request_serializer() is not None and "*/*" not in self.map_parsers():
            refusals[415] = OpenApiResponse(
                REFUSED, description="The body has no Content-Type, or one the operation does not read."
            )
        if self._reads_body():
            refusals[413] = OpenApiResponse(
                REFUSED, description="The Content-Length announces more than the operation reads; nothing is read."
            )
        return refusals

    def _reads_body(self) -> bool:
        return self.method in ("POST", "PUT", "PATCH") or self._delete_input() is not None

    def _delete_input(self) -> Any:
        """The serializer of a DELETE's body, which its view names (`delete_input`): drf-spectacular
        maps no DELETE's body (OpenAPI 3.0 leaves its meaning open), and a space's deletion reads
        one, its slug again to confirm."""
        return getattr(self.view, "delete_input", None) if self.method == "DELETE" else None

    def get_request_serializer(self) -> Any:
        return self._delete_input() or super().get_request_serializer()

    def _get_request_body(self, direction="request"):
        if (serializer := self._delete_input()) is None:
            return super()._get_request_body(direction)
        schema, _ = self._get_request_for_media_type(serializer, direction)
        return {"content": {"application/json": {"schema": schema}}}

    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction)
        for code, refusal in self.framework_refusals().items():
            if str(code) not in responses:
                responses[str(code)] = self._get_response_for_code(refusal, str(code), direction=direction)
        return responses


class StrictInputSerializerExtension(OpenApiSerializerExtension):
    """A StrictInputSerializer refuses fields it does not know: its schema says so
    (`additionalProperties: false`), so that clients and generated requests know it too.
    Registered by being defined: this module is loaded with DEFAULT_SCHEMA_CLASS."""

    target_class = "memsite.serializers.StrictInputSerializer"
    match_subclasses = True

    def map_serializer(self, auto_schema, direction):
        schema = auto_schema._map_serializer(self.target, direction, bypass_extensions=True)
        return {**schema, "additionalProperties": False}


class ApiTokenScheme(OpenApiAuthenticationExtension):
    """The API's tokens (memsite.spaces.api.authentication) among the schema's security schemes,
    and beside them the space header a session may send. The header is documented as a scheme
    of its own that no operation requires: it is optional, and a token acts in its own space
    whatever it says. Registered by being defined, as the extension above."""

    target_class = "memsite.spaces.api.authentication.ApiTokenAuthentication"
    name = ["tokenAuth", "spaceHeader"]

    def get_security_requirement(self, auto_schema):
        return {"tokenAuth": []}

    def get_security_definition(self, auto_schema):
        token = {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": "`Token <key>` or `Bearer <key>`: a key from `manage.py token_create`.",
        }
        space = {
            "type": "apiKey",
            "in": "header",
            "name": SPACE_HEADER,
            "description": "Optional: the slug of the space a session acts in; without it, `default`, else the "
            "user's first space. A token acts in its own space: any other named here is a 404, as is a space "
            "the caller is not a member of.",
        }
        return [token, space]
