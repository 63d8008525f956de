"""Arguments' JSON Schema as a model is shown it and as the API's schema writes it, and
pydantic's errors nested by field as the API's 400 names them."""

import jsonschema
import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from tools.logic.schemas import NON_FIELD, ToolArgs, examples, field_errors, openapi_3_0, parameters


class Inner(ToolArgs):
    limit: int = Field(ge=1, description="At least one.")


class Outer(ToolArgs):
    model_config = ConfigDict(json_schema_extra={"examples": [{"title": "a", "inner": {"limit": 2}}]})

    title: str = Field(description="A field that is named like the keyword.")
    inner: Inner | None = None
    items: list[str] = Field(default_factory=list, max_length=3)
    who: int | str = 0


def errors_of(model: type[BaseModel], arguments: dict) -> dict:
    with pytest.raises(ValidationError) as raised:
        model.model_validate(arguments)
    return field_errors(raised.value, arguments, list(model.model_fields))


def test_parameters_inline_every_reference_and_drop_titles_and_examples():
    schema = parameters(Outer)

    assert "$defs" not in schema and "$ref" not in str(schema)
    assert "examples" not in schema and "title" not in {key for key in schema if key != "properties"}
    assert set(schema["properties"]) == {"title", "inner", "items", "who"}  # the field named title stays
    assert schema["properties"]["title"] == {"description": "A field that is named like the keyword.", "type": "string"}
    inner = schema["properties"]["inner"]["anyOf"][0]
    assert inner == {
        "additionalProperties": False,
        "properties": {"limit": {"description": "At least one.", "minimum": 1, "type": "integer"}},
        "required": ["limit"],
        "type": "object",
    }
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(examples(Outer)[0], schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"title": "a", "inner": {"limit": 0}}, schema)


def test_openapi_3_0_says_nullable_where_json_schema_says_null():
    schema = openapi_3_0(parameters(Outer))

    assert schema["properties"]["inner"]["nullable"] is True
    assert schema["properties"]["inner"]["type"] == "object" and "anyOf" not in schema["properties"]["inner"]
    assert schema["properties"]["who"] == {"anyOf": [{"type": "integer"}, {"type": "string"}], "default": 0}
    assert '"null"' not in str(schema).replace("'", '"')


def test_errors_name_each_field_nested_as_the_arguments_are():
    errors = errors_of(Outer, {"inner": {"limit": 0, "extra": 1}, "items": ["a", 2], "bogus": True})

    assert errors["title"] == ["Field required"]
    assert errors["inner"] == {"limit": ["Input should be greater than or equal to 1"], "extra": ["Unknown field."]}
    assert errors["items"] == {"1": ["Input should be a valid string"]}
    assert errors["bogus"] == ["Unknown field. Accepted fields: title, inner, items, who."]


def test_a_union_is_named_by_its_field_not_by_its_members():
    errors = errors_of(Outer, {"title": "a", "who": 1.5})

    assert errors == {"who": ["Input should be a valid integer", "Input should be a valid string"]}


def test_a_list_too_long_is_refused_before_its_items_are_checked():
    errors = errors_of(Outer, {"title": "a", "items": ["a"] * 3 + [1] * 1000})

    assert list(errors) == ["items"] and len(errors["items"]) == 1 and "at most 3" in errors["items"][0]


def test_a_whole_object_refused_is_a_non_field_error():
    class Checked(ToolArgs):
        a: int = 0

        @model_validator(mode="after")
        def never(self) -> "Checked":
            raise ValueError("never")

    assert errors_of(Checked, {}) == {NON_FIELD: ["Value error, never"]}


def test_a_field_refused_whole_and_by_part_keeps_both():
    refused = ValidationError.from_exception_data(
        "Outer",
        [
            {
                "type": "too_short",
                "loc": ("items",),
                "input": [],
                "ctx": {"field_type": "List", "min_length": 3, "actual_length": 2},
            },
            {"type": "string_type", "loc": ("items", 1), "input": 2},
        ],
    )
    errors = field_errors(refused, {"items": ["a", 2]}, ["items"])

    assert errors == {
        "items": {
            NON_FIELD: ["List should have at least 3 items after validation, not 2"],
            "1": ["Input should be a valid string"],
        }
    }
