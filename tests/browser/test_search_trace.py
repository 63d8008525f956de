"""The live trace of a search in a real browser: steps written while the page is open appear
without a reload, a step fetches what its LLM call was shown only when first opened and stays
open, and polling stops once the search ends. Its end: the answer rendered, the paths it cites,
how long it took; the question it waits on, answered there; and the folder picker that chooses
where a search starts. Nothing is reported on the console."""

import re
import time
from datetime import timedelta

import pytest
from playwright.sync_api import expect

from memory import selectors, services
from memory.models import Search, SearchQuestion
from tests.browser.test_dashboard import log_in
from tests.factories import DocumentFactory, NodeFactory, SearchFactory, SearchStepFactory, default_space, system
from tests.llm.factories import make_call

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("memory_roots")]

SCRIPT = "<script>window.pwned = 1</script>"


def test_steps_appear_live_and_polling_stops_when_the_search_ends(page, live_server, screenshot):
    references = selectors.node_internal_folder(space=default_space(), name="references")
    ops = NodeFactory(parent=references, name="ops", description="Operations notes.")
    search = SearchFactory(questions=[f"Where are the deployment notes? {SCRIPT}"], status=Search.Status.RUNNING)
    polls: list[str] = []
    page.on("request", lambda request: polls.append(request.url) if "?after=" in request.url else None)
    call_fetches: list[str] = []
    page.on("request", lambda request: call_fetches.append(request.url) if "/call/" in request.url else None)

    log_in(page, live_server)
    page.goto(f"{live_server.url}/searches/{search.pk}/")
    steps = page.locator("#steps > li")
    expect(page.locator("#search-status")).to_have_text("running")
    expect(page.locator("#no-steps")).to_be_visible()
    expect(steps).to_have_count(0)

    # The worker writes a step: it appears without a reload, and the path follows it.
    call = make_call(messages=[{"role": "user", "content": f"1. ops {SCRIPT}"}], reply='{"choice": 1}', latency_ms=250)
    SearchStepFactory(search=search, kind="route", node=references, summary="Entered ops.", llm_call=call)
    Search.objects.filter(pk=search.pk).update(
        llm_calls=1,
        prompt_tokens=call.prompt_tokens,
        completion_tokens=call.completion_tokens,
        state={**search.state, "trail": [ops.pk], "visited": [references.pk]},
    )
    expect(steps).to_have_count(1)
    expect(steps.first).to_contain_text("Entered ops.")
    expect(page.locator("#trail .trail-current")).to_have_text("ops")
    expect(page.locator("#no-steps")).to_have_count(0)

    # Closed, the step has only its spend; opened, it fetches what the LLM was shown and
    # replied, shown as text; later polls leave it open.
    expect(steps.first.locator("summary")).to_contain_text("ms ·")
    expect(steps.first.locator(".llm-message")).to_have_count(0)
    assert call_fetches == []
    steps.first.locator("summary").click()
    expect(steps.first.locator(".llm-message pre")).to_have_text(f"1. ops {SCRIPT}")
    expect(steps.first.locator(".llm-reply")).to_have_text('{"choice": 1}')
    assert call_fetches == [f"{live_server.url}/searches/{search.pk}/steps/1/call/"]
    SearchStepFactory(search=search, kind="read", node=ops, summary="Read the notes.")
    expect(steps).to_have_count(2)
    expect(steps.first.locator("details")).to_have_attribute("open", "")
    expect(steps.first.locator(".llm-message pre")).to_have_text(f"1. ops {SCRIPT}")
    assert page.evaluate("window.pwned") is None
    # Closed and opened again, it keeps what it fetched and fetches nothing more.
    steps.first.locator("summary").click()
    expect(steps.first.locator("details")).not_to_have_attribute("open", "")
    steps.first.locator("summary").click()
    expect(steps.first.locator(".llm-message pre")).to_have_text(f"1. ops {SCRIPT}")
    # A step without an LLM call fetches nothing.
    steps.nth(1).locator("summary").click()
    expect(steps.nth(1)).to_contain_text("No LLM call in this step.")
    assert len(call_fetches) == 1, call_fetches
    screenshot("10-search-running")

    # The search ends: the last step and the result come in, and the polling stops.
    SearchStepFactory(search=search, kind="finish", summary="Answered.")
    result = {
        "answers": [{"question": search.questions[0], "answer": "In ops/deploy.md.", "node_ids": [], "complete": True}],
        "nodes": [],
        "open_questions": [],
        "ended_because": "answered",
    }
    Search.objects.filter(pk=search.pk).update(status=Search.Status.DONE, ended_because="answered", result=result)
    expect(page.locator("#search-status")).to_have_text("done")
    expect(steps).to_have_count(3)
    expect(page.locator("#result")).to_contain_text("In ops/deploy.md.")
    expect(page.locator("#trace")).not_to_have_attribute("hx-trigger", re.compile("."))
    expect(page.get_by_role("button", name="Cancel search")).to_have_count(0)
    screenshot("11-search-done")

    seen = len(polls)
    time.sleep(2.5)  # more than two polling intervals
    assert len(polls) == seen, polls[seen:]
    assert seen >= 3

    page.get_by_role("link", name="all searches").click()
    row = page.locator(f"#search-{search.pk}")
    expect(row).to_contain_text("done")
    expect(row).to_contain_text(f"Where are the deployment notes? {SCRIPT}")
    screenshot("12-searches")


