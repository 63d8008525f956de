"""Dynamic instructions (seed 003): an agent's instructions are a `string.Template` rendered
from its context variables at every assembly; a variable reaches the model only where the
instructions name it. Explained in docs/context.md."""

import json
from collections.abc import Mapping
from string import Template

from memsite.errors import InvalidInput


def instructions_placeholders(*, template: str) -> list[str]:
    """The variable names `template` uses, in order; InvalidInput for a stray `$`."""
    for match in Template.pattern.finditer(template):
        if match.group("invalid") is not None:
            start = match.start("invalid")
            raise InvalidInput(
                f"instructions: the '$' at character {start + 1} starts no variable name; "
                "write $name or ${name} for a context variable, or $$ for a dollar sign."
            )
    return Template(template).get_identifiers()


def instructions_check(*, template: str, variables: Mapping[str, object]) -> None:
    """Refuses instructions that name a variable the agent does not have, so that rendering
    never guesses (seed 003: Swarm's empty-string default hid such mistakes)."""
    missing = [name for name in instructions_placeholders(template=template) if name not in variables]
    if missing:
        names = ", ".join(f"${name}" for name in missing)
        raise InvalidInput(f"instructions use {names}, which the context variables do not define.")


def _as_text(value: object) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def instructions_render(*, template: str, variables: Mapping[str, object]) -> str:
    """The system message: strings as they are, other JSON values as compact JSON."""
    used = instructions_placeholders(template=template)
    return Template(template).substitute({name: _as_text(variables[name]) for name in used})
