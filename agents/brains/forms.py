"""The brain page's forms: they check the shape of the input; the services check the rules."""

from typing import Any

from django import forms
from django.conf import settings

from agents.brains.services.brains import GOAL_CHARS
from agents.brains.services.ticks import MAX_INTERVAL_S


class BrainForm(forms.Form):
    """The page has several forms: each names its fields' ids after itself."""

    id_prefix = ""

    def __init__(self, *args: Any, **kwargs: Any):
        kwargs.setdefault("auto_id", f"{self.id_prefix}-%s")
        super().__init__(*args, **kwargs)


class GoalForm(BrainForm):
    id_prefix = "goal"
    text = forms.CharField(max_length=GOAL_CHARS, label="Goal")


class ChatForm(BrainForm):
    id_prefix = "chat"
    text = forms.CharField(strip=False, label="Message", widget=forms.Textarea(attrs={"rows": 2}))


class TickingForm(BrainForm):
    """The browser refuses an interval below beat's period too; the service says why."""

    id_prefix = "ticking"
    interval_s = forms.IntegerField(min_value=1, max_value=MAX_INTERVAL_S, label="Every (seconds)")

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.fields["interval_s"].widget.attrs["min"] = settings.MEMSITE_TICK_MIN_INTERVAL_S
