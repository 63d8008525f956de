from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from memsite.errors import NotFound
from memsite.llm import selectors
from memsite.llm.forms import LedgerFilterForm
from memsite.quotas.selectors import user_usage
from memsite.request_types import AuthenticatedHttpRequest
from memsite.spaces.principals import principal_of

PAGE_SIZE = 50


@require_GET
@login_required
def ledger(request: AuthenticatedHttpRequest) -> HttpResponse:
    principal = principal_of(request)
    space = principal.space
    form = LedgerFilterForm(request.GET or None, models=selectors.llm_call_models(space=space))
    calls = selectors.llm_call_list(space=space, filters=form.filters())
    page = Paginator(calls, PAGE_SIZE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    served = selectors.llm_calls_served(calls=page.object_list)
    context = {
        "form": form,
        "page": page,
        "rows": [(call, served.get(call.pk)) for call in page.object_list],
        "query": query.urlencode(),
        "total": selectors.llm_call_totals(calls=calls),
        "by_day": selectors.llm_call_totals_by_day(calls=calls),
        "by_purpose": selectors.llm_call_totals_by_purpose(calls=calls),
    }
    if getattr(request, "htmx", False):
        return render(request, "llm/ledger.html#results", context)
    # The spend charged to the user who reads, against the daily budgets (memsite.quotas).
    context["usage"] = user_usage(by=principal)
    return render(request, "llm/ledger.html", context)


@require_GET
@login_required
def call_detail(request: HttpRequest, call_id: int) -> HttpResponse:
    try:
        call = selectors.llm_call_get(space=principal_of(request).space, call_id=call_id)
    except NotFound as exc:
        raise Http404(exc.message) from None
    served = selectors.llm_calls_served(calls=[call]).get(call.pk)
    return render(request, "llm/call.html", {"call": call, "served": served})
