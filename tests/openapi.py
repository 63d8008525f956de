"""API responses checked against the OpenAPI schema the site serves at /api/schema/."""

from typing import Any

import jsonschema
import yaml
from django.test import Client


def served_schema() -> dict:
    response = Client().get("/api/schema/")
    assert response.status_code == 200
    return yaml.safe_load(response.content)


def _inlined(node: Any, components: dict) -> Any:
    """The schema with its references inlined, and OpenAPI 3.0's `nullable` in JSON Schema's
    terms (which jsonschema knows; it ignores `nullable`)."""
    if isinstance(node, dict):
        if "$ref" in node:
            return _inlined(components[node["$ref"].rsplit("/", 1)[1]], components)
        inlined = {key: _inlined(value, components) for key, value in node.items() if key != "nullable"}
        return {"anyOf": [inlined, {"type": "null"}]} if node.get("nullable") else inlined
    if isinstance(node, list):
        return [_inlined(item, components) for item in node]
    return node


def assert_documented(response, path: str, method: str, schema: dict | None = None) -> None:
    """The response's status code is one the operation documents, and its JSON body matches
    the schema documented for that code. `path` as in the schema: /api/searches/{search_id}/."""
    schema = schema or served_schema()
    responses = schema["paths"][path][method.lower()]["responses"]
    assert str(response.status_code) in responses, f"{response.status_code} is not documented: {sorted(responses)}"
    documented = responses[str(response.status_code)]["content"]["application/json"]["schema"]
    jsonschema.validate(response.json(), _inlined(documented, schema["components"]["schemas"]))