def test_an_ended_search_shows_its_answer_rendered_the_paths_it_cites_and_how_long_it_took(
    page, live_server, screenshot, console_errors
):
    references = selectors.node_internal_folder(space=default_space(), name="references")
    ops = NodeFactory(parent=references, name="ops")
    deploy = DocumentFactory(parent=ops, name="deploy.md")
    gone = DocumentFactory(parent=ops, name="old.md")
    services.node_delete(node=gone, by=system())
    text = f"See the **deploy** notes.\n\n{SCRIPT}\n\n[run it](javascript:window.pwned=2)"
    answers = [{"question": "Where?", "answer": text, "node_ids": [deploy.pk, gone.pk], "complete": True}]
    search = SearchFactory(status=Search.Status.DONE, ended_because="answered", result={"answers": answers})
    Search.objects.filter(pk=search.pk).update(
        started_at=search.created_at, finished_at=search.created_at + timedelta(minutes=2, seconds=5)
    )

    log_in(page, live_server)
    page.goto(f"{live_server.url}/searches/{search.pk}/")
    result = page.locator("#result")
    expect(result.locator(".answer-text strong")).to_have_text("deploy")
    expect(result.locator(".cited a")).to_have_text("/references/ops/deploy.md")
    expect(result.locator(".cited a")).to_have_attribute("href", f"/memory/{deploy.pk}/")
    expect(result.locator(".cited")).to_contain_text(f"{gone.pk} (deleted)")
    expect(page.locator("#took")).to_have_text("2 min 5 s")
    link = result.get_by_text("run it")
    expect(link).not_to_have_attribute("href", re.compile("."))
    link.click()
    assert page.evaluate("window.pwned") is None
    screenshot("13-search-answer")
    assert console_errors == []


def test_a_waiting_search_puts_its_question_and_takes_the_answer_on_its_trace(
    page, live_server, screenshot, console_errors
):
    search = SearchFactory(questions=["Which port does staging use?"], status=Search.Status.WAITING)
    make_call(served=search, provider="offline", model="offline")  # the walk ran on heuristics
    SearchQuestion.objects.create(search=search, questions=search.questions)
    log_in(page, live_server)
    page.goto(f"{live_server.url}/searches/{search.pk}/")
    question = page.locator("#search-question")
    expect(question).to_contain_text("A question for you")
    expect(question).to_contain_text("Which port does staging use?")
    # a question, in the colours of the page's accent, not an error's
    expect(question).to_have_css("background-color", "rgb(237, 241, 255)")
    expect(page.locator(".alert-error")).to_have_count(0)
    screenshot("14-search-question")

    # What is typed stays while the trace polls around it: the poll after the next one is sent
    # once the next one's answer has been swapped in.
    answer = question.get_by_label("Your answer")
    answer.fill("Port **8443**.")
    for _ in range(2):
        page.wait_for_event("requestfinished", lambda request: "?after=" in request.url)
    expect(answer).to_have_value("Port **8443**.")

    question.get_by_role("button", name="Answer").click()
    expect(page).to_have_url(f"{live_server.url}/searches/{search.pk}/")
    expect(page.locator("#search-status")).to_have_text("done")
    result = page.locator("#result")
    expect(result.locator(".badge-user-answer")).to_have_text("user's answer")
    expect(result.locator(".badge-heuristic")).to_have_count(0)
    expect(result.locator(".answer-text strong")).to_have_text("8443")
    expect(result.locator(".cited a")).to_have_text(f"/user/Answer to search {search.pk}")
    expect(page.locator("#took")).to_have_text(re.compile(r"^\d+(\.\d)? s$"))
    expect(page.locator("#search-question")).to_have_count(0)
    screenshot("15-search-answered")
    assert console_errors == []


def test_the_start_form_picks_the_folder_to_start_in(page, live_server, screenshot, console_errors, monkeypatch):
    monkeypatch.setattr("memory.tasks.search_run.delay", lambda **kwargs: None)
    references = selectors.node_internal_folder(space=default_space(), name="references")
    ops = NodeFactory(parent=references, name="ops")
    NodeFactory(parent=ops, name="runbooks")

    log_in(page, live_server)
    page.goto(f"{live_server.url}/searches/")
    form = page.locator("#start-search")
    expect(form.locator(".folder-path")).to_have_text(["/swarmstar", "/user", "/projects", "/references"])
    expect(form.get_by_label("Start at the top of the tree")).to_be_checked()
    form.get_by_label("Find a folder").fill("ops")
    expect(form.locator(".folder-path")).to_have_text(["/references/ops"])
    form.get_by_label("/references/ops").check()
    form.get_by_label("Questions").fill("Where are the runbooks?")
    screenshot("16-search-start-picker")
    form.get_by_role("button", name="Start").click()
    expect(page).to_have_url(re.compile(r"/searches/\d+/$"))
    first = Search.objects.get()
    assert first.start_node_id == ops.pk
    expect(page.locator("#trail a").first).to_have_text("ops")

    # A path (or an id) pasted finds its folder alone, chosen already: find, then start.
    page.goto(f"{live_server.url}/searches/")
    form.locator("summary").click()
    form.get_by_label("Find a folder").fill("/references/ops/runbooks")
    expect(form.get_by_label("/references/ops/runbooks")).to_be_checked()
    expect(form.get_by_label("Start at the top of the tree")).not_to_be_checked()
    form.get_by_label("Questions").fill("Which runbook?")
    form.get_by_role("button", name="Start").click()
    expect(page).to_have_url(re.compile(r"/searches/\d+/$"))
    assert Search.objects.exclude(pk=first.pk).get().start_node.name == "runbooks"
    assert console_errors == []
