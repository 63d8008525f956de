import pytest

from tools.logic.openai import function_definition

OBJECT = {"type": "object", "properties": {}}


def test_a_definition_has_openai_s_shape():
    assert function_definition("memory_read", "Reads.", OBJECT) == {
        "type": "function",
        "function": {"name": "memory_read", "description": "Reads.", "parameters": OBJECT},
    }


@pytest.mark.parametrize("name", ["", "memory read", "memory.read", "x" * 65])
def test_a_name_openai_refuses_is_refused(name):
    with pytest.raises(ValueError, match="function name"):
        function_definition(name, "Reads.", OBJECT)


def test_parameters_must_be_an_object_schema():
    with pytest.raises(ValueError, match="object schema"):
        function_definition("memory_read", "Reads.", {"type": "string"})
