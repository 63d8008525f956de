import pytest
import yaml
from drf_spectacular.validation import validate_schema

pytestmark = pytest.mark.django_db

NODE = "/api/nodes/{node_id}"


@pytest.fixture
def schema(client) -> dict:
    response = client.get("/api/schema/")
    assert response.status_code == 200
    return yaml.safe_load(response.content)


def test_the_schema_is_a_valid_openapi_document(schema):
    validate_schema(schema)
    assert schema["openapi"].startswith("3.")


def test_every_node_operation_is_described(schema):
    operations = {(path, method) for path, item in schema["paths"].items() for method in item if method != "parameters"}
    assert {
        ("/api/nodes/", "post"),
        ("/api/nodes/roots/", "get"),
        ("/api/nodes/resolve/", "get"),
        (f"{NODE}/", "get"),
        (f"{NODE}/", "patch"),
        (f"{NODE}/", "delete"),
        (f"{NODE}/children/", "get"),
        (f"{NODE}/ancestors/", "get"),
        (f"{NODE}/history/", "get"),
        (f"{NODE}/history/{{version}}/", "get"),
        (f"{NODE}/history/{{version}}/restore/", "post"),
        (f"{NODE}/move/", "post"),
        (f"{NODE}/content/", "get"),
        (f"{NODE}/content/", "put"),
        (f"{NODE}/export/", "get"),
        (f"{NODE}/import/", "post"),
    } <= operations


def resolve(schema: dict, ref_or_schema: dict) -> dict:
    ref = ref_or_schema.get("$ref")
    return schema["components"]["schemas"][ref.rsplit("/", 1)[1]] if ref else ref_or_schema


def test_bodies_are_described_as_they_are_sent(schema):
    paths = schema["paths"]
    create = resolve(schema, paths["/api/nodes/"]["post"]["requestBody"]["content"]["application/json"]["schema"])
    assert set(create["properties"]) == {
        "parent",
        "type",
        "name",
        "description",
        "context",
        "content",
        "content_base64",
        "id",
        "is_folder",
        "children_ids",
        "date",
    }
    assert set(create["required"]) == {"parent", "type", "name"}
    assert (create["properties"]["date"]["format"], create["properties"]["date"]["nullable"]) == ("date", True)

    node = resolve(schema, paths["/api/nodes/"]["post"]["responses"]["201"]["content"]["application/json"]["schema"])
    assert {"id", "path", "children_ids", "child_count", "content_size", "version", "created_by"} <= set(
        node["properties"]
    )

    content = paths[f"{NODE}/content/"]
    assert content["get"]["responses"]["200"]["content"]["application/octet-stream"]["schema"]["format"] == "binary"
    assert "text/markdown" in content["get"]["responses"]["200"]["content"]
    assert content["put"]["requestBody"]["content"]["*/*"]["schema"]["format"] == "binary"

    export = paths[f"{NODE}/export/"]["get"]["responses"]["200"]["content"]
    assert export["application/gzip"]["schema"]["format"] == "binary"

    upload = paths[f"{NODE}/import/"]["post"]["requestBody"]["content"]
    form = resolve(schema, upload["multipart/form-data"]["schema"])
    assert form["properties"]["archive"]["format"] == "binary"
    mode = form["properties"]["mode"]
    assert resolve(schema, mode.get("allOf", [mode])[0])["enum"] == ["fail", "merge", "replace"]
    assert mode["default"] == "fail" and form["required"] == ["archive"]
    result = paths[f"{NODE}/import/"]["post"]["responses"]["201"]["content"]["application/json"]
    assert set(resolve(schema, result["schema"])["properties"]) == {"folders", "files", "updated", "deleted"}

    update = paths[f"{NODE}/"]["patch"]
    assert any(parameter["name"] == "If-Match" for parameter in update["parameters"])
    assert update["responses"]["409"]


def test_children_are_documented_as_cursor_pages(schema):
    operation = schema["paths"][f"{NODE}/children/"]["get"]
    assert {parameter["name"] for parameter in operation["parameters"]} >= {"cursor", "page_size"}
    page = resolve(schema, operation["responses"]["200"]["content"]["application/json"]["schema"])
    assert set(page["properties"]) == {"next", "previous", "results"}


def test_the_docs_page_is_served(client):
    response = client.get("/api/docs/")
    assert response.status_code == 200
    assert b"swagger" in response.content.lower()


def test_node_representations_have_exactly_the_documented_fields(api, internal):
    from memory.api.serializers import NodeDetailSerializer, NodeSerializer

    detail = api.get(f"/api/nodes/{internal['user'].pk}/").json()
    children = api.get(f"/api/nodes/{internal['user'].pk}/children/").json()["results"]
    assert set(detail) == set(NodeDetailSerializer().fields)
    assert children and all(set(child) == set(NodeSerializer().fields) for child in children)
