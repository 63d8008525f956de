"""The REST API of the memory tree: one view per operation (a URL that serves several methods
has one method per operation). Views only translate HTTP: reads go to `memory.selectors`,
writes to `memory.services`, and refusals come back as `ServiceError`s with their status.
Explained in docs/memory.md."""

import base64
import binascii
from typing import Any

from django.http import HttpResponse, StreamingHttpResponse
from django.urls import reverse
from django.utils.http import content_disposition_header
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
)
from rest_framework import serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from memory import selectors, services
from memory.api.http import (
    AnyAcceptMixin,
    NodeChildrenPagination,
    RawBodyParser,
    archive_body_limit,
    content_body_limit,
    expected_version,
    read_raw_body,
    with_etag,
)
from memory.api.serializers import (
    DATE_HELP,
    IsoDateField,
    NodeDetailSerializer,
    NodePageSerializer,
    NodeSerializer,
    context_field,
    node_id_field,
    type_field,
)
from memory.services.archive_plan import ImportMode
from memory.types import get_type
from memsite.api import BoundedJSONParser, json_body_limit, refuse_longer_than
from memsite.errors import InvalidInput
from memsite.limits import max_body_bytes, wait_slots
from memsite.schema import page_size_type, refusals
from memsite.serializers import (
    BoundedListField,
    StrictBooleanField,
    StrictCharField,
    StrictInputSerializer,
    StrictIntegerField,
)
from memsite.spaces.principals import principal_of

TAG = "nodes"
NODE_ID = OpenApiParameter(
    "node_id", OpenApiTypes.STR, OpenApiParameter.PATH, description="The node's id, `memory_<32 hex>`."
)
IF_MATCH = OpenApiParameter(
    "If-Match",
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    required=False,
    description='The version the node must be at, such as "3" (the ETag of the node); a stale version gets 409.',
)
ETAG = OpenApiParameter(
    "ETag",
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    response=[200],
    description='The node\'s version, such as "3"; send it back as If-Match.',
)


errors = refusals(
    {
        403: "Refused: internal folders are immutable, the token writes elsewhere, or the user lacks the right.",
        404: "No such node.",
        409: "Conflict: a sibling has the name, the version is stale, or a move would make a cycle.",
        411: "The content was sent without a Content-Length.",
        413: "Too large.",
    }
)


class NodeRootsApi(APIView):
    OutputSerializer = NodeSerializer

    @extend_schema(
        tags=[TAG],
        operation_id="node_roots",
        summary="The root nodes: the internal folders",
        responses={200: NodeSerializer(many=True)},
    )
    def get(self, request: Request) -> Response:
        roots = selectors.node_roots(space=principal_of(request).space).select_related("created_by")
        return Response(self.OutputSerializer(roots, many=True, context={"ancestors": []}).data)


def _checked_folder_flag(attrs: dict[str, Any]) -> dict[str, Any]:
    """Seed 000's `is_folder` says again what the type says; a contradiction is refused."""
    is_folder = attrs.pop("is_folder", None)
    attrs.pop("children_ids", None)
    try:
        memory_type = get_type(attrs["type"])
    except InvalidInput:
        return attrs  # the service names the unknown type
    if is_folder is not None and is_folder != memory_type.is_folder:
        kind = "a folder" if memory_type.is_folder else "not a folder"
        raise serializers.ValidationError(
            {"is_folder": [f"The type {memory_type.name!r} is {kind}; is_folder says otherwise."]}
        )
    return attrs


