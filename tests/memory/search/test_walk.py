"""The walk of seed 001 with a scripted LLM behind the real openai client."""

import json

import pytest
from django.utils import timezone

from memory import services
from memory.models import Node, Search, SearchQuestion, SearchStep, ToolCall
from memory.search.state import WalkState
from memsite.llm.models import LLMCall
from tests.factories import acting, system
from tests.fake_openai import Reply
from tests.memory.search.conftest import run_search
from tests.memory.search.tree import NOTHING, build_tree, found, pick, shown

QUESTION = "How large should shared_buffers be?"
Kind = SearchStep.Kind


@pytest.fixture
def tree(db):
    return build_tree()


def kinds(search: Search) -> list[str]:
    return list(search.steps.values_list("kind", flat=True))


def state(search: Search) -> WalkState:
    return WalkState.model_validate(search.state)


def test_routes_down_marks_unviable_options_and_answers(llm, tree):
    llm.script(
        pick("references", unviable=("swarmstar",)),
        pick("databases", unviable=("frontend",)),
        pick("pg-tuning.md"),
        found("A quarter of the RAM."),
    )
    search = run_search([QUESTION])

    assert search.status == Search.Status.DONE and search.ended_because == "answered"
    [answer] = search.result["answers"]
    pg = tree["pg-tuning.md"].pk
    # Not a quotation: cited as the passage sharing the most words with it, the whole text here.
    citations = [{"node": pg, "start": 0, "end": len("Set shared_buffers to a quarter of the RAM."), "date": None}]
    assert answer == {
        "question": QUESTION,
        "answer": "A quarter of the RAM.",
        "node_ids": [pg],
        "citations": citations,
        "complete": True,
    }
    walked = state(search)
    assert set(walked.unviable) == {Node.objects.get(name="swarmstar").pk, tree["frontend"].pk}
    assert walked.visited == [tree["pg-tuning.md"].pk]  # kept apart from the unviable marks
    assert kinds(search) == [Kind.ROUTE, Kind.ROUTE, Kind.ROUTE, Kind.READ, Kind.FINISH]
    assert search.llm_calls == 4 == LLMCall.objects.filter(served_id=search.pk).count()
    assert search.prompt_tokens == sum(LLMCall.objects.values_list("prompt_tokens", flat=True))
    # The step keeps the call: what the LLM was shown and what it replied.
    read = search.steps.get(kind=Kind.READ)
    assert "shared_buffers" in json.dumps(read.llm_call.messages) and "quarter" in read.llm_call.reply


def test_a_dead_end_sends_the_walk_back_to_the_parent(llm, tree):
    llm.script(
        pick("references"),
        pick("frontend"),
        pick("css.md"),
        NOTHING,
        pick("databases"),  # frontend is visited now: only databases is offered
        pick("pg-tuning.md"),
        found("A quarter of the RAM."),
    )
    search = run_search([QUESTION])

    assert search.ended_because == "answered"
    backtrack = search.steps.get(kind=Kind.BACKTRACK)
    assert backtrack.node_id == tree["frontend"].pk
    assert set(shown(llm.requests[4])) == {"databases"}
    assert tree["frontend"].pk in state(search).visited


def test_a_large_folder_is_shown_in_batches_best_first(llm, tree, settings):
    settings.MEMSITE_SEARCH_ROUTE_TOKENS = 120
    big = services.node_create(
        parent=tree["references"], type="folder", name="archive", description="Old notes.", by=system()
    )
    for number in range(30):
        services.node_create(
            parent=big, type="folder", name=f"misc-{number:02}", description="Miscellaneous things.", by=system()
        )
    services.node_create(
        parent=big,
        type="folder",
        name="shared_buffers notes",
        description="How large shared_buffers should be.",
        by=system(),
    )
    llm.script(pick(None), Reply.json({"choice": 2}))
    search = run_search([QUESTION], start_node=big, max_llm_calls=2)

    first, second = (shown(request) for request in llm.requests)
    assert next(iter(first)) == "shared_buffers notes"  # pre-ranked by its words
    assert len(first) < 31 and not set(first) & set(second)  # the next batch shows others
    entered = Node.objects.get(pk=search.steps.get(number=2).detail["chosen"])
    assert second[entered.name] == 2


