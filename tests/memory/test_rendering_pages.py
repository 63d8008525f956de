"""Pages that render markdown stay up whatever a document holds: a list nested 300 deep was a
RecursionError, and so a 500 on every view of its node."""

import pytest
from django.test import Client
from django.urls import reverse

from tests.factories import DocumentFactory
from tests.memory.test_rendering import PLAIN_TEXT_NOTE, nested_list

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
DEEP = nested_list(300) + "<script>alert(1)</script>\n"


@pytest.fixture
def user_client(client: Client, user) -> Client:
    client.force_login(user)
    return client


def test_the_detail_of_a_document_nested_300_deep_shows_it_as_text(user_client):
    document = DocumentFactory(content=DEEP.encode())
    response = user_client.get(reverse("memory:node_detail", args=[document.pk]), **HTMX)
    assert response.status_code == 200
    page = response.content.decode()
    assert PLAIN_TEXT_NOTE in page and "- item 299" in page
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_the_preview_of_a_document_nested_300_deep_shows_it_as_text(user_client):
    response = user_client.post(reverse("memory:markdown_preview"), {"content": DEEP}, **HTMX)
    assert response.status_code == 200
    page = response.content.decode()
    assert PLAIN_TEXT_NOTE in page and "- item 299" in page and "<script>alert" not in page
