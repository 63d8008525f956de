"""The shape of OpenAI's function calling: a tool's definition as the Chat Completions API's
`tools` list takes it."""

import re
from typing import Any

# What OpenAI accepts as a function's name.
FUNCTION_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")


def function_definition(name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
    """One entry of `tools`: {"type": "function", "function": {name, description, parameters}}."""
    if not FUNCTION_NAME.fullmatch(name):
        raise ValueError(f"{name!r} is not a function name OpenAI accepts.")
    if parameters.get("type") != "object":
        raise ValueError(f"The parameters of {name} are not an object schema.")
    return {"type": "function", "function": {"name": name, "description": description, "parameters": parameters}}
