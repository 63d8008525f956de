"""The dashboard's forms for agents and their conversations: they check the shape of the
input; the services check the rules."""

import json
from datetime import datetime
from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from agents.context.logic.assembly import MODEL_INVALID, STRATEGY_INVALID
from agents.context.logic.message_fields import MAX_CONTENT_CHARS
from agents.context.models import Agent, Role, Strategy
from agents.context.services.agents import MAX_MODEL_CHARS, MAX_NAME_CHARS, SETTINGS, agent_settings

# A tool result needs the id of the call it answers: the API appends those.
APPENDABLE_ROLES = [(role.value, role.label) for role in (Role.USER, Role.ASSISTANT, Role.SYSTEM)]


# The settings form's fields, a fieldset each: (legend, field names).
SETTINGS_SECTIONS = (
    ("Agent", ("name", "model")),
    ("Instructions", ("instructions", "context_variables")),
    ("History", ("strategy", "window_turns")),
    ("Budgets, in tokens", ("reserved_output_tokens", "turn_input_limit", "conversation_token_budget")),
    (
        "Thresholds, as fractions of the window",
        ("warning_threshold", "compaction_trigger", "compaction_target"),
    ),
)


def _tokens(label: str, help_text: str, *, required: bool = True) -> forms.IntegerField:
    return forms.IntegerField(label=label, help_text=help_text, required=required)


def _fraction(label: str, help_text: str) -> forms.FloatField:
    return forms.FloatField(label=label, help_text=help_text, widget=forms.NumberInput(attrs={"step": "any"}))


# Settings a new agent may leave out, to take the service's defaults.
DEFAULTED = (
    "strategy",
    "window_turns",
    "reserved_output_tokens",
    "warning_threshold",
    "compaction_trigger",
    "compaction_target",
)


class AgentSettingsForm(forms.Form):
    """Every setting of an agent, in the shapes the service takes; the service judges them
    and names the field it refuses (`SettingInvalid.field`). Creating, those of `DEFAULTED`
    left empty take the defaults."""

    defaults_allowed = True

    name = forms.CharField(label="Name", max_length=MAX_NAME_CHARS)
    model = forms.CharField(
        label="Model", max_length=MAX_MODEL_CHARS, widget=forms.TextInput(attrs={"list": "known-models"})
    )
    instructions = forms.CharField(
        label="Instructions",
        required=False,
        strip=False,
        widget=forms.Textarea(attrs={"rows": 5}),
        help_text="The system message: $name or ${name} is replaced by that context variable; $$ is a dollar sign.",
    )
    context_variables = forms.CharField(
        label="Context variables",
        required=False,
        strip=False,
        widget=forms.Textarea(attrs={"rows": 4, "spellcheck": "false"}),
        help_text='A JSON object, such as {"user": "Ada"}. Only the variables the instructions name reach the model.',
    )
    strategy = forms.ChoiceField(
        label="Strategy",
        choices=[(value, f"{value}: {label}") for value, label in Strategy.choices],
        help_text="What goes when the history is too long.",
    )
    window_turns = _tokens("Window turns", "The turns sliding_window keeps.")
    reserved_output_tokens = _tokens("Reserved output", "Kept free in the window for the reply.")
    turn_input_limit = _tokens(
        "Turn input limit", "At most this many input tokens per call; empty: none.", required=False
    )
    conversation_token_budget = _tokens(
        "Conversation budget",
        "Once the conversation totals this many tokens, assembly stops; empty: none.",
        required=False,
    )
    warning_threshold = _fraction("Warning threshold", "Warn when the context passes it.")
    compaction_trigger = _fraction("Compaction trigger", "Past it, the history is cut back to the target.")
    compaction_target = _fraction("Compaction target", "Where a cut leaves the history; below the trigger.")

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        for name in DEFAULTED:
            self.fields[name].required = not self.defaults_allowed

    def clean_context_variables(self) -> Any:
        text = self.cleaned_data["context_variables"]
        if not text.strip():
            return {}
        try:
            return json.loads(text)
        except json.JSONDecodeError as error:
            raise ValidationError(
                f"This is not valid JSON: {error.msg} at line {error.lineno}, column {error.colno}."
            ) from None
        except RecursionError:
            raise ValidationError("This JSON is nested too deeply.") from None
        except ValueError as error:  # an integer too long to convert, say
            raise ValidationError(f"This is not valid JSON: {error}.") from None

    def sections(self) -> list[tuple[str, list[forms.BoundField]]]:
        return [(legend, [self[name] for name in names]) for legend, names in SETTINGS_SECTIONS]

    def settings(self) -> dict[str, Any]:
        values = {name: self.cleaned_data[name] for name in SETTINGS}
        return {name: value for name, value in values.items() if name not in DEFAULTED or value not in (None, "")}


def settings_initial(agent: Agent) -> dict[str, Any]:
    """A settings form's values: the agent's, or for a new one (unsaved) the defaults."""
    values = agent_settings(agent)
    values["context_variables"] = json.dumps(agent.context_variables, ensure_ascii=False, indent=2)
    if agent.pk is not None:
        values["updated_at"] = agent.updated_at.isoformat()
    return values


class AgentEditForm(AgentSettingsForm):
    """With the time the settings were read, so that a change made since is not overwritten."""

    defaults_allowed = False
    updated_at = forms.CharField(widget=forms.HiddenInput)

    def clean_updated_at(self) -> datetime:
        try:
            return datetime.fromisoformat(self.cleaned_data["updated_at"])
        except ValueError:
            raise ValidationError("The form lost the time the settings were read: reload the page.") from None


class MessageAppendForm(forms.Form):
    role = forms.ChoiceField(choices=APPENDABLE_ROLES, initial=Role.USER)
    content = forms.CharField(strip=False, max_length=MAX_CONTENT_CHARS, widget=forms.Textarea(attrs={"rows": 3}))
    pinned = forms.BooleanField(required=False)


class ContextForm(forms.Form):
    """The model and strategy the context report is for; each left out is the agent's."""

    model = forms.CharField(
        required=False,
        strip=False,
        max_length=MAX_MODEL_CHARS,
        error_messages={"max_length": MODEL_INVALID},
    )
    strategy = forms.ChoiceField(
        required=False,
        choices=Strategy.choices,
        error_messages={"invalid_choice": STRATEGY_INVALID},
    )

    def clean_model(self) -> str | None:
        model = self.cleaned_data["model"]
        if "model" not in self.data:
            return None
        if not model.strip():
            raise ValidationError(MODEL_INVALID)
        return model

    def clean_strategy(self) -> str | None:
        if "strategy" not in self.data:
            return None
        if not self.cleaned_data["strategy"]:
            raise ValidationError(STRATEGY_INVALID)
        return self.cleaned_data["strategy"]
