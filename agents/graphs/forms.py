"""The reasoning graphs' forms: they check the shape of the input; the services check the
rules."""

import json
from typing import Any

from django import forms

from agents.context import selectors as context_selectors
from agents.context.models import Agent
from agents.graphs.services.graphs import MAX_TASK_CHARS, MAX_TURN_CHARS
from memsite.spaces.models import Space

MESSAGE_ROWS = 4
STANDARD_ROLES = ("assistant", "tool", "user", "system")


class GraphCreateForm(forms.Form):
    """A task, and optionally one of the space's agents."""

    task = forms.CharField(max_length=MAX_TASK_CHARS, widget=forms.Textarea(attrs={"rows": 3}))
    agent = forms.ModelChoiceField(queryset=Agent.objects.none(), required=False, empty_label="none")

    def __init__(self, *args: Any, space: Space, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.fields["agent"].queryset = context_selectors.agent_list(space=space)  # type: ignore[attr-defined]


class MemorizeForm(forms.Form):
    """A step as rows of role and content (a blank content skips its row), or pasted as a JSON
    list of {"role", "content"}: one or the other."""

    messages_json = forms.CharField(
        required=False,
        strip=False,
        label="JSON",
        widget=forms.Textarea(attrs={"rows": 4, "spellcheck": "false"}),
    )

    def __init__(self, *args: Any, **kwargs: Any):
        kwargs.setdefault("auto_id", "memorize-%s")
        super().__init__(*args, **kwargs)
        for row in range(MESSAGE_ROWS):
            initial = STANDARD_ROLES[row] if row < 2 else ""
            self.fields[f"role_{row}"] = forms.CharField(
                required=False,
                max_length=64,
                initial=initial,
                label=f"Role {row + 1}",
                widget=forms.TextInput(attrs={"list": "standard-roles", "size": 10}),
            )
            self.fields[f"content_{row}"] = forms.CharField(
                required=False,
                strip=False,
                max_length=MAX_TURN_CHARS,
                label=f"Content {row + 1}",
                widget=forms.Textarea(attrs={"rows": 2}),
            )

    @property
    def rows(self) -> list[tuple[forms.BoundField, forms.BoundField]]:
        return [(self[f"role_{row}"], self[f"content_{row}"]) for row in range(MESSAGE_ROWS)]

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data  # what Form.clean returns, though typed as Optional
        rows = [
            (data.get(f"role_{row}", "").strip(), data.get(f"content_{row}", ""), row) for row in range(MESSAGE_ROWS)
        ]
        written = [(role, content, row) for role, content, row in rows if content.strip()]
        pasted = data.get("messages_json", "")
        if pasted.strip() and written:
            raise forms.ValidationError("Fill in the rows or paste JSON, not both.")
        if pasted.strip():
            try:
                data["messages"] = json.loads(pasted)
            except json.JSONDecodeError as error:
                raise forms.ValidationError(f"The JSON does not parse: {error.msg} at line {error.lineno}.") from None
            except RecursionError:
                raise forms.ValidationError("The JSON is nested too deeply.") from None
            if not isinstance(data["messages"], list):
                raise forms.ValidationError('The JSON must be a list of {"role", "content"} objects.')
            return data
        if not written:
            raise forms.ValidationError("Write at least one message, or paste a JSON list.")
        for role, _, row in written:
            if not role:
                raise forms.ValidationError(f"Message {row + 1} needs a role.")
        data["messages"] = [{"role": role, "content": content} for role, content, _ in written]
        return data
