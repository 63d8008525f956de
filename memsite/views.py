import sys

from django.db import connection
from django.http import HttpRequest, HttpResponse, HttpResponsePermanentRedirect, JsonResponse
from django.http.response import HttpResponseBase
from django.templatetags.static import static
from django.views import defaults
from django.views.decorators.http import require_GET, require_safe
from django.views.generic import View
from drf_spectacular.views import SpectacularSwaggerSplitView
from rest_framework.request import Request

from memsite.middleware import DATABASE_ERRORS, database_unavailable_response
from memsite.queue import broker_answers


@require_safe
def favicon(request: HttpRequest) -> HttpResponse:
    """Browsers ask for /favicon.ico whatever the page links: the SVG icon, for good, rather
    than a 404 in every log."""
    return HttpResponsePermanentRedirect(static("favicon.svg"))


def _database_ok() -> bool:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        return True
    except Exception:
        return False


def _broker_ok() -> bool:
    return broker_answers()  # what starting work checks


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """Liveness for load balancers: no login, no data, only whether the backends answer."""
    checks = {"database": _database_ok(), "broker": _broker_ok()}
    healthy = all(checks.values())
    return JsonResponse({"status": "ok" if healthy else "degraded", **checks}, status=200 if healthy else 503)


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """handler404: under /api/, JSON like every other API refusal. A path whose id cannot be
    one (`/api/agents/abc/`) matches no URL and never reaches DRF; its clients read JSON.
    (With DEBUG, Django shows its own page instead.)"""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": "Not found."}, status=404)
    return defaults.page_not_found(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    """handler500: a database that cannot be reached is a 503 with a message wherever it was
    met (memsite.middleware catches what views raise; this, what middleware raises)."""
    if isinstance(sys.exc_info()[1], DATABASE_ERRORS):
        return database_unavailable_response(request)
    return defaults.server_error(request)


class ApiDocsView(SpectacularSwaggerSplitView):
    """The API docs page (Swagger UI from drf-spectacular-sidecar's static files; its start-up
    script is served apart, at `?script`, as the Content-Security-Policy runs no inline script).
    OPTIONS is answered as by any Django page, with the methods allowed: DRF's answer is a
    metadata document, which this view's HTML renderer has no template for. Its page has a bar
    that leads back to the dashboard (templates/api_docs.html)."""

    template_name = "api_docs.html"

    # Django's answer, not the metadata Response that DRF's APIView.options promises.
    def options(self, request: Request, *args, **kwargs) -> HttpResponseBase:  # type: ignore[override]
        return View.options(self, request, *args, **kwargs)