def test_an_option_that_was_not_shown_is_repaired_never_followed(llm, tree):
    llm.script(Reply.json({"choice": 9, "unviable": []}), pick("references"), pick(None), pick(None))
    search = run_search([QUESTION], max_llm_calls=3)

    repair = llm.requests[1].messages
    assert repair[-2]["content"] == json.dumps({"choice": 9, "unviable": []})
    assert "less than or equal to 4" in repair[-1]["content"]
    assert search.steps.first().detail["chosen"] == tree["references"].pk


def test_an_option_never_repaired_is_rejected(llm, tree):
    llm.script(*[Reply.json({"choice": 7, "unviable": [1]})] * 2)
    search = run_search([QUESTION], max_llm_calls=1)

    step = search.steps.first()
    assert step.detail["rejected"] is True and "chosen" not in step.detail
    assert state(search).trail == [] and state(search).unviable == []
    assert step.llm_call.status == LLMCall.Status.ERROR


def test_a_first_reading_whose_reply_is_rejected_marks_no_node_read(llm, tree, settings):
    settings.MEMSITE_SEARCH_FIRST_READ_TOKENS = 1_500
    llm.script(*[Reply.json({"findings": [{"question": 7, "answer": "x"}]})] * 2)
    search = run_search([QUESTION], max_llm_calls=1)

    step = search.steps.first()
    assert step.kind == Kind.READ and step.detail["rejected"] is True
    assert step.detail["shown"] == [tree["pg-tuning.md"].pk] and "read_whole" not in step.detail
    assert state(search).visited == [] and state(search).first_reading_done


def test_a_first_reading_marks_the_nodes_it_showed_whole_read(llm, tree, settings):
    settings.MEMSITE_SEARCH_FIRST_READ_TOKENS = 1_500
    llm.script(NOTHING)
    search = run_search([QUESTION], max_llm_calls=1)

    step = search.steps.first()
    assert step.kind == Kind.READ and step.node is None
    assert step.detail["shown"] == step.detail["read_whole"] == [tree["pg-tuning.md"].pk]
    assert state(search).visited == [tree["pg-tuning.md"].pk]


def test_new_questions_start_a_sub_search_whose_answer_is_handed_back(llm, tree):
    llm.script(
        pick("references"),
        pick("databases"),
        pick("pg-tuning.md"),
        found("A quarter of the RAM.", complete=False, new_questions=("How much RAM does the server have?",)),
        # the sub-search, from the top of the tree
        pick("user"),
        pick("machine.md"),
        found("16 GB."),
        # the parent again, reading the same node where the question arose, knowing more
        found("4 GB: a quarter of 16 GB."),
    )
    search = run_search([QUESTION], max_llm_calls=8)

    child = Search.objects.get(parent=search)
    assert child.depth == 1 and child.status == Search.Status.DONE and child.max_llm_calls == 4
    assert child.result["answers"][0]["answer"] == "16 GB."
    assert kinds(search)[3:7] == [Kind.READ, Kind.SUBSEARCH, Kind.HANDBACK, Kind.READ]
    assert "Answer to 'How much RAM does the server have?': 16 GB." in state(search).notes
    reread = llm.requests[7].messages
    assert "pg-tuning.md" in json.dumps(reread) and "16 GB." in json.dumps(reread)
    assert search.llm_calls == 8  # the child's calls count against the parent's budget
    assert search.ended_because == "answered"
    assert search.result["answers"][0]["answer"] == "4 GB: a quarter of 16 GB."


def test_an_exhausted_tree_restarts_with_what_was_learnt_then_ends_with_the_questions_open(llm, tree, settings):
    settings.MEMSITE_SEARCH_MAX_RESTARTS = 1
    llm.script(pick("pg-tuning.md"), found("Some of the RAM.", complete=False), pick(None))
    search = run_search([QUESTION], start_node=tree["databases"])

    assert kinds(search) == [Kind.ROUTE, Kind.READ, Kind.RESTART, Kind.ROUTE, Kind.FINISH]
    assert "Known so far about" in json.dumps(llm.requests[2].messages)  # the restart knows it
    assert search.status == Search.Status.DONE and search.ended_because == "exhausted"
    assert search.result["open_questions"] == [QUESTION]


