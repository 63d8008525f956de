"""The admin index names every model in good English: plurals of words ending in y, s, x, ch
or sh are not made by adding an s, and acronyms keep their capitals."""

import re

import pytest
from django.contrib import admin
from django.urls import reverse

pytestmark = pytest.mark.django_db

NAIVE = re.compile(r"(?:[^aeiou]ys|ss|xs|chs|shs|zs)$")
ACRONYMS = re.compile(r"\b(?:llm|api|mcp|url)\b")


@pytest.mark.parametrize("model", list(admin.site._registry), ids=lambda model: model._meta.label)
def test_every_admin_model_has_a_good_plural(model):
    plural = str(model._meta.verbose_name_plural)
    assert not NAIVE.search(plural), plural
    assert not ACRONYMS.search(plural), plural


def test_the_admin_index_shows_the_names(client, staff):
    client.force_login(staff)
    html = client.get(reverse("admin:index")).content.decode()
    for name in ("Searches", "Summaries", "LLM calls", "API tokens"):
        assert f">{name}</a>" in html, name
    for wrong in ("Searchs", "Summarys", "Llm calls", "Api tokens"):
        assert wrong not in html
