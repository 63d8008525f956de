"""What every dashboard view shares: rendering a page or one of its partials, and a form's
errors as one line."""

from typing import Any

from django import forms
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.cache import patch_vary_headers


def render_page(request: HttpRequest, template: str, context: dict[str, Any], *, status: int = 200) -> HttpResponse:
    """Render a page or, for htmx, one of its partials; caches keep the two apart."""
    response = render(request, template, context, status=status)
    patch_vary_headers(response, ("HX-Request",))
    return response


def form_error(form: forms.Form) -> str:
    """All of a form's errors as one sentence, for the message line of a panel."""
    return " ".join(
        f"{form.fields[name].label or name.capitalize()}: {error}" if name in form.fields else str(error)
        for name, errors in form.errors.items()
        for error in errors
    )