def test_an_exhausted_tree_with_nothing_learnt_is_not_walked_again(llm, tree, settings):
    settings.MEMSITE_SEARCH_MAX_RESTARTS = 1
    llm.script(pick(None))
    search = run_search([QUESTION], start_node=tree["databases"])

    assert kinds(search) == [Kind.ROUTE, Kind.FINISH] and search.ended_because == "exhausted"


def test_ask_user_waits_for_the_answer_which_completes_the_search(llm, tree, user):
    llm.script(pick(None))
    search = run_search([QUESTION], start_node=tree["databases"], fallback="ask_user")

    assert search.status == Search.Status.WAITING
    question = SearchQuestion.objects.get(search=search, status=SearchQuestion.Status.PENDING)
    services.search_question_answer(question=question, answer="Use 4 GB.", by=acting(user))

    search.refresh_from_db()
    document = Node.objects.get(parent__name="user", name=f"Answer to search {search.pk}")
    assert search.status == Search.Status.DONE and search.ended_because == "answered by the user"
    assert search.result["answers"][0]["answer"] == "Use 4 GB."
    assert search.result["answers"][0]["node_ids"] == [document.pk]


def test_a_tool_call_with_the_same_arguments_reuses_its_result(llm, tree, settings):
    settings.MEMSITE_SEARCH_TOOLS = True
    settings.MEMSITE_SEARCH_MAX_RESTARTS = 1
    settings.MEMSITE_SEARCH_SETTLE_READS = 10  # the walk goes on after its partial answer
    arguments = Reply.json({"query": "PostgreSQL"})
    llm.script(
        pick("pg-tuning.md"),
        found("Some of the RAM.", complete=False),
        pick("full_text_search"),
        arguments,  # finds only pg-tuning.md, read already: nothing to offer
        # restarted, with what was learnt
        pick(None),
        pick("full_text_search"),
        arguments,  # the same call: its result is reused
        pick(None),
    )
    search = run_search([QUESTION], start_node=tree["databases"])

    assert ToolCall.objects.count() == 1 and ToolCall.objects.get().nodes == [tree["pg-tuning.md"].pk]
    first, second = search.steps.filter(kind=Kind.TOOL)
    assert first.detail["key"] == second.detail["key"] and second.detail["reused"] is True
    assert set(shown(llm.requests[7])) == {"pg-tuning.md"}  # the reused result, offered again
    assert llm.pending == 0


def test_tool_keys_hold_per_search_and_folder_for_exploring_and_per_space_for_saving():
    from memory.search.tools import FULL_TEXT, SAVE_ANSWER, NoArguments, QueryArguments

    query = QueryArguments(query="PostgreSQL")
    here = FULL_TEXT.key(query, space_id=1, scope=(1, "memory_a"))
    assert here == FULL_TEXT.key(QueryArguments(query="PostgreSQL"), space_id=1, scope=(1, "memory_a"))
    assert here != FULL_TEXT.key(query, space_id=1, scope=(1, "memory_b"))  # another subtree
    assert here != FULL_TEXT.key(query, space_id=1, scope=(2, "memory_a"))  # another search: the tree aged
    assert SAVE_ANSWER.key(NoArguments(), space_id=1, scope=(1, "a")) == SAVE_ANSWER.key(
        NoArguments(), space_id=1, scope=(2, "b")
    )
    assert SAVE_ANSWER.key(NoArguments(), space_id=1, scope=(1, "a")) != SAVE_ANSWER.key(
        NoArguments(), space_id=2, scope=(1, "a")
    )  # another space's node is never this one's


def notes_with_a_partial_answer(tree) -> Node:
    folder = services.node_create(
        parent=tree["references"], type="folder", name="notes", description="Loose notes.", by=system()
    )
    services.node_create(
        parent=folder, type="document", name="hint.md", description="A hint.", content=b"Some of the RAM.", by=system()
    )
    return folder


