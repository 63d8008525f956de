"""/favicon.ico, which browsers ask for whatever a page links, leads to the site's SVG icon."""

from pathlib import Path

import pytest
from django.contrib.staticfiles import finders
from django.test import Client

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("method", ["get", "head"])
def test_the_favicon_redirects_to_the_svg_without_a_login(method):
    answer = getattr(Client(), method)("/favicon.ico")
    assert answer.status_code == 301 and answer["Location"] == "/static/favicon.svg"


def test_the_icon_it_leads_to_is_a_static_file():
    found = finders.find("favicon.svg")
    assert found is not None and "<svg" in Path(found).read_text()


def test_the_favicon_refuses_a_post():
    assert Client().post("/favicon.ico").status_code == 405
