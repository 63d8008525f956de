"""The Content-Security-Policy in a real browser: the dashboard's htmx and the API docs' Swagger
UI work under it, and the browser reports nothing it refused."""

import pytest
from playwright.sync_api import expect

from memory import selectors
from tests.browser.test_dashboard import log_in
from tests.factories import default_space

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("memory_roots")]


@pytest.fixture
def refusals(page) -> list[str]:
    """What the browser refused to run or load, as its console says."""
    messages: list[str] = []
    page.on(
        "console", lambda message: messages.append(message.text) if "Content Security Policy" in message.text else None
    )
    return messages


def test_the_dashboard_works_under_the_policy(page, live_server, refusals, settings):
    log_in(page, live_server)
    assert page.evaluate("typeof window.htmx") == "object"
    # htmx swaps a folder's children in: its requests run under the policy.
    user_folder = selectors.node_internal_folder(space=default_space(), name="user")
    page.locator(f"#item-{user_folder.pk} > details > summary .caret").click()
    expect(page.locator(f"#children-{user_folder.pk} li").first).to_be_visible()
    response = page.request.get(f"{live_server.url}/memory/")
    assert response.headers["content-security-policy"] == settings.MEMSITE_CONTENT_SECURITY_POLICY
    assert refusals == []


def test_the_api_docs_render_under_the_policy(page, live_server, refusals):
    page.goto(f"{live_server.url}/api/docs/")
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("memsite API")
    expect(page.locator(".opblock").first).to_be_visible()
    assert refusals == []
