"""The tools, by name, and the one way to call them: arguments validated by the tool's pydantic
model, the role checked, then the tool runs as a thin call of the services and selectors the
REST API calls. Every refusal is a memsite.errors.ServiceError with the API's status.
Explained in docs/tools.md."""

import logging
from collections.abc import Callable, Mapping
from copy import deepcopy
from dataclasses import dataclass
from functools import cache
from typing import Any

from pydantic import BaseModel, ValidationError

from memsite.errors import InvalidInput, NotFound, ServiceError
from memsite.spaces.logic import Role
from memsite.spaces.principals import Principal, role_require
from memsite.storable import unstorable
from tools.logic.openai import function_definition
from tools.logic.schemas import field_errors, parameters

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Tool:
    name: str  # such as "memory_retrieve"
    description: str  # one or two sentences a model reads
    args: type[BaseModel]  # its JSON schema is the tool's parameters
    run: Callable[[Principal, Any], dict]  # given the validated `args`; JSON-ready
    writes: bool  # needs an editor; a reader is refused (403)

    def parameters(self) -> dict[str, Any]:
        """The JSON Schema of the arguments, as a model is shown it (tools.logic.schemas)."""
        return parameters(self.args)


@cache
def _by_name() -> dict[str, Tool]:
    # Imported when first asked for: the definitions import Tool from here.
    from tools.definitions import TOOLS

    return {tool.name: tool for tool in TOOLS}


def all_tools() -> list[Tool]:
    """Every tool, grouped by room: memory, searches, context, graphs, brains, questions."""
    return list(_by_name().values())


def _unknown(name: str) -> str:
    return f"No tool named {name!r}. The tools: {', '.join(_by_name())}."


def tool_get(name: str) -> Tool:
    """The tool of this name; NotFound (404) naming the tools there are."""
    tool = _by_name().get(name)
    if tool is None:
        raise NotFound(_unknown(name))
    return tool


@cache
def _openai_tools() -> list[dict[str, Any]]:
    # Built once a process: pydantic takes some 30 ms to write the schemas.
    return [function_definition(tool.name, tool.description, tool.parameters()) for tool in all_tools()]


def openai_tools() -> list[dict[str, Any]]:
    """Every tool as OpenAI's function calling defines one (the Chat Completions `tools` list),
    the caller's own copy."""
    return deepcopy(_openai_tools())


def tool_call(principal: Principal, name: str, arguments: Mapping[str, Any]) -> dict:
    """Run the tool `name` for `principal` with `arguments` (parsed JSON). Refused, as the API
    refuses, with an InvalidInput (400) naming each invalid argument under `arguments`, a
    Forbidden (403) for a reader calling a tool that writes, or the refusal of the service the
    tool calls (404, 409, 413, 422, 429, ...)."""
    try:
        result = _run(principal, name, arguments)
    except ServiceError as refusal:
        logger.info(
            "Tool %s for %s in %s: refused, %s.", name[:64], principal.user, principal.space.slug, refusal.status
        )
        raise
    logger.info("Tool %s for %s in %s: done.", name, principal.user, principal.space.slug)
    return result


def _run(principal: Principal, name: str, arguments: Mapping[str, Any]) -> dict:
    tool = _by_name().get(name) if isinstance(name, str) else None
    if tool is None:
        raise InvalidInput(_unknown(str(name)), data={"name": ["No such tool."]})
    if tool.writes:
        role_require(principal, Role.EDITOR)  # before the arguments, as the API checks roles first
    if not isinstance(arguments, Mapping):
        raise InvalidInput("The arguments must be an object.", data={"arguments": ["Must be an object."]})
    problem = unstorable(dict(arguments), "arguments")
    if problem is not None:
        raise InvalidInput(f"{problem}.")
    try:
        args = tool.args.model_validate(arguments)
    except ValidationError as invalid:
        errors = field_errors(invalid, arguments, list(tool.args.model_fields))
        raise InvalidInput(f"Invalid arguments for {name}; each is named.", data={"arguments": errors}) from None
    return tool.run(principal, args)
