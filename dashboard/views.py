"""The home page: what the current space holds and what is going on in it."""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET

from dashboard import selectors
from memsite.pages import render_page
from memsite.spaces.principals import principal_of


@require_GET
@login_required
def home(request: HttpRequest) -> HttpResponse:
    space = principal_of(request).space
    context = {
        "memory": selectors.memory_counts(space=space),
        "running": selectors.searches_running(space=space),
        "recent": selectors.searches_recent(space=space),
        "questions": selectors.questions_waiting(space=space),
        "ledger": selectors.ledger_today(space=space),
        "ticking": selectors.agents_ticking(space=space),
    }
    return render_page(request, "home.html", context)
