"""The dashboard's forms for spaces, members and tokens: they check the shape of the input; the
services check the rules."""

from typing import Any

from django import forms

from memsite.spaces.logic import LLM_BUDGETS, MAX_EXPIRES_IN_DAYS, MEMBER_LIMITS, Role

ROLES = [(role.value, role.value) for role in Role]
NAME_CHARS = 200  # of a space's or a token's name (the models')
LIMIT_LABELS = {
    "quota_searches": "Searches in flight, per member",
    "quota_ticks": "Agent ticks queued or running, per member",
    "quota_ticking_agents": "Ticking agents, per member",
    "quota_graph_ops": "Graph operations queued, per member",
    "member_llm_daily_calls": "LLM calls a day, per member",
    "member_llm_daily_tokens": "LLM tokens a day, per member",
    "llm_daily_calls": "LLM calls a day, the whole space",
    "llm_daily_tokens": "LLM tokens a day, the whole space",
}


class SpaceCreateForm(forms.Form):
    slug = forms.SlugField(max_length=50)
    name = forms.CharField(max_length=NAME_CHARS)


class SpaceSwitchForm(forms.Form):
    slug = forms.SlugField(max_length=50)
    next = forms.CharField(required=False, max_length=2000)


class MemberSetForm(forms.Form):
    username = forms.CharField(max_length=150)
    role = forms.ChoiceField(choices=ROLES)


class TokenCreateForm(forms.Form):
    name = forms.CharField(max_length=NAME_CHARS)
    # The member it acts for, by username; blank for oneself. Only an owner may name another.
    user = forms.CharField(required=False, max_length=150, label="Member")
    # Blank: an editor's, or the member's role if lower; an owner's token is asked for.
    role = forms.ChoiceField(choices=[("", "editor (or the member's role, if lower)"), *ROLES], required=False)
    manage = forms.BooleanField(required=False, label="Manages the space")
    write_under = forms.CharField(required=False, max_length=1000, label="Writes under")
    expires_in_days = forms.IntegerField(
        required=False, min_value=1, max_value=MAX_EXPIRES_IN_DAYS, label="Expires in days"
    )
    # Its own daily LLM budget; blank: its member's alone (the service bounds the values).
    llm_daily_calls = forms.IntegerField(required=False, min_value=0, label="LLM calls a day")
    llm_daily_tokens = forms.IntegerField(required=False, min_value=0, label="LLM tokens a day")


class SpaceSettingsForm(forms.Form):
    """A space's name, and its caps and budgets: each left blank is the site's (a budget: none)."""

    name = forms.CharField(max_length=NAME_CHARS)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for field in (*MEMBER_LIMITS, *LLM_BUDGETS):
            self.fields[field] = forms.IntegerField(required=False, min_value=0, label=LIMIT_LABELS[field])


class SpaceDeleteForm(forms.Form):
    confirm = forms.CharField(max_length=50, label="The space's slug")
