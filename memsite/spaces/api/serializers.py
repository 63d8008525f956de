"""What the spaces API answers: a space with the caller's role, a member, a token (never its key
or digest but when it is made), and their pages."""

from typing import Any

from django.conf import settings
from rest_framework import serializers

from memsite.spaces.logic import LLM_BUDGETS, MEMBER_LIMITS, Role, effective_limit
from memsite.spaces.models import Space
from memsite.spaces.services import NewToken


class SpaceSerializer(serializers.Serializer):
    slug = serializers.SlugField()
    name = serializers.CharField()
    role = serializers.ChoiceField(choices=list(Role), help_text="The role the caller acts with there.")

    class Meta:
        ref_name = "Space"

    def to_representation(self, space_role: tuple[Space, Role]) -> dict[str, Any]:
        space, role = space_role
        return {"slug": space.slug, "name": space.name, "role": role}


class SpaceDetailSerializer(SpaceSerializer):
    created_at = serializers.DateTimeField()
    settings = serializers.DictField(
        child=serializers.IntegerField(allow_null=True),
        help_text="What an owner set: each member's caps and daily LLM budget (null: the site's), and the "
        "whole space's daily LLM budget (null: none).",
    )
    limits = serializers.DictField(
        child=serializers.IntegerField(allow_null=True), help_text="What applies: the settings, or the site's."
    )

    class Meta:
        ref_name = "SpaceDetail"

    def to_representation(self, space_role: tuple[Space, Role]) -> dict[str, Any]:
        space, _ = space_role
        chosen = {field: getattr(space, field) for field in (*MEMBER_LIMITS, *LLM_BUDGETS)}
        applied = {
            field: effective_limit(chosen[field], getattr(settings, name)) for field, name in MEMBER_LIMITS.items()
        }
        return {
            **super().to_representation(space_role),
            "created_at": serializers.DateTimeField().to_representation(space.created_at),
            "settings": chosen,
            "limits": {**applied, **{field: chosen[field] for field in LLM_BUDGETS}},
        }


class MemberSerializer(serializers.Serializer):
    username = serializers.CharField(source="user.username")
    role = serializers.ChoiceField(choices=list(Role))
    created_at = serializers.DateTimeField(help_text="When they became a member.")

    class Meta:
        ref_name = "Member"


class TokenSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    prefix = serializers.CharField(help_text="The key's first characters, to tell tokens apart.")
    name = serializers.CharField()
    user = serializers.CharField(source="user.username", help_text="The member it acts for.")
    role = serializers.ChoiceField(
        choices=list(Role), help_text="Its own role; it acts with the lower of it and its member's."
    )
    manage = serializers.BooleanField(
        help_text="The manage scope: with the owner role, it manages the space (members, tokens, settings, "
        "deleting it); an owner's token without it cannot."
    )
    write_under = serializers.CharField(help_text="A tree path its writes are meant to stay under; blank for any.")
    minted_by = serializers.IntegerField(
        source="minted_by_id",
        allow_null=True,
        help_text="The id of the token that made it, whose budgets its spend counts against too; null: made "
        "by a session, the CLI or the admin.",
    )
    expires_at = serializers.DateTimeField(allow_null=True, help_text="Null: it never expires.")
    llm_daily_calls = serializers.IntegerField(
        allow_null=True, help_text="LLM calls the work it asks for may make a day; null: its member's budget alone."
    )
    llm_daily_tokens = serializers.IntegerField(
        allow_null=True, help_text="LLM tokens the work it asks for may spend a day; null: its member's budget alone."
    )
    revoked_at = serializers.DateTimeField(allow_null=True)
    last_used_at = serializers.DateTimeField(allow_null=True, help_text="Noted at most once a minute.")
    created_at = serializers.DateTimeField()

    class Meta:
        ref_name = "Token"


class NewTokenSerializer(TokenSerializer):
    key = serializers.CharField(help_text="The key, shown this once: only its SHA-256 is kept.")

    class Meta:
        ref_name = "NewToken"

    def to_representation(self, made: NewToken) -> dict[str, Any]:
        return {**TokenSerializer(made.token).data, "key": made.key}


class MemberPageSerializer(serializers.Serializer):
    next = serializers.URLField(allow_null=True, help_text="The next page, or null on the last.")
    previous = serializers.URLField(allow_null=True)
    results = MemberSerializer(many=True)

    class Meta:
        ref_name = "MemberPage"


class TokenPageSerializer(serializers.Serializer):
    next = serializers.URLField(allow_null=True, help_text="The next page, or null on the last.")
    previous = serializers.URLField(allow_null=True)
    results = TokenSerializer(many=True)

    class Meta:
        ref_name = "TokenPage"
