"""GET /api/nodes/{id}/history/: the writes to a node, newest first, a page at a time; a text
document's version with its diff, and the restore of one. Explained in docs/memory.md."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from memory import selectors, services
from memory.api.http import expected_version, with_etag
from memory.api.nodes import ETAG, IF_MATCH, NODE_ID, TAG, errors
from memory.api.serializers import NodeDetailSerializer
from memory.models import NodeEvent
from memory.selectors import VersionDiff
from memsite.api import JSONParser
from memsite.pagination import CheckedCursorPagination
from memsite.schema import page_parameters
from memsite.serializers import StrictInputSerializer, StrictIntegerField
from memsite.spaces.principals import principal_of

VERSION = OpenApiParameter(
    "version", OpenApiTypes.INT, OpenApiParameter.PATH, description="A version of the document, from 1."
)


class NodeEventSerializer(serializers.Serializer):
    action = serializers.ChoiceField(choices=NodeEvent.Action.choices)
    user = serializers.SerializerMethodField(help_text="Username of who wrote, if anyone did.")
    version_before = serializers.IntegerField(allow_null=True, help_text="Null for a create.")
    version_after = serializers.IntegerField(allow_null=True, help_text="Null for a delete.")
    restored_from = serializers.IntegerField(allow_null=True, help_text="The version a restore brought back.")
    at = serializers.DateTimeField()

    def get_user(self, event: NodeEvent) -> str | None:
        return event.user.username if event.user is not None else None


class NodeEventPageSerializer(serializers.Serializer):
    next = serializers.URLField(allow_null=True, help_text="The next page, or null on the last.")
    previous = serializers.URLField(allow_null=True)
    results = NodeEventSerializer(many=True)


class NodeHistoryPagination(CheckedCursorPagination):
    ordering = "-id"  # the order the writes were made in, newest first


class NodeHistoryApi(APIView):
    OutputSerializer = NodeEventSerializer

    @extend_schema(
        tags=[TAG],
        operation_id="node_history",
        summary="The writes to a node, newest first, a page at a time",
        description="Who created, updated, moved, wrote the content of, restored or deleted the node, "
        "with its version before and after. A deleted node's history stays readable.",
        parameters=[NODE_ID, *page_parameters(NodeHistoryPagination)],
        responses={200: NodeEventPageSerializer, **errors(400, 404)},
    )
    def get(self, request: Request, node_id: str) -> Response:
        paginator = NodeHistoryPagination()
        events = selectors.node_history(space=principal_of(request).space, node_id=node_id)
        page = paginator.paginate_queryset(events, request, view=self)
        return paginator.get_paginated_response(self.OutputSerializer(page, many=True).data)


class NodeVersionSerializer(serializers.Serializer):
    version = serializers.IntegerField()
    name = serializers.CharField()
    description = serializers.CharField(allow_blank=True)
    content = serializers.CharField(allow_blank=True, help_text="The document's text at this version.")
    against = serializers.IntegerField(
        allow_null=True,
        help_text="The version the diff is from: 0 is the empty document before the first. Null when "
        "the version before is no longer kept, and there is no diff.",
    )
    diff = serializers.CharField(
        allow_blank=True,
        help_text="A unified diff of the text from `against` to this version; empty when they read alike.",
    )
    diff_cut = serializers.BooleanField(help_text="The diff is longer than is sent, and was cut.")


def _body(compared: VersionDiff) -> dict:
    shown, against, diff = compared.shown, compared.against, compared.diff
    return {
        "version": shown.version,
        "name": shown.name,
        "description": shown.description,
        "content": shown.text,
        "against": against.version if against is not None else None,
        "diff": diff.unified(f"version {against.version}", f"version {shown.version}") if diff and against else "",
        "diff_cut": diff is not None and (diff.cut or not diff.compared_all),
    }


class NodeVersionApi(APIView):
    class FilterSerializer(serializers.Serializer):
        against = serializers.IntegerField(
            required=False,
            min_value=0,
            max_value=2**31 - 1,
            help_text="The version to diff from; 0 for the empty document. By default the version before.",
        )

        class Meta:
            ref_name = "NodeVersionQuery"

    OutputSerializer = NodeVersionSerializer

    @extend_schema(
        tags=[TAG],
        operation_id="node_version",
        summary="A text document as it was at a version, with a diff",
        description="Its name, description and text at that version, and a unified diff of the text "
        "from another version (the one before, unless `against` says). A document keeps its last "
        "100 versions; another is 404, as is a version of a node that is no text document.",
        parameters=[NODE_ID, VERSION, FilterSerializer, ETAG],
        responses={200: NodeVersionSerializer, **errors(400, 404)},
    )
    def get(self, request: Request, node_id: str, version: int) -> Response:
        query = self.FilterSerializer(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        node = selectors.node_get(space=principal_of(request).space, node_id=node_id)
        compared = selectors.node_version_diff(node=node, version=version, against=query.validated_data.get("against"))
        return with_etag(Response(self.OutputSerializer(_body(compared)).data), node)


class NodeRestoreApi(APIView):
    parser_classes = [JSONParser]  # JSON only, within the default body limit: it carries a version

    class InputSerializer(StrictInputSerializer):
        version = StrictIntegerField(
            required=False,
            min_value=1,
            help_text="The version the document is at, as you read it; if it has changed since, 409.",
        )

        class Meta:
            ref_name = "NodeRestore"

    OutputSerializer = NodeDetailSerializer

    @extend_schema(
        tags=[TAG],
        operation_id="node_restore",
        summary="Restore a version of a text document",
        description="Writes a new version that reads as the one named did: its name, description and "
        "text; no version is rewritten, and the history records a restore. Refused as an edit is. "
        "A document that already reads as that version did is answered as it is, at its version.",
        parameters=[NODE_ID, VERSION, IF_MATCH, ETAG],
        request=InputSerializer,
        responses={200: NodeDetailSerializer, **errors(400, 403, 404, 409, 413)},
    )
    def post(self, request: Request, node_id: str, version: int) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        node = services.node_restore(
            node=selectors.node_get(space=principal_of(request).space, node_id=node_id),
            version=version,
            expected_version=expected_version(request, serializer.validated_data.get("version")),
            by=principal_of(request),
        )
        return with_etag(Response(self.OutputSerializer(node).data), node)
