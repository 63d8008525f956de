"""Creating agents, changing their settings and deleting them. Every setting is checked here,
together with the others it must agree with, before anything is saved; the database constraints
repeat the rules that fit in SQL. An agent's name is unique within its space. A refused setting
names its field, for a form to show the error beside it."""

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from django.db import IntegrityError, transaction

from agents.context.logic.assembly import MAX_MODEL_CHARS, MAX_WINDOW_TURNS
from agents.context.logic.instructions import instructions_check
from agents.context.models import Agent, Strategy
from agents.fields import max_chars
from memsite.errors import Conflict, InvalidInput
from memsite.names import has_invisible_characters
from memsite.spaces.models import Space
from memsite.storable import deeper_than, unstorable

MAX_NAME_CHARS = max_chars(Agent, "name")
MAX_INSTRUCTIONS_CHARS = 100_000
MAX_CONTEXT_VARIABLES_BYTES = 64 * 1024
MAX_CONTEXT_VARIABLES_DEPTH = 32  # levels of objects and lists, the variables' own object first
MAX_TOKENS = 100_000_000  # above any model's window; a bound, not a budget
MAX_CONVERSATION_BUDGET = 10**15


class SettingInvalid(InvalidInput):
    """A setting refused alone or against another: `field` names the one to correct."""

    def __init__(self, message: str, *, field: str):
        super().__init__(message)
        self.field = field


class NameTaken(Conflict):
    field = "name"


SETTINGS = (
    "name",
    "model",
    "instructions",
    "context_variables",
    "strategy",
    "window_turns",
    "reserved_output_tokens",
    "turn_input_limit",
    "conversation_token_budget",
    "warning_threshold",
    "compaction_trigger",
    "compaction_target",
)


def agent_settings(agent: Agent) -> dict[str, Any]:
    """The agent's SETTINGS, by name."""
    return {field: getattr(agent, field) for field in SETTINGS}


def _text(field: str, value: object, *, limit: int, blank: bool = False, name: bool = False) -> str:
    """A string within `limit`; a `name` (one line, shown and sent as it is) without control or
    invisible characters."""
    if not isinstance(value, str):
        raise SettingInvalid(f"{field} must be a string.", field=field)
    if not blank and not value.strip():
        raise SettingInvalid(f"{field} must not be blank.", field=field)
    if len(value) > limit:
        raise SettingInvalid(f"{field} is longer than {limit} characters.", field=field)
    if name and has_invisible_characters(value.strip()):
        raise SettingInvalid(
            f"{field} must not contain control or invisible characters: {value.strip()!r}.", field=field
        )
    return value


def _whole(field: str, value: object, *, low: int, high: int, nullable: bool = False) -> int | None:
    if value is None and nullable:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        null = " or null" if nullable else ""
        raise SettingInvalid(f"{field} must be an integer from {low} to {high}{null}.", field=field)
    return value


