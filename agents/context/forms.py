"""The dashboard's forms for agents and their conversations: they check the shape of the
input; the services check the rules."""

from django import forms

from agents.context.logic.message_fields import MAX_CONTENT_CHARS
from agents.context.models import Role
from agents.context.services.agents import MAX_MODEL_CHARS, MAX_NAME_CHARS

# A tool result needs the id of the call it answers: the API appends those.
APPENDABLE_ROLES = [(role.value, role.label) for role in (Role.USER, Role.ASSISTANT, Role.SYSTEM)]


class AgentCreateForm(forms.Form):
    name = forms.CharField(max_length=MAX_NAME_CHARS)
    model = forms.CharField(max_length=MAX_MODEL_CHARS)
    instructions = forms.CharField(
        required=False, strip=False, widget=forms.Textarea(attrs={"rows": 4})
    )


class MessageAppendForm(forms.Form):
    role = forms.ChoiceField(choices=APPENDABLE_ROLES, initial=Role.USER)
    content = forms.CharField(
        strip=False, max_length=MAX_CONTENT_CHARS, widget=forms.Textarea(attrs={"rows": 3})
    )
    pinned = forms.BooleanField(required=False)