def test_saving_answers_is_offered_only_once_there_are_some(llm, tree, settings):
    settings.MEMSITE_SEARCH_TOOLS = True
    empty = services.node_create(
        parent=tree["references"], type="folder", name="empty", description="Nothing yet.", by=system()
    )
    llm.script(pick(None))
    run_search([QUESTION], start_node=empty)

    assert set(shown(llm.requests[0])) == {"full_text_search"}


def test_full_text_results_are_offered_to_the_router_like_children(llm, tree, settings):
    settings.MEMSITE_SEARCH_TOOLS = True
    llm.script(
        pick(None),  # no child of references looks right
        pick("full_text_search"),
        Reply.json({"query": "PostgreSQL memory"}),
        pick("pg-tuning.md", unviable=("databases",)),
        found("A quarter of the RAM."),
    )
    search = run_search([QUESTION], start_node=tree["references"])

    assert set(shown(llm.requests[3])) == {"databases", "pg-tuning.md"}  # best match first
    assert next(iter(shown(llm.requests[3]))) == "pg-tuning.md"
    assert search.ended_because == "answered"
    assert search.result["answers"][0]["node_ids"] == [tree["pg-tuning.md"].pk]


def test_full_text_results_keep_the_tool_s_order(llm, tree, settings, monkeypatch):
    from memory.search import tools

    settings.MEMSITE_SEARCH_TOOLS = True
    ranked = tools.retrieve
    # The index's order, turned round so that it is not the questions' lexical order.
    monkeypatch.setattr(tools, "retrieve", lambda **options: ranked(**options)[::-1])
    llm.script(pick(None), pick("full_text_search"), Reply.json({"query": "PostgreSQL memory"}), pick(None))
    run_search(["How should PostgreSQL memory be tuned?"], start_node=tree["references"], max_llm_calls=4)

    offered = [Node.objects.get(pk=node_id).name for node_id in ToolCall.objects.get().nodes]
    assert offered == ["databases", "pg-tuning.md"]
    assert list(shown(llm.requests[3])) == offered


def test_an_interactive_tool_never_creates_the_same_node_twice(llm, tree, settings):
    settings.MEMSITE_SEARCH_TOOLS = True
    folder = notes_with_a_partial_answer(tree)
    describe = Reply.json({"name": "shared buffers answer", "description": "What the search found."})
    partial = found("Some of the RAM.", complete=False)
    llm.script(pick("hint.md"), partial, pick("save_answer"), describe, pick("hint.md"), partial, pick("save_answer"))
    run_search([QUESTION], start_node=folder)
    run_search([QUESTION], start_node=folder)  # the same answers to save: the same document

    assert Node.objects.filter(parent=tree["references"], name="shared buffers answer").count() == 1
    saved = ToolCall.objects.get()
    assert saved.node.name == "shared buffers answer"
    assert llm.pending == 0


# Routed to pg-tuning.md, which answers the question in part.
PARTIAL_AT_PG_TUNING = (
    pick("references"),
    pick("databases"),
    pick("pg-tuning.md"),
    found("A share of the RAM.", complete=False),
)


# Readings in a row that add nothing end a walk: two once every question has an answer in part
# (settled), MEMSITE_SEARCH_FRUITLESS_READS (2 here) when nothing was found (fruitless). Routing
# is not counted: each walk goes on to a second reading, then one call too many is left.
SETTLED = (*PARTIAL_AT_PG_TUNING, pick("frontend"), pick("css.md"), NOTHING, pick("user"), pick("machine.md"), NOTHING)
FRUITLESS = (
    pick("references"),
    pick("databases"),
    pick("pg-tuning.md"),
    NOTHING,
    pick("frontend"),
    pick("css.md"),
    NOTHING,
)


@pytest.mark.parametrize(
    ("script", "ended", "answer", "summary"),
    [
        (SETTLED, "settled", "A share of the RAM.", "Every question has an answer in part, and the last 2 readings"),
        (FRUITLESS, "fruitless", "", "The first 2 readings found nothing for any question."),
    ],
)
def test_readings_that_add_nothing_end_the_walk(llm, tree, settings, script, ended, answer, summary):
    settings.MEMSITE_SEARCH_FRUITLESS_READS = 2
    llm.script(*script, pick(None))
    search = run_search([QUESTION])

    assert search.status == Search.Status.DONE and search.ended_because == ended
    assert search.llm_calls == len(script) and llm.pending == 1
    [result] = search.result["answers"]
    assert result["answer"] == answer and not result["complete"]
    assert search.steps.last().summary.startswith(summary)


