"""The dashboard in a real browser: log in, expand folders, open a document, edit the user's
preferences and see them saved."""

import re

import pytest
from playwright.sync_api import expect

from memory import selectors
from tests.factories import DocumentFactory, NodeFactory, UserFactory, default_space

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("memory_roots")]

WEEKLY = "# Weekly report\n\n- Shipped the **search** router.\n- <script>window.pwned = 1</script>Next: tests.\n"


def log_in(page, live_server, screenshot=None) -> None:
    UserFactory(username="ada")
    page.goto(f"{live_server.url}/memory/")
    expect(page).to_have_url(re.compile(r"/login/\?next=/memory/$"))
    if screenshot:
        screenshot("00-login")
    page.get_by_label("Username").fill("ada")
    page.get_by_label("Password").fill("password")
    page.get_by_role("button", name="Log in").click()
    expect(page).to_have_url(f"{live_server.url}/memory/")


def test_browse_the_tree_and_open_a_document(page, live_server, screenshot):
    swarmstar = selectors.node_internal_folder(space=default_space(), name="swarmstar")
    reports = NodeFactory(parent=swarmstar, name="reports", description="Weekly reports of the swarm.")
    weekly = DocumentFactory(parent=reports, name="weekly.md", description="This week.", content=WEEKLY.encode())
    NodeFactory(parent=swarmstar, name="logs", description="Run logs.")

    log_in(page, live_server, screenshot)
    expect(page.locator("#tree-roots > li")).to_have_count(4)
    screenshot("01-browser")

    page.locator(f"#item-{swarmstar.pk} > details > summary .caret").click()
    expect(page.locator(f"#children-{swarmstar.pk} #item-{reports.pk}")).to_be_visible()
    page.locator(f"#item-{reports.pk} > details > summary .caret").click()
    document_link = page.locator(f"#item-{weekly.pk} .node-link")
    expect(document_link).to_be_visible()

    document_link.click()
    detail = page.locator("#detail")
    expect(detail.locator("h1").first).to_have_text("weekly.md")
    expect(detail.locator(".markdown h1")).to_have_text("Weekly report")
    expect(detail.locator(".markdown strong")).to_have_text("search")
    expect(detail.locator(".breadcrumbs")).to_contain_text("swarmstar")
    expect(page).to_have_url(f"{live_server.url}/memory/{weekly.pk}/")
    assert page.evaluate("window.pwned") is None
    screenshot("02-document")

    # a new folder created from the panel appears in the tree without a reload
    page.locator(f"#item-{reports.pk} > details > summary .node-link").click()
    expect(detail.locator("h1").first).to_have_text("reports")
    detail.get_by_text("New in this folder").click()
    create_form = detail.locator("form.create-form")
    create_form.get_by_label("Type").select_option("folder")
    create_form.get_by_label("Name").fill("archive")
    create_form.get_by_role("button", name="Create").click()
    expect(detail.locator(".alert-success")).to_have_text("Created 'archive'.")
    expect(page.locator(f"#children-{reports.pk}")).to_contain_text("archive")
    screenshot("03-created")


def test_edit_the_user_preferences(page, live_server, screenshot):
    log_in(page, live_server)
    page.get_by_role("link", name="User preferences").click()
    editor = page.locator("#document-content")
    expect(editor).to_have_value(re.compile(r"^# User preferences"))

    text = "# User preferences\n\n- Involvement: ask before deploying\n- Background: **data engineer**\n"
    editor.fill("")
    editor.press_sequentially(text[:20])
    editor.fill(text)
    editor.press("End")  # a keyup, so the live preview catches up with the filled text
    expect(page.locator("#preview strong")).to_have_text("data engineer")

    page.get_by_role("button", name="Save").click()
    expect(page.locator("#save-status")).to_have_text("Saved.")
    screenshot("04-preferences-saved")

    page.reload()
    expect(page.locator("#document-content")).to_have_value(text)
    expect(page.locator("#preview strong")).to_have_text("data engineer")

    # a second save from the same editor is not a conflict: the version moved on with the first
    page.locator("#document-content").fill(text + "- Hours: 9 to 5\n")
    page.get_by_role("button", name="Save").click()
    expect(page.locator("#save-status")).to_have_text("Saved.")
    node = selectors.node_resolve(space=default_space(), path="/user/user_preferences.md")
    assert selectors.node_content(node=node).decode().endswith("- Hours: 9 to 5\n")

    page.get_by_role("link", name="requested_features.md").click()
    expect(page.locator("#document-content")).to_have_value(re.compile(r"^# Requested features"))
    screenshot("05-requested-features")
