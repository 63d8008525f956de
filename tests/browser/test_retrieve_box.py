"""The memory page's search box in a real browser: typing finds the passage, a result opens the
node at it, and nothing of the text runs as HTML."""

import io

import pytest
from playwright.sync_api import expect

from memory import selectors, services
from tests.archives import tar_gz
from tests.browser.test_dashboard import log_in
from tests.factories import DocumentFactory, NodeFactory, ProjectFactory, UserFactory, acting

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("memory_roots")]

SCRIPT = "<script>window.pwned = 1</script><img src=x onerror='window.pwned = 2'>"
SESSION = f"Bo: good morning.\n\nAna: I moved to Lisbon last spring for the new job. {SCRIPT}\n\nBo: nice."


@pytest.fixture(autouse=True)
def full_text_only(settings):
    settings.MEMSITE_EMBEDDINGS = "off"


def test_type_a_query_open_a_result_and_see_the_passage(page, live_server, screenshot):
    logs = NodeFactory(name="logs", description="Sessions, one per day.")
    DocumentFactory(parent=logs, name="session-3", description="Session 3", content=SESSION.encode())
    DocumentFactory(parent=logs, name="session-4", description="Session 4", content=b"Bo: we talked of boats.")

    log_in(page, live_server)
    results = page.locator("#find-results")
    expect(results.locator(".find-hint")).to_be_visible()
    page.get_by_role("searchbox", name="Search memory").fill("Where did Ana move?")
    hits = results.locator(".find-hit")
    expect(hits).to_have_count(1)
    expect(hits.first.locator(".find-link")).to_have_text("session-3")
    expect(hits.first.locator(".find-path")).to_have_text("/swarmstar/logs/session-3")
    expect(hits.first.locator(".find-snippet mark").first).to_have_text("Ana")
    expect(hits.first.locator(".find-snippet")).to_contain_text("<script>window.pwned = 1</script>")
    expect(hits.first.locator(".find-scores")).to_contain_text("vector —")
    screenshot("40-find-results")

    hits.first.locator(".find-link").click()
    detail = page.locator("#detail")
    expect(detail.locator("h1").first).to_have_text("session-3")
    box = detail.locator("#passage")
    expect(box).to_contain_text("Matched passage (characters")
    # A passage is a line: the one that matched.
    expect(box.locator(".passage-text")).to_have_text(SESSION.split("\n\n")[1])
    expect(box).to_be_in_viewport()
    # the tree, which had not loaded the node, comes open down to it
    session = page.locator("#tree-roots .node-link", has_text="session-3")
    expect(session).to_be_visible()
    expect(session).to_have_attribute("aria-current", "location")
    expect(page.get_by_role("searchbox", name="Search memory")).to_have_value("Where did Ana move?")
    assert page.evaluate("window.pwned") is None
    screenshot("41-find-opened")

    # once the tree shows it, opening it again only opens its folder again, closed meanwhile
    logs_folder = page.locator("#tree-roots details", has=page.locator(f"#link-{logs.pk}"))
    logs_folder.locator(f"#link-{logs.pk} ~ .count").click()  # the summary, not the link
    expect(session).to_be_hidden()
    hits.first.locator(".find-link").click()
    expect(session).to_be_visible()

    page.get_by_role("searchbox", name="Search memory").fill("")
    expect(results.locator(".find-hint")).to_be_visible()
    page.get_by_role("searchbox", name="Search memory").fill("x" * 2_001)
    expect(results.locator(".alert-error")).to_contain_text("over the limit of 2,000")


def test_a_result_in_a_long_text_file_scrolls_to_the_passage_marked_in_place(page, live_server):
    project = ProjectFactory()
    lines = [f"line {number}: nothing to see" for number in range(400)]
    lines[300] = "line 300: the pelican moved in"
    user = UserFactory(username="importer")
    archive = io.BytesIO(tar_gz({"log.txt": "\n".join(lines).encode()}))
    services.project_import(project=project, archive=archive, by=acting(user))
    assert [node.name for node in selectors.project_files(project=project)] == ["log.txt"]

    log_in(page, live_server)
    page.get_by_role("searchbox", name="Search memory").fill("pelican")
    page.locator("#find-results .find-link").first.click()
    mark = page.locator("#detail mark.passage-mark")
    expect(mark).to_contain_text("line 300: the pelican moved in")
    expect(mark).to_be_in_viewport()
    expect(page.locator("#detail .passage-box")).to_have_count(0)