def test_a_fruitless_walk_asks_the_user_where_the_search_says_so(llm, tree, settings):
    settings.MEMSITE_SEARCH_FRUITLESS_READS = 2
    llm.script(*FRUITLESS)
    search = run_search([QUESTION], fallback="ask_user")

    assert search.status == Search.Status.WAITING and llm.pending == 0
    assert SearchQuestion.objects.get(search=search).status == SearchQuestion.Status.PENDING
    assert search.steps.last().summary == "The first 2 readings found nothing for any question; asking the user."


def test_a_search_for_nodes_finds_the_node_that_answers_in_part(llm, tree):
    llm.script(*PARTIAL_AT_PG_TUNING, pick(None))
    search = run_search([QUESTION], output="node", max_llm_calls=5)

    # A multi-session question needs its second node: the walk goes on, and the first is kept.
    assert search.llm_calls == 5 and llm.pending == 0
    assert [(node["name"], node["found_by"]) for node in search.result["nodes"]] == [("pg-tuning.md", "reading")]


def test_a_reading_that_adds_to_the_answer_keeps_the_walk_going(llm, tree):
    llm.script(
        pick("references"),
        pick("databases"),
        pick("pg-tuning.md"),
        found("A share of the RAM.", complete=False),
        pick("frontend"),
        pick("css.md"),
        found("Not above 40% of it.", complete=False),  # adds: the count starts again
        pick("user"),
        pick("machine.md"),
        found("The server has 16 GB.", complete=True),
    )
    search = run_search([QUESTION])

    assert search.ended_because == "answered" and llm.pending == 0
    assert search.result["answers"][0]["answer"] == "The server has 16 GB."


@pytest.mark.parametrize(
    ("budget", "value", "calls"),
    [("max_llm_calls", 2, 2), ("max_tokens", 10, 0), ("timeout_s", 1, 0)],
)
def test_each_budget_ends_the_search_before_the_call_that_would_break_it(llm, tree, budget, value, calls):
    llm.script(pick("references"), pick("databases"))
    search = services.search_start(by=system(), questions=[QUESTION], **{budget: value})
    if budget == "timeout_s":
        Search.objects.filter(pk=search.pk).update(
            status=Search.Status.RUNNING, started_at=timezone.now() - timezone.timedelta(seconds=5)
        )
    services.search_run(search_id=search.pk)
    search.refresh_from_db()

    assert search.ended_because == f"budget:{budget}"
    assert search.llm_calls == calls == len(llm.requests)
    assert search.steps.last().summary == f"The {budget} budget ran out."


def test_cancel_stops_a_running_search_at_its_next_step(llm, tree, user):
    llm.script(pick("references"))
    search = services.search_start(by=acting(user), questions=[QUESTION])
    assert services.search_advance(search_id=search.pk)
    services.search_cancel(search=Search.objects.get(pk=search.pk), user=user)
    assert not services.search_advance(search_id=search.pk)

    search.refresh_from_db()
    assert search.status == Search.Status.CANCELLED and len(llm.requests) == 1
    assert kinds(search) == [Kind.ROUTE, Kind.FINISH]


def test_cancel_ends_a_queued_search_at_once_and_refuses_an_ended_one(tree, user):
    search = services.search_start(by=acting(user), questions=[QUESTION])
    services.search_cancel(search=search, user=user)
    search.refresh_from_db()
    assert search.status == Search.Status.CANCELLED
    with pytest.raises(services.searches.Conflict):
        services.search_cancel(search=search, user=user)