@max_body_bytes(json_body_limit)
class NodeCreateApi(APIView):
    parser_classes = [BoundedJSONParser]

    class InputSerializer(StrictInputSerializer):
        # A field, not the Field attribute of that name: DRF's metaclass takes it off the class.
        parent = node_id_field(help_text="The id of the folder to create the node in.")  # type: ignore[assignment]
        type = type_field()
        name = StrictCharField(trim_whitespace=False, allow_blank=True)
        description = StrictCharField(required=False, default="", allow_blank=True, trim_whitespace=False)
        # A field, not the Field attribute of that name: DRF's metaclass takes it off the class.
        context = context_field(required=False, default=dict)  # type: ignore[assignment]
        content = StrictCharField(
            required=False,
            allow_blank=True,
            trim_whitespace=False,
            help_text="Text content, stored as UTF-8: a document's markdown, or a text project file.",
        )
        content_base64 = StrictCharField(
            required=False,
            allow_blank=True,
            help_text="Binary content in standard base64, for project_file_bytes; not together with `content`.",
        )
        date = IsoDateField(required=False, allow_null=True, default=None, help_text=DATE_HELP)
        # Seed 000's node shape (swarmstar's MemoryMetadata) carries these three too.
        id = StrictCharField(
            required=False,
            allow_null=True,
            max_length=64,
            help_text="The node's id, chosen by the client: `memory_` and 32 hex digits or a "
            "UUID. A taken id is 409. Null or absent: memsite picks one.",
        )
        is_folder = StrictBooleanField(
            required=False,
            allow_null=True,
            help_text="Must agree with the type when given.",
        )
        children_ids = BoundedListField(
            child=StrictCharField(),
            max_length=0,
            required=False,
            allow_null=True,
            error_messages={
                "max_length": "A node is created without children: create each child with this node as its parent."
            },
            help_text="Null or empty: a node is created without children.",
        )

        class Meta:
            ref_name = "NodeCreate"

        def validate_content_base64(self, value: str) -> bytes:
            try:
                return base64.b64decode(value, validate=True)
            except (binascii.Error, ValueError):
                raise serializers.ValidationError("Not valid base64.") from None

        def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
            if "content" in attrs and "content_base64" in attrs:
                raise serializers.ValidationError(
                    {"content_base64": ["Send either `content` or `content_base64`, not both."]}
                )
            if "content" in attrs:
                attrs["content"] = attrs["content"].encode("utf-8")
            elif "content_base64" in attrs:
                attrs["content"] = attrs.pop("content_base64")
            return _checked_folder_flag(attrs)

    OutputSerializer = NodeDetailSerializer

    @extend_schema(
        tags=[TAG],
        operation_id="node_create",
        summary="Create a node",
        request=InputSerializer,
        responses={201: NodeDetailSerializer, **errors(400, 403, 404, 409, 413)},
    )
    def post(self, request: Request) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        node = services.node_create(
            parent=selectors.node_get(space=principal_of(request).space, node_id=data["parent"]),
            type=data["type"],
            name=data["name"],
            description=data["description"],
            context=data["context"],
            content=data.get("content"),
            node_id=data.get("id"),
            date=data["date"],
            by=principal_of(request),
        )
        response = Response(self.OutputSerializer(node).data, status=status.HTTP_201_CREATED)
        response["Location"] = reverse("memory-api:node-detail", kwargs={"node_id": node.pk})
        return with_etag(response, node)


# One URL, three operations: each method is one operation with its own serializers.
@max_body_bytes(json_body_limit)
class NodeDetailApi(APIView):
    parser_classes = [BoundedJSONParser]

    class UpdateInputSerializer(StrictInputSerializer):
        name = StrictCharField(required=False, allow_blank=True, trim_whitespace=False)
        description = StrictCharField(required=False, allow_blank=True, trim_whitespace=False)
        type = type_field(required=False)
        # A field, not the Field attribute of that name: DRF's metaclass takes it off the class.
        context = context_field(required=False)  # type: ignore[assignment]
        date = IsoDateField(required=False, allow_null=True, help_text=f"{DATE_HELP} Null takes the given one away.")
        version = StrictIntegerField(
            required=False,
            min_value=1,
            help_text="The version you read; if the node has changed since, the update gets 409.",
        )

        class Meta:
            ref_name = "NodeUpdate"

        def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
            if not set(attrs) - {"version"}:
                raise serializers.ValidationError(
                    "Nothing to change: send at least one of name, description, type, context, date."
                )
            return attrs

    OutputSerializer = NodeDetailSerializer

    @extend_schema(
        tags=[TAG],
        operation_id="node_read",
        summary="Read a node",
        parameters=[NODE_ID, ETAG],
        responses={200: NodeDetailSerializer, **errors(404)},
    )
    def get(self, request: Request, node_id: str) -> Response:
        node = selectors.node_get(space=principal_of(request).space, node_id=node_id)
        return with_etag(Response(self.OutputSerializer(node).data), node)

    @extend_schema(
        tags=[TAG],
        operation_id="node_update",
        summary="Rename, describe, retype, date or change the context of a node",
        parameters=[NODE_ID, IF_MATCH],
        request=UpdateInputSerializer,
        responses={200: NodeDetailSerializer, **errors(400, 403, 404, 409)},
    )
    def patch(self, request: Request, node_id: str) -> Response:
        serializer = self.UpdateInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        version = expected_version(request, data.pop("version", None))
        node = services.node_update(
            node=selectors.node_get(space=principal_of(request).space, node_id=node_id),
            by=principal_of(request),
            expected_version=version,
            **data,
        )
        return with_etag(Response(self.OutputSerializer(node).data), node)

    @extend_schema(
        tags=[TAG],
        operation_id="node_delete",
        summary="Delete a node and its whole branch",
        parameters=[NODE_ID],
        responses={204: OpenApiResponse(description="Deleted."), **errors(403, 404)},
    )
    def delete(self, request: Request, node_id: str) -> Response:
        services.node_delete(
            node=selectors.node_get(space=principal_of(request).space, node_id=node_id),
            by=principal_of(request),
        )
        return Response(status=status.HTTP_204_NO_CONTENT)


