"""Filters of the brain page: a chat line's citations as links."""

from typing import Any

from django import template
from django.urls import reverse

from agents.brains.logic.recall import NODE, citations_shown

register = template.Library()


@register.filter
def chat_citations(entry: Any) -> list[dict[str, str]]:
    """A chat entry's citations, each with its link: a node's page, or the fact or episode on
    the brain page."""
    return [
        {
            **citation,
            "href": reverse("memory:node_detail", args=[citation["ref"]])
            if citation["kind"] == NODE
            else f"#{citation['kind']}-{citation['ref']}",
        }
        for citation in citations_shown(entry)
    ]
