"""`POST /api/retrieve/`: ranked passages for a query, synchronous and with no LLM. What a
swarm node calls when it wants passages in milliseconds rather than an answer."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from memory import selectors
from memory.api.http import BoundedJSONParser
from memory.api.serializers import node_id_field, type_field
from memory.index.retrieve import retrieve
from memory.types import get_type
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

MAX_QUERY_CHARS = 2_000
MAX_K = 100


class HitSerializer(serializers.Serializer):
    class ScoresSerializer(serializers.Serializer):
        fulltext = serializers.FloatField(allow_null=True, help_text="Its full-text score, if that ranking found it.")
        vector = serializers.FloatField(allow_null=True, help_text="Its cosine to the query, if that ranking found it.")
        named = serializers.FloatField(
            allow_null=True,
            help_text="Its cosine to the query less the names it says, if the passage is about what the query "
            "names (holds a capitalised word of it, or lies under a node it names).",
        )

        class Meta:
            ref_name = "RetrieveScores"

    node = serializers.CharField(source="node_id")
    path = serializers.CharField(help_text="The node's readable path.")
    type = serializers.CharField()
    name = serializers.CharField()
    kind = serializers.CharField(help_text="label: the node's name and description; content: a piece of its text.")
    start = serializers.IntegerField(help_text="Character offset of the passage in the node's text.")
    end = serializers.IntegerField()
    snippet = serializers.CharField()
    score = serializers.FloatField(help_text="Reciprocal-rank fusion of the three rankings.")
    scores = ScoresSerializer(source="*")

    class Meta:
        ref_name = "RetrieveHit"


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
        types = BoundedListField(
            child=type_field(), required=False, default=list, max_length=16, help_text="Only nodes of these types."
        )

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
        )
        return Response({"query": data["query"], "results": HitSerializer(hits, many=True).data})