def test_a_crashed_step_is_redone_from_the_last_recorded_one(llm, tree, monkeypatch):
    llm.script(pick("references"), pick("databases"), pick("databases"), pick("pg-tuning.md"), found("A quarter."))
    search = services.search_start(by=system(), questions=[QUESTION])
    assert services.search_advance(search_id=search.pk)

    from memory.services import searches

    def die(*args, **kwargs):
        raise SystemExit("worker killed")

    with monkeypatch.context() as patch:
        patch.setattr(searches, "_record", die)
        with pytest.raises(SystemExit):
            services.search_advance(search_id=search.pk)  # the LLM answered; nothing recorded

    services.search_run(search_id=search.pk)  # the redelivered task
    search.refresh_from_db()
    assert search.ended_because == "answered"
    assert list(search.steps.values_list("number", flat=True)) == [1, 2, 3, 4, 5]
    assert search.llm_calls == 4  # the lost call is in the ledger, not in the search's spend
    assert LLMCall.objects.count() == 5


def test_a_second_worker_cannot_record_the_same_step(llm, tree):
    from memory.search import walk
    from memory.services.searches import _record

    llm.script(pick("references"), pick("references"))
    by = system()
    search = services.search_start(by=by, questions=[QUESTION])
    Search.objects.filter(pk=search.pk).update(status=Search.Status.RUNNING, started_at=timezone.now())
    search.refresh_from_db()
    first, second = walk.advance(search, by=by), walk.advance(search, by=by)

    assert _record(search, first, root_id=search.pk, by=by) is not None
    assert _record(search, second, root_id=search.pk, by=by) is None
    assert search.steps.count() == 1


def test_the_sweep_requeues_a_stalled_search_then_fails_it(tree, settings, django_capture_on_commit_callbacks):
    settings.MEMSITE_SEARCH_MAX_REQUEUES = 1
    search = services.search_start(by=system(), questions=[QUESTION])
    stale = timezone.now() - timezone.timedelta(seconds=settings.MEMSITE_SEARCH_STALE_S + 1)
    Search.objects.filter(pk=search.pk).update(status=Search.Status.RUNNING, heartbeat_at=stale)

    with django_capture_on_commit_callbacks() as callbacks:
        assert services.searches_sweep_stale() == {"requeued": 1, "failed": 0}
    assert len(callbacks) == 1
    Search.objects.filter(pk=search.pk).update(status=Search.Status.RUNNING, heartbeat_at=stale)  # and again
    assert services.searches_sweep_stale() == {"requeued": 0, "failed": 1}
    search.refresh_from_db()
    assert search.status == Search.Status.FAILED and search.ended_because.startswith("stalled")


@pytest.fixture
def sent(monkeypatch) -> list[int]:
    """The searches whose task the broker took, in order."""
    from memory import tasks

    taken: list[int] = []
    monkeypatch.setattr(tasks.search_run, "delay", lambda search_id: taken.append(search_id))
    return taken


