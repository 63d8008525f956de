"""The live trace of a search in a real browser: steps written while the page is open appear
without a reload, a step fetches what its LLM call was shown only when first opened and stays
open, and polling stops once the search ends."""

import re
import time

import pytest
from playwright.sync_api import expect

from memory import selectors
from memory.models import Search
from tests.browser.test_dashboard import log_in
from tests.factories import NodeFactory, SearchFactory, SearchStepFactory, default_space
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
