"""The dashboard's forms for agents and their conversations: they check the shape of the
input; the services check the rules."""

from django import forms
from django.core.exceptions import ValidationError

from agents.context.logic.assembly import MODEL_INVALID, STRATEGY_INVALID
from agents.context.logic.message_fields import MAX_CONTENT_CHARS
from agents.context.models import Role, Strategy
from agents.context.services.agents import MAX_MODEL_CHARS, MAX_NAME_CHARS

# A tool result needs the id of the call it answers: the API appends those.
APPENDABLE_ROLES = [(role.value, role.label) for role in (Role.USER, Role.ASSISTANT, Role.SYSTEM)]


class AgentCreateForm(forms.Form):
    name = forms.CharField(max_length=MAX_NAME_CHARS)
    model = forms.CharField(max_length=MAX_MODEL_CHARS)
    instructions = forms.CharField(required=False, strip=False, widget=forms.Textarea(attrs={"rows": 4}))


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
