"""`POST /api/retrieve/`: ranked passages for a query, synchronous and with no LLM. What a
swarm node calls when it wants passages in milliseconds rather than an answer."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from memory import selectors
from memory.api.serializers import HitSerializer, IsoDateField, node_id_field, type_field
from memory.index.expand import EXPAND_TOKENS_HELP, MAX_EXPAND_TOKENS
from memory.index.retrieve import MAX_K, MAX_QUERY_CHARS, PER_NODE_HELP, retrieve
from memory.index.times import AFTER_HELP, BEFORE_HELP
from memory.types import get_type
from memsite.api import BoundedJSONParser
from memsite.errors import InvalidInput
from memsite.schema import refusals
from memsite.serializers import (
    BoundedListField,
    StrictCharField,
    StrictInputSerializer,
    StrictIntegerField,
)
from memsite.spaces.logic import Role
from memsite.spaces.principals import principal_of


class RetrieveOutputSerializer(serializers.Serializer):
    query = serializers.CharField()
    results = HitSerializer(many=True, help_text="Best first.")

    class Meta:
        ref_name = "RetrieveOutput"


class RetrieveApi(APIView):
    parser_classes = [BoundedJSONParser]
    required_role = Role.READER  # a POST for its body's size: it only reads

    class InputSerializer(StrictInputSerializer):
        query = StrictCharField(max_length=MAX_QUERY_CHARS, help_text="What to look for, in words.")
        start = node_id_field(
            required=False, allow_null=True, default=None, help_text="Only this node and its subtree; absent for all."
        )
        k = StrictIntegerField(
            required=False, default=10, min_value=1, max_value=MAX_K, help_text=f"1 to {MAX_K} passages."
        )
        per_node = StrictIntegerField(
            required=False,
            allow_null=True,
            default=None,
            min_value=1,
            max_value=MAX_K,
            help_text=PER_NODE_HELP,
        )
        expand_tokens = StrictIntegerField(
            required=False,
            allow_null=True,
            default=None,
            min_value=1,
            max_value=MAX_EXPAND_TOKENS,
            help_text=EXPAND_TOKENS_HELP,
        )
        types = BoundedListField(
            child=type_field(), required=False, default=list, max_length=16, help_text="Only nodes of these types."
        )
        after = IsoDateField(required=False, allow_null=True, default=None, help_text=AFTER_HELP)
        before = IsoDateField(required=False, allow_null=True, default=None, help_text=BEFORE_HELP)

        class Meta:
            ref_name = "RetrieveInput"

        def validate_types(self, types: list[str]) -> list[str]:
            for name in types:
                try:
                    get_type(name)
                except InvalidInput as exc:
                    raise serializers.ValidationError(exc.message) from None
            return list(dict.fromkeys(types))

    @extend_schema(
        tags=["retrieval"],
        operation_id="retrieve",
        summary="Ranked passages for a query (no LLM)",
        request=InputSerializer,
        responses={200: RetrieveOutputSerializer, **refusals({404: "No such start node."})(400, 404)},
    )
    def post(self, request: Request) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        principal = principal_of(request)
        space = principal.space
        start = selectors.node_get(space=space, node_id=data["start"]) if data["start"] is not None else None
        hits = retrieve(
            query=data["query"],
            by=principal,
            start=start,
            k=data["k"],
            types=data["types"],
            per_node=data["per_node"],
            expand_tokens=data["expand_tokens"],
            after=data["after"],
            before=data["before"],
        )
        return Response({"query": data["query"], "results": HitSerializer(hits, many=True).data})
