"""The API docs page: served from this site's own static files, and answering OPTIONS like any
page, without a login."""

import html
import re

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def test_options_on_the_docs_page_lists_its_methods_without_a_login():
    response = Client().options("/api/docs/")

    assert response.status_code == 200
    assert {"GET", "OPTIONS"} <= {method.strip() for method in response["Allow"].split(",")}


def test_options_on_the_schema_answers_without_a_login():
    assert Client().options("/api/schema/").status_code in (200, 405)


def external_hosts(text: str) -> set[str]:
    return set(re.findall(r"(?:https?:)?//([^/\s\"'<>)`]+)", text)) - {"testserver"}


def test_the_docs_page_loads_swagger_ui_from_this_site():
    client = Client()
    response = client.get("/api/docs/")

    assert response.status_code == 200
    page = response.content.decode()
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js" in page
    assert external_hosts(page) == set()
    # Scripts the view serves itself (not static files) name no other host either.
    for script in re.findall(r'<script src="(/(?!static/)[^"]*)"', page):
        served = client.get(html.unescape(script))
        assert served.status_code == 200
        assert external_hosts(served.content.decode()) == set(), script


def test_the_docs_page_leads_back_to_the_dashboard():
    page = Client().get("/api/docs/").content.decode()
    assert '<a class="docs-back" id="docs-back" href="/">&larr; Back to the dashboard</a>' in page
    assert "/static/css/api_docs.css" in page