def test_the_sweep_leaves_a_search_that_waits_its_turn_in_the_queue(
    tree, settings, sent, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        search = services.search_start(by=system(), questions=[QUESTION])
    backlog = timezone.now() - timezone.timedelta(seconds=10 * settings.MEMSITE_SEARCH_STALE_S)
    Search.objects.filter(pk=search.pk).update(created_at=backlog)  # the workers are busy

    assert services.searches_sweep_stale() == {"requeued": 0, "failed": 0}
    assert sent == [search.pk]


def test_the_sweep_sends_a_search_whose_message_never_reached_the_broker(
    tree, settings, sent, django_capture_on_commit_callbacks
):
    search = services.search_start(by=system(), questions=[QUESTION])  # never published
    lost = timezone.now() - timezone.timedelta(seconds=settings.MEMSITE_SEARCH_STALE_S + 1)
    Search.objects.filter(pk=search.pk).update(created_at=lost)

    with django_capture_on_commit_callbacks(execute=True):
        assert services.searches_sweep_stale() == {"requeued": 1, "failed": 0}
    assert sent == [search.pk]
    search.refresh_from_db()
    assert search.status == Search.Status.QUEUED and search.requeues == 0 and search.sent_at is not None


def test_a_requeued_search_waiting_in_a_backlog_is_neither_sent_again_nor_failed(
    tree, settings, sent, django_capture_on_commit_callbacks
):
    settings.MEMSITE_SEARCH_MAX_REQUEUES = 1
    search = services.search_start(by=system(), questions=[QUESTION])
    started = timezone.now() - timezone.timedelta(seconds=settings.MEMSITE_SEARCH_STALE_S + 1)
    Search.objects.filter(pk=search.pk).update(status=Search.Status.RUNNING, started_at=started, heartbeat_at=started)

    with django_capture_on_commit_callbacks(execute=True):
        assert services.searches_sweep_stale() == {"requeued": 1, "failed": 0}
    Search.objects.filter(pk=search.pk).update(heartbeat_at=started)  # minutes in the backlog
    for _ in range(3):
        assert services.searches_sweep_stale() == {"requeued": 0, "failed": 0}
    assert sent == [search.pk]

    services.search_advance(search_id=search.pk)  # a worker takes it at last
    search.refresh_from_db()
    assert search.steps_taken == 1 and search.started_at == started  # its timeout counts from its first start


def test_a_bug_in_a_step_fails_the_search_instead_of_leaving_it_running(llm, tree, monkeypatch):
    from memory.search import walk

    def broken(search, *, by):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(walk, "advance", broken)
    search = run_search([QUESTION])

    assert search.status == Search.Status.FAILED
    assert search.ended_because == "error: ZeroDivisionError: division by zero"
    assert kinds(search) == [Kind.FINISH]


def test_saved_answers_whose_name_is_taken_get_a_free_one(llm, tree, settings):
    settings.MEMSITE_SEARCH_TOOLS = True
    folder = notes_with_a_partial_answer(tree)
    services.node_create(
        parent=tree["references"], type="document", name="answer", description="", content=b"", by=system()
    )
    services.node_create(
        parent=tree["references"], type="document", name="answer (2)", description="", content=b"", by=system()
    )
    llm.script(
        pick("hint.md"),
        found("Some.", complete=False),
        pick("save_answer"),
        Reply.json({"name": "answer", "description": "Found."}),
    )
    run_search([QUESTION], start_node=folder)

    assert ToolCall.objects.get().node.name == "answer (3)"


def test_a_name_the_tree_refuses_goes_back_to_the_model_for_repair(llm, tree, settings):
    settings.MEMSITE_SEARCH_TOOLS = True
    folder = notes_with_a_partial_answer(tree)
    llm.script(
        pick("hint.md"),
        found("Some.", complete=False),
        pick("save_answer"),
        Reply.json({"name": "RAM/CPU sizing", "description": "Found."}),
        Reply.json({"name": "RAM and CPU sizing", "description": "Found."}),
    )
    search = run_search([QUESTION], start_node=folder)

    assert "/" in llm.requests[4].messages[-1]["content"]  # the repair says what was wrong
    assert ToolCall.objects.get().node.name == "RAM and CPU sizing"
    assert search.status == Search.Status.DONE


def test_sub_search_steps_keep_the_family_alive_for_the_sweep(llm, tree, settings):
    llm.script(
        pick("references"),
        pick("databases"),
        pick("pg-tuning.md"),
        found("Some.", complete=False, new_questions=("How much RAM?",)),
        pick("user"),
    )
    search = services.search_start(by=system(), questions=[QUESTION])
    for _ in range(5):  # the parent's four steps and its sub-search's first
        services.search_advance(search_id=search.pk)
    stale = timezone.now() - timezone.timedelta(seconds=settings.MEMSITE_SEARCH_STALE_S + 1)
    Search.objects.filter(pk=search.pk).update(heartbeat_at=stale, requeues=2)

    services.search_advance(search_id=search.pk)  # the sub-search's next step
    search.refresh_from_db()
    assert search.heartbeat_at > stale and search.requeues == 0
    assert services.searches_sweep_stale() == {"requeued": 0, "failed": 0}


def test_a_search_whose_start_node_is_deleted_ends_instead_of_searching_everything(llm, tree):
    search = services.search_start(by=system(), questions=[QUESTION], start_node=tree["databases"])
    services.node_delete(node=tree["databases"], by=system())
    services.search_run(search_id=search.pk)
    search.refresh_from_db()

    assert search.status == Search.Status.FAILED and search.ended_because == "start node deleted"
    assert llm.requests == []
