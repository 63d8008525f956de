"""GET /api/nodes/{id}/history/: the writes to a node, newest first, a page at a time."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from memory import selectors
from memory.api.nodes import NODE_ID, TAG, errors
from memory.models import NodeEvent
from memsite.pagination import CheckedCursorPagination
from memsite.schema import page_parameters
from memsite.spaces.principals import principal_of


class NodeEventSerializer(serializers.Serializer):
    action = serializers.ChoiceField(choices=NodeEvent.Action.choices)
    user = serializers.SerializerMethodField(help_text="Username of who wrote, if anyone did.")
    version_before = serializers.IntegerField(allow_null=True, help_text="Null for a create.")
    version_after = serializers.IntegerField(allow_null=True, help_text="Null for a delete.")
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
        description="Who created, updated, moved, wrote the content of or deleted the node, with "
        "its version before and after. A deleted node's history stays readable.",
        parameters=[NODE_ID, *page_parameters(NodeHistoryPagination)],
        responses={200: NodeEventPageSerializer, **errors(400, 404)},
    )
    def get(self, request: Request, node_id: str) -> Response:
        paginator = NodeHistoryPagination()
        events = selectors.node_history(space=principal_of(request).space, node_id=node_id)
        page = paginator.paginate_queryset(events, request, view=self)
        return paginator.get_paginated_response(self.OutputSerializer(page, many=True).data)