class NodeChildrenApi(APIView):
    OutputSerializer = NodeSerializer

    @extend_schema(
        tags=[TAG],
        operation_id="node_children",
        summary="The children of a node, in order, a page at a time",
        parameters=[
            NODE_ID,
            OpenApiParameter("cursor", OpenApiTypes.STR, description="From a page's next/previous link."),
            OpenApiParameter(
                "page_size",
                page_size_type(NodeChildrenPagination.max_page_size),
                description=f"1 to {NodeChildrenPagination.max_page_size}; "
                "the default is the server's MEMSITE_CHILDREN_PAGE_SIZE.",
            ),
        ],
        responses={200: NodePageSerializer, **errors(400, 404)},
    )
    def get(self, request: Request, node_id: str) -> Response:
        node = selectors.node_get(space=principal_of(request).space, node_id=node_id)
        ancestors = [*selectors.node_ancestors(node=node), node]
        paginator = NodeChildrenPagination()
        page = paginator.paginate_queryset(
            selectors.node_children(node=node).select_related("created_by"), request, view=self
        )
        serializer = self.OutputSerializer(page, many=True, context={"ancestors": ancestors})
        return paginator.get_paginated_response(serializer.data)


class NodeAncestorsApi(APIView):
    OutputSerializer = NodeSerializer

    @extend_schema(
        tags=[TAG],
        operation_id="node_ancestors",
        summary="The ancestors of a node, root first",
        parameters=[NODE_ID],
        responses={200: NodeSerializer(many=True), **errors(404)},
    )
    def get(self, request: Request, node_id: str) -> Response:
        node = selectors.node_get(space=principal_of(request).space, node_id=node_id)
        ancestors = list(selectors.node_ancestors(node=node).select_related("created_by"))
        return Response(self.OutputSerializer(ancestors, many=True, context={"ancestors": ancestors}).data)


@max_body_bytes(json_body_limit)
class NodeMoveApi(APIView):
    parser_classes = [BoundedJSONParser]

    class InputSerializer(StrictInputSerializer):
        # A field, not the Field attribute of that name: DRF's metaclass takes it off the class.
        parent = node_id_field(help_text="The folder to move the node into; it becomes the last child.")  # type: ignore[assignment]

        class Meta:
            ref_name = "NodeMove"

    OutputSerializer = NodeDetailSerializer

    @extend_schema(
        tags=[TAG],
        operation_id="node_move",
        summary="Move a node, with its branch, into another folder",
        parameters=[NODE_ID],
        request=InputSerializer,
        responses={200: NodeDetailSerializer, **errors(400, 403, 404, 409)},
    )
    def post(self, request: Request, node_id: str) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        node = selectors.node_get(space=principal_of(request).space, node_id=node_id)
        new_parent = selectors.node_get(space=principal_of(request).space, node_id=serializer.validated_data["parent"])
        node = services.node_move(node=node, parent=new_parent, by=principal_of(request))
        return with_etag(Response(self.OutputSerializer(node).data), node)


class NodeResolveApi(APIView):
    class FilterSerializer(serializers.Serializer):
        path = StrictCharField(trim_whitespace=False, help_text="Such as /user/user_preferences.md.")

        class Meta:
            ref_name = "NodeResolveQuery"

    OutputSerializer = NodeDetailSerializer

    @extend_schema(
        tags=[TAG],
        operation_id="node_resolve",
        summary="The node at a readable path",
        parameters=[FilterSerializer],
        responses={200: NodeDetailSerializer, **errors(400, 404)},
    )
    def get(self, request: Request) -> Response:
        serializer = self.FilterSerializer(data=request.query_params.dict())
        serializer.is_valid(raise_exception=True)
        node = selectors.node_resolve(space=principal_of(request).space, path=serializer.validated_data["path"])
        return with_etag(Response(self.OutputSerializer(node).data), node)


