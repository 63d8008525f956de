"""Curating memory in a real browser: edit a document in its panel with a live preview and a
conflict answered, move a node with the folder picker, read a folder's contents and a node's
history, open a deep link with the tree down to the node, and upload into a project opened
from the panels, with nothing reported on the console. Also at a phone's width."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from memory import selectors, services
from tests.archives import tar_gz
from tests.browser.conftest import ARTIFACTS, htmx_settled
from tests.browser.test_dashboard import log_in
from tests.factories import DocumentFactory, NodeFactory, ProjectFactory, UserFactory, acting, default_space, system

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("memory_roots")]


def unexpected(errors: list[str]) -> list[str]:
    """The errors but those of a refused write, which the browser and htmx report on the
    console as they should (its answer is shown in the page)."""
    return [error for error in errors if "status of 409" not in error and "Error Code 409" not in error]


def internal(name: str):
    return selectors.node_internal_folder(space=default_space(), name=name)


def open_at(page, live_server, node) -> None:
    log_in(page, live_server)
    page.goto(f"{live_server.url}/memory/{node.pk}/")
    expect(page.locator("#detail h1").first).to_have_text(node.name)


def test_edit_a_document_in_its_panel_with_a_preview_and_a_conflict(page, live_server, screenshot, console_errors):
    document = DocumentFactory(parent=internal("swarmstar"), name="plan.md", content=b"# Plan\n\n- one\n")
    open_at(page, live_server, document)
    detail = page.locator("#detail")
    detail.get_by_text("Edit content", exact=True).click()
    editor = detail.locator("#document-content")
    expect(editor).to_have_value("# Plan\n\n- one\n")
    htmx_settled(page)  # the editor is swapped in: typed into before htmx hooks it up, it shows no preview

    text = "# Plan\n\n- one\n- **two**\n"
    editor.fill(text)  # as a paste: an input event and no key, which the preview follows too
    expect(detail.locator("#preview strong")).to_have_text("two")
    screenshot("curation-01-editor-preview")
    detail.get_by_role("button", name="Save").click()
    expect(detail.locator("#save-status")).to_have_text("Saved.")
    assert selectors.node_content(node=document) == text.encode()
    expect(detail.locator("#node-content strong")).to_have_text("two")  # the panel shows the saved text

    # someone else writes it: the next save is refused, says so, and the text typed stays
    services.node_content_set(node=document, data=b"# Theirs\n", by=acting(UserFactory(username="bo")))
    editor.fill(text + "- three\n")
    detail.get_by_role("button", name="Save").click()
    expect(detail.locator("#save-status [role=alert]")).to_contain_text("The node was changed by someone else")
    expect(detail.locator("#save-status a")).to_have_text("Reload")
    expect(editor).to_have_value(text + "- three\n")
    assert selectors.node_content(node=document) == b"# Theirs\n"
    screenshot("curation-02-editor-conflict")
    assert unexpected(console_errors) == []


def test_rename_a_document_after_saving_its_text_in_the_panel(page, live_server, screenshot, console_errors):
    document = DocumentFactory(parent=internal("swarmstar"), name="notes.md", content=b"# Notes\n")
    open_at(page, live_server, document)
    detail = page.locator("#detail")
    expect(detail.locator("#node-version")).to_contain_text("1 ")
    detail.get_by_text("Edit content", exact=True).click()
    expect(detail.locator("#document-content")).to_have_value("# Notes\n")
    htmx_settled(page)
    detail.locator("#document-content").fill("# Notes\n\nmore\n")
    detail.get_by_role("button", name="Save").click()
    expect(detail.locator("#save-status")).to_have_text("Saved.")
    expect(detail.locator("#node-version")).to_contain_text("2 ")
    expect(detail.locator("#node-content-size")).to_have_text("14 bytes")  # the saved text's, not the old

    detail.get_by_text("Rename or describe", exact=True).click()
    detail.get_by_label("Name").fill("renamed.md")
    detail.locator("form[action$='/update/'] button[type=submit]").click()
    expect(detail.locator(".alert-success")).to_have_text("Saved.")
    expect(detail.locator(".detail-header h1")).to_have_text("renamed.md")
    expect(page.locator(f"#link-{document.pk}")).to_have_text("renamed.md")
    assert selectors.node_fresh(node=document).name == "renamed.md"
    screenshot("curation-06-renamed-after-save")
    assert unexpected(console_errors) == []


def test_move_a_node_with_the_folder_picker(page, live_server, screenshot, console_errors):
    reports = NodeFactory(parent=internal("swarmstar"), name="reports")
    weekly = DocumentFactory(parent=reports, name="weekly.md")
    clash = NodeFactory(parent=internal("references"), name="archive")
    DocumentFactory(parent=clash, name="weekly.md")
    old = NodeFactory(parent=internal("references"), name="old archive")
    open_at(page, live_server, weekly)
    detail = page.locator("#detail")
    detail.get_by_text("Move", exact=True).click()
    expect(detail.locator(".folder-path")).to_have_text(["/swarmstar", "/user", "/projects", "/references"])

    detail.get_by_label("Find a folder").fill("archive")
    expect(detail.locator(".folder-path")).to_have_text(["/references/archive", "/references/old archive"])
    screenshot("curation-03-move-picker")
    detail.locator(f"input[value='{clash.pk}']").check()
    detail.get_by_role("button", name="Move here").click()
    expect(detail.locator(".alert-error")).to_have_text("'archive' already has a child named 'weekly.md'.")
    screenshot("curation-04-move-refused")

    detail.get_by_label("Find a folder").fill("old")
    detail.locator(f"input[value='{old.pk}']").check()
    detail.get_by_role("button", name="Move here").click()
    expect(detail.locator(".alert-success")).to_have_text("Moved 'weekly.md' to /references/old archive.")
    assert selectors.node_fresh(node=weekly).parent_id == old.pk
    # out of the reports folder, which stays open; into the references folder when it opens
    expect(page.locator(f"#item-{reports.pk} > details")).to_have_attribute("open", "")
    expect(page.locator(f"#children-{reports.pk} #item-{weekly.pk}")).to_have_count(0)
    expect(page.locator(f"#count-{reports.pk}")).to_have_text("0")
    references = internal("references")
    page.locator(f"#item-{references.pk} > details > summary .caret").click()
    page.locator(f"#item-{old.pk} > details > summary .caret").click()
    expect(page.locator(f"#children-{old.pk} #item-{weekly.pk}")).to_be_visible()
    screenshot("curation-05-moved")
    assert unexpected(console_errors) == []


def test_a_folder_lists_its_children(page, live_server, screenshot):
    folder = NodeFactory(parent=internal("swarmstar"), name="reports")
    NodeFactory(parent=folder, name="2024")
    DocumentFactory(parent=folder, name="weekly.md", content=b"# Weekly\n")
    open_at(page, live_server, folder)
    contents = page.locator("#detail .node-children")
    expect(contents.locator(".child-link")).to_have_text(["2024", "weekly.md"])
    expect(contents.locator(".badge")).to_have_text(["folder", "document"])
    screenshot("curation-06-contents")
    contents.get_by_role("link", name="weekly.md").click()
    expect(page.locator("#detail h1").first).to_have_text("weekly.md")
    expect(page.locator("#detail .markdown h1")).to_have_text("Weekly")


def test_a_deep_link_opens_the_tree_which_stays_open_through_writes(page, live_server, screenshot, console_errors):
    outer = NodeFactory(parent=internal("swarmstar"), name="outer")
    inner = NodeFactory(parent=outer, name="inner")
    document = DocumentFactory(parent=inner, name="deep.md")
    open_at(page, live_server, document)
    for folder in (internal("swarmstar"), outer, inner):
        expect(page.locator(f"#item-{folder.pk} > details")).to_have_attribute("open", "")
    link = page.locator(f"#link-{document.pk}")
    expect(link).to_be_visible()
    expect(link).to_have_attribute("aria-current", "location")
    screenshot("curation-07-deep-link")

    # a folder created in `outer` joins the open tree, which does not collapse
    page.locator(f"#link-{outer.pk}").click()
    expect(page.locator("#detail h1").first).to_have_text("outer")
    detail = page.locator("#detail")
    detail.get_by_text("New in this folder").click()
    form = detail.locator("form.create-form")
    form.get_by_label("Type").select_option("folder")
    form.get_by_label("Name").fill("fresh")
    form.get_by_role("button", name="Create").click()
    expect(detail.locator(".alert-success")).to_have_text("Created 'fresh'.")
    fresh = selectors.node_resolve(space=default_space(), path="/swarmstar/outer/fresh")
    expect(page.locator(f"#children-{outer.pk} #item-{fresh.pk}")).to_be_visible()
    expect(page.locator(f"#item-{inner.pk} > details")).to_have_attribute("open", "")
    expect(link).to_be_visible()

    page.once("dialog", lambda dialog: dialog.accept())
    detail.get_by_role("button", name="Delete folder").click()
    expect(detail.locator(".alert-success")).to_have_text("Deleted 'fresh'.")
    expect(page.locator(f"#item-{fresh.pk}")).to_have_count(0)
    expect(page.locator(f"#item-{inner.pk} > details")).to_have_attribute("open", "")
    expect(link).to_be_visible()
    screenshot("curation-08-tree-kept-open")
    expect(page.locator(f"#children-{inner.pk} .tree-empty")).to_be_hidden()

    # deleting a folder's last item leaves it saying so
    link.click()
    expect(page.locator("#detail h1").first).to_have_text("deep.md")
    page.once("dialog", lambda dialog: dialog.accept())
    detail.get_by_role("button", name="Delete").click()
    expect(detail.locator(".alert-success")).to_have_text("Deleted 'deep.md'.")
    expect(page.locator(f"#children-{inner.pk} .tree-empty")).to_have_text("Empty folder")
    assert console_errors == []


def test_a_node_created_in_a_folder_showing_its_first_page_is_shown_once(
    page, live_server, screenshot, console_errors, settings
):
    settings.MEMSITE_CHILDREN_PAGE_SIZE = 2
    folder = NodeFactory(parent=internal("swarmstar"), name="many")
    documents = [DocumentFactory(parent=folder, name=f"{number}.md") for number in range(3)]
    open_at(page, live_server, documents[0])
    children = page.locator(f"#children-{folder.pk}")
    expect(children.locator(".tree-more")).to_have_count(1)

    page.locator(f"#link-{folder.pk}").click()
    expect(page.locator("#detail h1").first).to_have_text("many")
    detail = page.locator("#detail")
    detail.get_by_text("New in this folder").click()
    form = detail.locator("form.create-form")
    form.get_by_label("Name").fill("new.md")
    form.get_by_role("button", name="Create").click()
    expect(detail.locator(".alert-success")).to_have_text("Created 'new.md'.")
    expect(children.locator(".node-link")).to_have_text(["0.md", "1.md"])  # the first page, again

    children.get_by_role("button", name="Load more").click()
    expect(children.locator(".node-link")).to_have_text(["0.md", "1.md", "2.md", "new.md"])
    expect(children.locator(".tree-more")).to_have_count(0)
    screenshot("curation-09-created-in-a-paged-folder")
    assert console_errors == []


def test_a_nodes_history(page, live_server, screenshot):
    bo = UserFactory(username="bo")
    document = DocumentFactory(parent=internal("swarmstar"), name="notes.md", by=acting(bo))
    services.node_update(node=document, description="Notes of the week.", by=acting(bo))
    services.node_content_set(node=document, data=b"# Notes\n", by=acting(bo))
    open_at(page, live_server, document)
    page.locator("#detail").get_by_text("History", exact=True).click()
    rows = page.locator("#detail .history-table tbody tr")
    expect(rows).to_have_count(3)
    expect(rows.locator(".history-action")).to_have_text(["content written", "updated", "created"])
    expect(rows.locator(".history-version")).to_have_text(["2 → 3", "1 → 2", "– → 1"])
    expect(rows.first).to_contain_text("bo")
    screenshot("curation-09-history")


def test_a_version_is_compared_and_restored_without_script(chromium_browser, live_server):
    """The history's links lead to a version's diff and to its restore's confirmation: plain
    pages and a form, which work with script off."""
    bo = UserFactory(username="bo")
    document = DocumentFactory(parent=internal("swarmstar"), name="notes.md", content=b"one\ntwo\n", by=acting(bo))
    services.node_content_set(node=document, data=b"one\n<b>two</b>\n", by=acting(bo))
    context = chromium_browser.new_context(viewport={"width": 1280, "height": 860}, java_script_enabled=False)
    page = context.new_page()
    page.set_default_timeout(10_000)
    try:
        log_in(page, live_server)
        page.goto(f"{live_server.url}/memory/{document.pk}/history/")
        page.locator(".history-table").get_by_role("link", name="Changes").first.click()
        expect(page.locator("#version-diff .diff-added")).to_have_text(["+<b>two</b>"])  # as text, not markup
        expect(page.locator("#version-diff .diff-removed")).to_have_text(["-two"])
        page.screenshot(path=str(_artifact("curation-14-version-diff")), full_page=True)
        page.goto(f"{live_server.url}/memory/{document.pk}/history/")
        page.locator(".history-table").get_by_role("link", name="Restore…").click()
        expect(page.locator("h1")).to_have_text("Restore version 1 of 'notes.md'?")
        page.screenshot(path=str(_artifact("curation-15-restore-confirmation")), full_page=True)
        page.get_by_role("button", name="Restore version 1").click()
        expect(page.locator(".flash")).to_have_text("Restored version 1 of 'notes.md' as version 3.")
        assert selectors.node_content(node=document) == b"one\ntwo\n"
    finally:
        context.close()


def test_upload_into_a_project_opened_from_the_panels(page, live_server, screenshot, console_errors):
    project = ProjectFactory(name="todo-api")
    projects = internal("projects")
    log_in(page, live_server)
    # to the project through the panels: the tree, which showed only its roots, opens down to
    # it, the project's own files not loaded
    page.locator(".root-cards").get_by_role("link", name="projects").click()
    page.locator("#detail .node-children").get_by_role("link", name="todo-api").click()
    expect(page.locator("#detail h1").first).to_have_text("todo-api")
    expect(page.locator(f"#link-{project.pk}")).to_have_attribute("aria-current", "location")
    expect(page.locator(f"#item-{project.pk} > details")).not_to_have_attribute("open", "")

    detail = page.locator("#detail")
    detail.get_by_text("Project archive").click()
    archive = {"name": "p.tar.gz", "mimeType": "application/gzip"}
    files = {"README.md": b"# todo\n", "src/app.py": b"print(1)\n"}
    detail.locator("input[type=file]").set_input_files({**archive, "buffer": tar_gz(files)})
    detail.get_by_role("button", name="Upload", exact=True).click()
    expect(detail.locator(".alert-success")).to_have_text("Imported 2 files and 1 folder.")

    # the project opened in the tree, then updated by merge: its list is refilled in place
    page.locator(f"#item-{project.pk} > details > summary .caret").click()
    expect(page.locator(f"#children-{project.pk} > li.tree-item")).to_have_count(2)
    detail.get_by_text("Project archive").click()
    changed = {"README.md": b"# todo, updated\n", "NOTES.md": b"notes\n", "src/app.py": b"print(1)\n"}
    detail.locator("input[type=file]").set_input_files({**archive, "buffer": tar_gz(changed)})
    detail.get_by_label("If the project has the archive's paths").select_option("merge")
    detail.get_by_role("button", name="Upload", exact=True).click()
    expect(detail.locator(".alert-success")).to_have_text(
        "Imported 1 file and 0 folders, updated 1 file, left 1 file unchanged."
    )
    expect(page.locator(f"#children-{project.pk} > li.tree-item")).to_have_count(3)
    expect(page.locator(f"#item-{projects.pk} > details")).to_have_attribute("open", "")
    screenshot("curation-10-upload-merged")
    assert console_errors == []


def test_the_panels_fit_a_phone(chromium_browser, live_server):
    folder = NodeFactory(parent=internal("swarmstar"), name="reports-with-a-rather-long-name-for-a-phone")
    document = DocumentFactory(parent=folder, name="weekly-report-of-the-swarm-with-a-long-name.md")
    UserFactory(username="ada")
    context = chromium_browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    page.set_default_timeout(10_000)
    try:
        page.goto(f"{live_server.url}/login/?next=/memory/{document.pk}/")
        page.get_by_label("Username").fill("ada")
        page.get_by_label("Password").fill("password")
        page.get_by_role("button", name="Log in").click()
        detail = page.locator("#detail")
        for action in ("Edit content", "Move", "History"):
            detail.get_by_text(action, exact=True).click()
        expect(detail.locator("#document-content")).to_be_visible()
        expect(detail.locator(".folder-path").first).to_be_visible()
        expect(detail.locator(".history-table")).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        page.screenshot(path=str(_artifact("curation-11-phone-document")), full_page=True)
        page.goto(f"{live_server.url}/memory/{folder.pk}/")
        expect(detail.locator(".child-link")).to_have_count(1)
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        page.screenshot(path=str(_artifact("curation-12-phone-folder")), full_page=True)
        gone = DocumentFactory(parent=folder, name="gone.md")
        gone_id = gone.pk
        services.node_delete(node=gone, by=system())
        for address in (f"/memory/{gone_id}/history/", f"/memory/{document.pk}/move/folders/?q=reports"):
            page.goto(f"{live_server.url}{address}")
            expect(page.locator("#detail h1").first).to_be_visible()
            assert page.evaluate("document.documentElement.scrollWidth") <= 390, address
        page.screenshot(path=str(_artifact("curation-13-phone-picker")), full_page=True)
    finally:
        context.close()


def _artifact(name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS / f"{name}.png"
