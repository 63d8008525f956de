"""Filters of the brain page: a chat line's citations as links."""

from typing import Any

from django import template
from django.urls import reverse

from agents.brains.logic.recall import NODE, Citable, anchor, citations_shown

register = template.Library()


@register.filter
def chat_citations(entry: Any, citable: Citable | None = None) -> list[dict[str, str]]:
    """A chat entry's citations, each with its link (a node's page, or the fact or episode on
    the brain page when the page shows it; else none) and the cited fact's or episode's text."""
    citable = citable or Citable()
    linked = []
    for citation in citations_shown(entry):
        target = anchor(citation["kind"], citation["ref"])
        if citation["kind"] == NODE:
            href = reverse("memory:node_detail", args=[citation["ref"]])
        else:
            href = f"#{target}" if target in citable.shown else ""
        linked.append({**citation, "href": href, "text": citable.texts.get(target, "")})
    return linked
