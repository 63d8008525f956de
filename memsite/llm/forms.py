from collections.abc import Sequence

from django import forms

from memsite.llm.models import LLMCall
from memsite.llm.purposes import PURPOSES
from memsite.llm.selectors import LedgerFilter


class LedgerFilterForm(forms.Form):
    purpose = forms.ChoiceField(required=False, choices=[("", "any purpose"), *((p, p) for p in PURPOSES)])
    model = forms.CharField(required=False, max_length=128)
    status = forms.ChoiceField(required=False, choices=[("", "any status"), *LLMCall.Status.choices])
    date_from = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    date_to = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))

    def __init__(self, *args, models: Sequence[str] = (), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["model"].widget = forms.Select(choices=[("", "any model"), *((m, m) for m in models)])

    def filters(self) -> LedgerFilter:
        """The valid part of the filter; an invalid field filters nothing."""
        data = self.cleaned_data if self.is_bound and self.is_valid() else {}
        return LedgerFilter(
            purpose=data.get("purpose") or "",
            model=data.get("model") or "",
            status=data.get("status") or "",
            date_from=data.get("date_from"),
            date_to=data.get("date_to"),
        )