@max_body_bytes(content_body_limit)
class NodeContentApi(AnyAcceptMixin, APIView):
    parser_classes = [RawBodyParser]
    OutputSerializer = NodeDetailSerializer

    @extend_schema(
        tags=[TAG],
        operation_id="node_content_read",
        summary="Read a node's content as raw bytes",
        description="Documents come as text/markdown, project files as application/octet-stream. "
        "Folders hold no content (400).",
        parameters=[
            NODE_ID,
            ETAG,
            OpenApiParameter(
                "X-Content-SHA256",
                OpenApiTypes.STR,
                OpenApiParameter.HEADER,
                response=[200],
                description="Hex SHA-256 of the content.",
            ),
        ],
        responses={
            (200, "text/markdown"): OpenApiResponse(
                OpenApiTypes.STR,
                description="A document's text as text/markdown (UTF-8); "
                "a project file's bytes as application/octet-stream.",
            ),
            (200, "application/octet-stream"): OpenApiTypes.BINARY,
            **errors(400, 404),
        },
    )
    def get(self, request: Request, node_id: str) -> HttpResponse:
        node = selectors.node_get(space=principal_of(request).space, node_id=node_id)
        content = selectors.node_content_read(node=node)
        response = HttpResponse(content.data, content_type=content.media_type)
        response["X-Content-SHA256"] = content.sha256
        return with_etag(response, node)

    @extend_schema(
        tags=[TAG],
        operation_id="node_content_write",
        summary="Replace a node's content with the raw request body",
        description="The body is stored as it is, whatever its Content-Type. Documents must be "
        "UTF-8 text. Bodies over MEMSITE_MAX_CONTENT_BYTES get 413 before they are read.",
        parameters=[NODE_ID, IF_MATCH],
        request={"*/*": OpenApiTypes.BINARY},
        responses={200: NodeDetailSerializer, **errors(400, 403, 404, 409, 411, 413)},
    )
    def put(self, request: Request, node_id: str) -> Response:
        data = read_raw_body(request)
        node = services.node_content_set(
            node=selectors.node_get(space=principal_of(request).space, node_id=node_id),
            data=data,
            expected_version=expected_version(request),
            by=principal_of(request),
        )
        return with_etag(Response(self.OutputSerializer(node).data), node)


class ProjectExportApi(AnyAcceptMixin, APIView):
    @extend_schema(
        tags=[TAG],
        operation_id="project_export",
        summary="A project's files as a .tar.gz archive",
        description="An attachment named `<project name>.tar.gz`; each file sits at its file_path.",
        parameters=[NODE_ID],
        responses={
            (200, "application/gzip"): OpenApiResponse(OpenApiTypes.BINARY, description="Each file at its file_path."),
            **errors(400, 404),
        },
    )
    def get(self, request: Request, node_id: str) -> StreamingHttpResponse:
        project = selectors.node_get(space=principal_of(request).space, node_id=node_id)
        chunks = wait_slots().streaming(services.project_export(project=project))
        response = StreamingHttpResponse(chunks, content_type="application/gzip")
        # Django gives no header only when it is neither an attachment nor named.
        disposition = content_disposition_header(as_attachment=True, filename=f"{project.name}.tar.gz")
        response["Content-Disposition"] = disposition or "attachment"
        return response


@max_body_bytes(archive_body_limit)
class ProjectImportApi(APIView):
    parser_classes = [MultiPartParser]

    class InputSerializer(StrictInputSerializer):
        archive = serializers.FileField(help_text="A .tar.gz or .zip archive.")
        mode = serializers.ChoiceField(
            choices=ImportMode.values,
            default=ImportMode.FAIL,
            help_text="What becomes of the project's nodes at the archive's paths. fail: a file "
            "the project has is a conflict (409). merge: the project's files at those paths are "
            "updated (a new version where content or mode changed), other nodes kept. replace: "
            "the project's branch becomes the archive's, its other nodes deleted. In fail and "
            "merge, a folder of the project where the archive has a file, or the reverse, is a "
            "409.",
        )

        class Meta:
            ref_name = "ProjectImport"

    class OutputSerializer(serializers.Serializer):
        folders = serializers.IntegerField(help_text="Folders created.")
        files = serializers.IntegerField(help_text="Files created.")
        updated = serializers.IntegerField(help_text="Files whose content or mode changed.")
        deleted = serializers.IntegerField(help_text="Nodes deleted (replace), with those inside.")

        class Meta:
            ref_name = "ProjectImportResult"

    @extend_schema(
        tags=[TAG],
        operation_id="project_import",
        summary="Unpack an archive into a project, or update a project from one",
        description="Folders that exist are reused; `mode` says what becomes of the files and "
        "other nodes the project has. Each file keeps its permission bits (setuid, setgid, sticky "
        "and group or other write dropped). Links, absolute paths, '..', archives over the caps "
        "and imports that would leave the project over them are refused, and then, as on any "
        "failure, the project is left as it was.",
        parameters=[NODE_ID],
        request={"multipart/form-data": InputSerializer},
        responses={201: OutputSerializer, **errors(400, 403, 404, 409, 413)},
    )
    def post(self, request: Request, node_id: str) -> Response:
        project = selectors.node_get(space=principal_of(request).space, node_id=node_id)
        refuse_longer_than(request, archive_body_limit(), "upload")
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        result = services.project_import(
            project=project, archive=data["archive"], mode=data["mode"], by=principal_of(request)
        )
        return Response(self.OutputSerializer(result).data, status=status.HTTP_201_CREATED)