def _fraction(field: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
        raise SettingInvalid(f"{field} must be a number above 0 and at most 1.", field=field)
    return float(value)


def _variables_invalid(message: str) -> SettingInvalid:
    return SettingInvalid(message, field="context_variables")


def _context_variables(value: object) -> dict:
    if not isinstance(value, Mapping) or not all(isinstance(key, str) for key in value):
        raise _variables_invalid("context_variables must be an object.")
    if deeper_than(value, MAX_CONTEXT_VARIABLES_DEPTH):
        raise _variables_invalid(
            f"context_variables are nested too deeply: at most {MAX_CONTEXT_VARIABLES_DEPTH} levels "
            "of objects and lists."
        )
    problem = unstorable(value, "context_variables")
    if problem is not None:
        raise _variables_invalid(f"context_variables cannot be stored: {problem}.")
    try:
        size = len(json.dumps(value, ensure_ascii=False).encode())
    except (TypeError, ValueError):
        raise _variables_invalid("context_variables must hold JSON values only.") from None
    if size > MAX_CONTEXT_VARIABLES_BYTES:
        raise _variables_invalid(
            f"context_variables take {size} bytes as JSON; the limit is {MAX_CONTEXT_VARIABLES_BYTES}."
        )
    return dict(value)


def _validated(values: Mapping[str, Any]) -> dict[str, Any]:
    """Every setting of an agent, checked alone and against each other."""
    strategy = values["strategy"]
    if strategy not in Strategy.values:
        raise SettingInvalid(f"strategy must be one of {', '.join(Strategy.values)}.", field="strategy")
    cleaned = {
        "name": _text("name", values["name"], limit=MAX_NAME_CHARS, name=True).strip(),
        "model": _text("model", values["model"], limit=MAX_MODEL_CHARS, name=True).strip(),
        "instructions": _text("instructions", values["instructions"], limit=MAX_INSTRUCTIONS_CHARS, blank=True),
        "context_variables": _context_variables(values["context_variables"]),
        "strategy": strategy,
        "window_turns": _whole("window_turns", values["window_turns"], low=1, high=MAX_WINDOW_TURNS),
        "reserved_output_tokens": _whole(
            "reserved_output_tokens", values["reserved_output_tokens"], low=1, high=MAX_TOKENS
        ),
        "turn_input_limit": _whole(
            "turn_input_limit", values["turn_input_limit"], low=1, high=MAX_TOKENS, nullable=True
        ),
        "conversation_token_budget": _whole(
            "conversation_token_budget",
            values["conversation_token_budget"],
            low=1,
            high=MAX_CONVERSATION_BUDGET,
            nullable=True,
        ),
        "warning_threshold": _fraction("warning_threshold", values["warning_threshold"]),
        "compaction_trigger": _fraction("compaction_trigger", values["compaction_trigger"]),
        "compaction_target": _fraction("compaction_target", values["compaction_target"]),
    }
    if cleaned["compaction_target"] >= cleaned["compaction_trigger"]:
        raise SettingInvalid(
            f"compaction_target ({cleaned['compaction_target']}) must be below "
            f"compaction_trigger ({cleaned['compaction_trigger']}).",
            field="compaction_target",
        )
    try:
        instructions_check(template=cleaned["instructions"], variables=cleaned["context_variables"])
    except InvalidInput as error:
        raise SettingInvalid(error.message, field="instructions") from None
    return cleaned


def _name_taken(name: str) -> NameTaken:
    return NameTaken(f"There is already an agent named '{name}'.")


def _save(agent: Agent, fields: list[str] | None = None) -> None:
    try:
        with transaction.atomic():
            agent.save(update_fields=fields)
    except IntegrityError:
        raise _name_taken(agent.name) from None


def agent_create(
    *,
    space: Space,
    name: str,
    model: str,
    instructions: str = "",
    context_variables: Mapping[str, Any] | None = None,
    strategy: str = Strategy.FIFO,
    window_turns: int = 20,
    reserved_output_tokens: int = 4_096,
    turn_input_limit: int | None = None,
    conversation_token_budget: int | None = None,
    warning_threshold: float = 0.8,
    compaction_trigger: float = 0.9,
    compaction_target: float = 0.6,
) -> Agent:
    values = _validated(
        {
            "name": name,
            "model": model,
            "instructions": instructions,
            "context_variables": {} if context_variables is None else context_variables,
            "strategy": strategy,
            "window_turns": window_turns,
            "reserved_output_tokens": reserved_output_tokens,
            "turn_input_limit": turn_input_limit,
            "conversation_token_budget": conversation_token_budget,
            "warning_threshold": warning_threshold,
            "compaction_trigger": compaction_trigger,
            "compaction_target": compaction_target,
        }
    )
    with transaction.atomic():
        if Agent.objects.filter(space=space, name=values["name"]).exists():
            raise _name_taken(values["name"])
        agent = Agent(space=space, **values)
        _save(agent)
    return agent


def _changed_since(agent: Agent) -> Conflict:
    return Conflict(
        f"The agent '{agent.name}' was changed at {agent.updated_at:%Y-%m-%d %H:%M:%S} UTC, after "
        "these settings were read: read them again, then change them."
    )


def agent_update(*, agent: Agent, changes: Mapping[str, Any], unchanged_since: datetime | None = None) -> Agent:
    """Change some of an agent's settings (`SETTINGS`); a null clears an optional budget.
    With `unchanged_since` (the `updated_at` the caller read), a 409 if they changed since.
    Messages keep the token counts they were written with."""
    unknown = sorted(set(changes) - set(SETTINGS))
    if unknown:
        raise InvalidInput(f"Unknown agent settings: {', '.join(unknown)}.")
    if not changes:
        raise InvalidInput(f"Nothing to change: send at least one of {', '.join(SETTINGS)}.")
    with transaction.atomic():
        agent = Agent.objects.select_for_update().get(pk=agent.pk)
        if unchanged_since is not None and agent.updated_at != unchanged_since:
            raise _changed_since(agent)
        values = _validated({**agent_settings(agent), **changes})
        renamed = values["name"] != agent.name
        if renamed and Agent.objects.filter(space_id=agent.space_id, name=values["name"]).exists():
            raise _name_taken(values["name"])
        for field, value in values.items():
            setattr(agent, field, value)
        _save(agent, [*SETTINGS, "updated_at"])
    return agent


def agent_delete(*, agent: Agent) -> None:
    """Delete the agent with its conversation, checkpoints, summaries and brain; its reasoning
    graphs stay, no longer linked to it."""
    with transaction.atomic():
        Agent.objects.filter(pk=agent.pk).delete()
