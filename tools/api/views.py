"""The REST API of the tools: their OpenAI function definitions, and a call of one. Views only
translate HTTP: the registry validates, checks the role and runs (tools/registry.py).
Explained in docs/tools.md."""

import json
from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from memsite.api import MAX_JSON_VALUES, BoundedJSONParser, json_body_limit, json_values_over
from memsite.errors import TooLarge
from memsite.limits import max_body_bytes
from memsite.schema import QUOTA_REFUSED, refusals
from memsite.serializers import StrictInputSerializer
from memsite.spaces.logic import Role
from memsite.spaces.principals import principal_of
from tools.logic.schemas import openapi_3_0
from tools.registry import all_tools, openai_tools, tool_call

TAG = "tools"
JSON_TEXT = "The arguments as JSON text, as a model's tool call gives them."

errors = refusals(
    {
        400: "An unknown tool, or invalid arguments: `arguments` names each invalid one with its messages.",
        403: "A reader called a tool that writes; the message names the role needed. Or a token wrote outside "
        "its folder.",
        404: "The tool's node, agent, graph, search or question is not in the space.",
        409: "The tool's write conflicts: a stale version, a taken name, a question no longer pending.",
        413: "Too large: a document over MEMSITE_MAX_CONTENT_BYTES, or a body over what the call reads.",
        422: "The agent's context does not fit its model's window, or its token budget is spent.",
        429: "Past MEMSITE_API_RATE, a cap on work in flight or the daily LLM budget, or no slot to wait in; "
        "Retry-After says when to try again.",
        502: "The LLM could not answer brain_chat; the user's line is kept.",
    },
    bodies={429: QUOTA_REFUSED},
)


class FunctionSerializer(serializers.Serializer):
    name = serializers.CharField()
    description = serializers.CharField()
    parameters = serializers.DictField(help_text="The arguments' JSON Schema: an object schema, references inlined.")

    class Meta:
        ref_name = "ToolFunction"


class ToolDefinitionSerializer(serializers.Serializer):
    type = serializers.ChoiceField(choices=["function"])
    function = FunctionSerializer()

    class Meta:
        ref_name = "ToolDefinition"


class ToolListSerializer(serializers.Serializer):
    tools = ToolDefinitionSerializer(many=True, help_text="As the Chat Completions API's `tools` takes them.")

    class Meta:
        ref_name = "ToolDefinitions"


def call_body_schema() -> dict[str, Any]:
    """A call's body in the API's schema: one shape a tool, its name and its arguments as its
    parameters say, or as JSON text."""
    shapes = [
        {
            "type": "object",
            "properties": {
                "name": {"type": "string", "enum": [tool.name]},
                "arguments": {"oneOf": [openapi_3_0(tool.parameters()), {"type": "string", "description": JSON_TEXT}]},
            },
            "required": ["name"],
            "additionalProperties": False,
        }
        for tool in all_tools()
    ]
    return {"oneOf": shapes, "description": "A tool's name and its arguments (an object, or its JSON text)."}


class ArgumentsField(serializers.Field):
    """An object, or the JSON text of one (a tool call's `arguments` as OpenAI's models write it)."""

    default_error_messages = {
        "invalid": "Must be an object, or a JSON text of one.",
        "not_json": "Not valid JSON: {problem}.",
    }

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        if isinstance(data, str):
            if json_values_over(data.encode(), MAX_JSON_VALUES):
                raise TooLarge(f"The arguments hold more than {MAX_JSON_VALUES:,} values.")
            try:
                data = json.loads(data)
            except ValueError as exc:
                self.fail("not_json", problem=exc)
            except RecursionError:
                self.fail("not_json", problem="it is nested too deeply")
        if not isinstance(data, dict):
            self.fail("invalid")
        return data

    def to_representation(self, value: Any) -> Any:
        return value


class ToolListApi(APIView):
    OutputSerializer = ToolListSerializer

    @extend_schema(
        tags=[TAG],
        operation_id="tools_openai",
        summary="Every tool as an OpenAI function definition",
        description="Pass `tools` as it is to a Chat Completions request; call what the model asks for with "
        "POST /api/tools/call/.",
        responses={200: ToolListSerializer},
    )
    def get(self, request: Request) -> Response:
        return Response(self.OutputSerializer({"tools": openai_tools()}).data)


@max_body_bytes(json_body_limit)  # memory_write's content may be as large as a node's
class ToolCallApi(APIView):
    parser_classes = [BoundedJSONParser]
    required_role = Role.READER  # the tool's own role is checked by the registry: editors for writes

    class InputSerializer(StrictInputSerializer):
        name = serializers.ChoiceField(
            choices=[tool.name for tool in all_tools()],
            error_messages={"invalid_choice": "No tool named {input!r}; GET /api/tools/openai.json lists them."},
        )
        arguments = ArgumentsField(required=False, default=dict)

    class OutputSerializer(serializers.Serializer):
        name = serializers.CharField()
        result = serializers.DictField(help_text="What the tool answers: docs/tools.md says each tool's.")

        class Meta:
            ref_name = "ToolCallResult"

    @extend_schema(
        tags=[TAG],
        operation_id="tools_call",
        summary="Call a tool",
        description="The tool runs as the caller, in the caller's space, as the REST operation it stands for "
        "would: a reader may call the tools that only read. Refusals are that operation's.",
        request={"application/json": call_body_schema()},
        responses={200: OutputSerializer, **errors(400, 403, 404, 409, 413, 422, 429, 502, 503)},
    )
    def post(self, request: Request) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        name, arguments = serializer.validated_data["name"], serializer.validated_data["arguments"]
        result = tool_call(principal_of(request), name, arguments)
        return Response(self.OutputSerializer({"name": name, "result": result}).data)
