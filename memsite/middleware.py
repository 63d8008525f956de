"""A database that cannot be reached answers 503 with a message, not a 500 with a traceback.
Explained in docs/memsite.md."""

import logging

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.html import format_html

logger = logging.getLogger(__name__)

DATABASE_UNAVAILABLE = "The database is unavailable; try again in a few seconds."
RETRY_AFTER_S = 5


def _driver_errors() -> tuple[type[Exception], ...]:
    """psycopg's own connection errors. Django translates the errors of the queries it runs;
    work on the driver's cursor itself (COPY, which bulk inserts use) raises these untranslated."""
    try:
        import psycopg
    except ImportError:
        return ()
    return (psycopg.OperationalError, psycopg.InterfaceError)


DATABASE_ERRORS: tuple[type[Exception], ...] = (OperationalError, InterfaceError, *_driver_errors())

# Standalone: rendering the site's layout would ask the database for the user again.
PAGE = """<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Unavailable · memsite</title></head>
<body><main><h1>Unavailable</h1><p role="alert">{}</p></main></body>
</html>
"""
# Swapped out of band into the layout's #outage region; nothing else on the page changes.
HTMX_FRAGMENT = (
    '<div id="outage" class="flash" role="alert" hx-swap-oob="true"><p class="alert alert-error">{}</p></div>'
)


def database_unavailable_response(request: HttpRequest) -> HttpResponse:
    if request.path.startswith("/api/"):
        response: HttpResponse = JsonResponse({"detail": DATABASE_UNAVAILABLE}, status=503)
    elif request.headers.get("HX-Request") == "true":
        response = HttpResponse(format_html(HTMX_FRAGMENT, DATABASE_UNAVAILABLE), status=503)
        response["HX-Reswap"] = "none"
    else:
        response = HttpResponse(format_html(PAGE, DATABASE_UNAVAILABLE), status=503)
    response["Retry-After"] = str(RETRY_AFTER_S)
    response["Cache-Control"] = "no-store"
    return response


class DatabaseUnavailableMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        return database_unavailable(request, exception)


def database_unavailable(request: HttpRequest, exception: Exception) -> HttpResponse | None:
    """The 503 for a database error, logged; None for any other exception. Also for the
    middleware that queries before the view (memsite.spaces'), whose errors skip the above."""
    if not isinstance(exception, DATABASE_ERRORS):
        return None
    # No traceback: during an outage every request would log one.
    logger.error(
        "%s %s: the database is unavailable: %s: %s",
        request.method,
        request.path,
        type(exception).__name__,
        exception,
    )
    return database_unavailable_response(request)
