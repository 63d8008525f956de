"""Every LLM step of a search, a tick, a chat, a memorize and a recall, against every way the LLM
fails: a body that is not a completion, garbage or prose or truncated JSON in one, a 429 storm
longer than the retries, repeated 500s, replies slower than the timeout. Each operation ends
(nothing left queued or running), says what happened (its status and error, and the ledger
row of the failed call with its reason), and writes nothing half-way.

The gateway retries once and repairs once, so each fault is two scripted replies; `pending ==
0` at the end shows the fault landed on the step it was meant for."""

from dataclasses import dataclass

import pytest
from django.contrib.contenttypes.models import ContentType
from pydantic import BaseModel

from agents.brains import services as brain_services
from agents.brains.models import Brain, Goal, Record, TickRun
from agents.brains.services.brains import brain_create, brain_writing
from agents.brains.services.chat import ChatFailed
from agents.context.models import Message
from agents.graphs import services as graph_services
from agents.graphs.models import Graph, GraphEdge, GraphNode, GraphOp, Turn
from memory import services
from memory.models import Node, Search, SearchStep, ToolCall
from memsite.llm.errors import LLMError, Reason
from memsite.llm.gateway import complete
from memsite.llm.models import LLMCall
from memsite.llm.replies import storable
from tests.factories import AgentFactory, acting, default_space, system, ticked_by
from tests.fake_openai import FakeOpenAI, Reply
from tests.memory.search.tree import build_tree, found, pick

RETRIES = REPAIRS = 1
REQUEST_TIMEOUT_MS = 300
SLOW_S = 3.0  # well past the request timeout; the server stops waiting when the test ends
# Every other fault's reply is quick, but on a loaded machine it can take longer than the short
# request timeout and would be read as a timeout instead: those calls get time to spare.
SPARE_TIMEOUT_MS = 60_000


@dataclass(frozen=True)
class Fault:
    reply: Reply
    reason: Reason

    @property
    def replies(self) -> list[Reply]:
        """What one failed call consumes: the first try and its retries or repairs."""
        return [self.reply] * (1 + (REPAIRS if self.invalid else RETRIES))

    @property
    def invalid(self) -> bool:
        """A reply that came but never validated: callers reject it rather than fail."""
        return self.reason is Reason.INVALID_REPLY


FAULTS = {
    "garbage body": Fault(Reply.garbage(), Reason.SERVER_ERROR),
    "garbage text body": Fault(
        Reply.garbage(b"\x00\x1b[31m<<<\xff>>>", content_type="text/plain"), Reason.SERVER_ERROR
    ),
    "not a completion": Fault(
        Reply.garbage(b'{"choices": [{"message": {"content": {"no": "text"}}}]}'), Reason.SERVER_ERROR
    ),
    "garbage text": Fault(Reply.text("\x00\x07\x1b[2J\ud800\ufffd \u202e}{][ \udfff\x00"), Reason.INVALID_REPLY),
    "prose": Fault(Reply.text("I'm sorry, but I would rather describe this in my own words."), Reason.INVALID_REPLY),
    "truncated JSON": Fault(Reply.text('{"choice": 1, "unviable": [2, 3], "reason": "the ans'), Reason.INVALID_REPLY),
    "429 storm": Fault(Reply.rate_limited(retry_after="0"), Reason.RATE_LIMITED),
    "500s": Fault(Reply.failure(500, "The model crashed."), Reason.SERVER_ERROR),
    "timeout": Fault(Reply.slow(SLOW_S), Reason.TIMEOUT),
}
fault_kinds = pytest.mark.parametrize("fault", list(FAULTS.values()), ids=list(FAULTS))


@pytest.fixture
def llm(settings, openai_gateway: FakeOpenAI, request) -> FakeOpenAI:
    """The gateway on the fake server with one retry, one repair and short backoffs; a request
    timeout well under the slow replies when the fault is one; searches without restarts or
    tools unless asked."""
    callspec = getattr(request.node, "callspec", None)
    timing_out = callspec is not None and callspec.params.get("fault") is FAULTS["timeout"]
    settings.MEMSITE_LLM_MAX_RETRIES = RETRIES
    settings.MEMSITE_LLM_MAX_REPAIRS = REPAIRS
    settings.MEMSITE_LLM_BACKOFF_BASE_MS = 1
    settings.MEMSITE_LLM_BACKOFF_MAX_MS = 2
    settings.MEMSITE_LLM_RETRY_AFTER_MAX_MS = 5
    settings.MEMSITE_LLM_REQUEST_TIMEOUT_MS = REQUEST_TIMEOUT_MS if timing_out else SPARE_TIMEOUT_MS
    settings.MEMSITE_LLM_TIMEOUT_MS = 5_000 if timing_out else 2 * SPARE_TIMEOUT_MS
    settings.MEMSITE_SEARCH_TOOLS = False
    settings.MEMSITE_SEARCH_SHORTCUT_HITS = 0  # scripted walks follow the tree
    settings.MEMSITE_SEARCH_FIRST_READ_TOKENS = 0
    settings.MEMSITE_SEARCH_MAX_RESTARTS = 0
    settings.MEMSITE_TICK_DEEP_REFLECT_EVERY = 1_000
    return openai_gateway


def served_by(row) -> list[LLMCall]:
    kind = ContentType.objects.get_for_model(row)
    return list(LLMCall.objects.filter(served_type=kind, served_id=row.pk).order_by("id"))


def assert_failed_call(call: LLMCall, fault: Fault) -> None:
    assert call.status == LLMCall.Status.ERROR and call.error_reason == fault.reason.value, (
        call.error_reason,
        call.error,
    )
    assert call.error
    assert (call.repairs if fault.invalid else call.retries) == 1


def assert_all_consumed(llm: FakeOpenAI) -> None:
    assert llm.pending == 0 and llm.unscripted == 0, (llm.pending, llm.unscripted)


class Said(BaseModel):
    text: str
    notes: dict[str, list[str]]


@pytest.mark.django_db
def test_characters_no_database_stores_never_reach_one(llm, user):
    """NUL (PostgreSQL refuses it in text and jsonb) and lone surrogates (no UTF-8 column holds
    them), in a prompt, in a reply that validates, in a server's error: each becomes U+FFFD."""
    bad = "a\x00b\ud800c"
    llm.script(
        Reply.json({"text": bad, "notes": {bad: [bad]}}),
        Reply.text(bad),
        Reply.failure(500, bad),
        Reply.failure(500, bad),
    )
    messages = [{"role": "user", "content": f"Read this file: {bad}"}]

    said = complete(purpose="read", messages=messages, schema=Said, served=user, by=acting(user)).value
    text = complete(purpose="chat", messages=messages, served=user, by=acting(user)).value
    with pytest.raises(LLMError) as info:
        complete(purpose="read", messages=messages, schema=Said, served=user, by=acting(user))

    clean = "a\ufffdb\ufffdc"
    assert said == Said(text=clean, notes={clean: [clean]}) and text == clean
    assert clean in info.value.message and "\x00" not in info.value.message
    calls = list(LLMCall.objects.order_by("id"))
    assert [call.status for call in calls] == ["ok", "ok", "error"]
    assert all(clean in call.messages[0]["content"] for call in calls)
    assert clean in calls[1].reply and clean in calls[2].error
    assert llm.requests[0].messages[0]["content"] == f"Read this file: {clean}"


def test_cleaning_a_reply_copes_with_any_depth():
    deep: list = []
    bottom = deep
    for _ in range(10_000):  # far deeper than the interpreter's recursion limit
        bottom.append([])
        bottom = bottom[0]
    bottom.append("a\x00b")

    cleaned = storable(deep)

    for _ in range(10_000):
        cleaned = cleaned[0]
    assert cleaned == ["a\ufffdb"] and bottom == ["a\x00b"]  # a copy: the original is left as it was


# Searches --------------------------------------------------------------------------------------

QUESTION = "How large should shared_buffers be?"
SUB_QUESTION = "How much RAM does the server have?"
ASKS_MORE = found("Some of the RAM.", complete=False, new_questions=(SUB_QUESTION,))


@dataclass(frozen=True)
class SearchStepCase:
    before: tuple[Reply, ...]  # the replies that lead the walk to the step
    kind: str  # the step the fault lands on
    in_child: bool = False
    start: str | None = None  # the start node's name
    tools: bool = False


SEARCH_STEPS = {
    "route": SearchStepCase((), SearchStep.Kind.ROUTE),
    "read": SearchStepCase((pick("references"), pick("databases"), pick("pg-tuning.md")), SearchStep.Kind.READ),
    "sub-search route": SearchStepCase(
        (pick("references"), pick("databases"), pick("pg-tuning.md"), ASKS_MORE), SearchStep.Kind.ROUTE, in_child=True
    ),
    "sub-search read": SearchStepCase(
        (pick("references"), pick("databases"), pick("pg-tuning.md"), ASKS_MORE, pick("user"), pick("machine.md")),
        SearchStep.Kind.READ,
        in_child=True,
    ),
    "tool choice": SearchStepCase((pick(None),), SearchStep.Kind.TOOLS, start="databases", tools=True),
    "tool arguments": SearchStepCase(
        (pick(None), pick("full_text_search")), SearchStep.Kind.TOOL, start="databases", tools=True
    ),
    "describe a saved answer": SearchStepCase(
        (pick("pg-tuning.md"), found("Some of the RAM.", complete=False), pick("save_answer")),
        SearchStep.Kind.TOOL,
        start="databases",
        tools=True,
    ),
}


@pytest.mark.django_db
@fault_kinds
@pytest.mark.parametrize("case", list(SEARCH_STEPS.values()), ids=list(SEARCH_STEPS))
def test_a_search_ends_cleanly_whatever_step_the_llm_fails(llm, internal, settings, case, fault):
    tree = build_tree()
    settings.MEMSITE_SEARCH_TOOLS = case.tools
    llm.script(*case.before, *fault.replies)
    nodes_before = set(Node.objects.values_list("pk", flat=True))
    # The budget ends the walk at the first call after the fault, whatever the walk would do next.
    search = services.search_start(
        by=system(),
        questions=[QUESTION],
        start_node=tree[case.start] if case.start else None,
        max_llm_calls=len(case.before) + 1,
    )

    services.search_run(search_id=search.pk)

    search.refresh_from_db()
    assert_all_consumed(llm)
    assert not Search.objects.filter(status__in=Search.ACTIVE).exists()
    faulted = Search.objects.get(parent=search) if case.in_child else search
    family = [search, *Search.objects.filter(parent=search)]
    calls = [call for row in family for call in served_by(row)]
    assert len(calls) == len(case.before) + 1 == search.llm_calls  # every call, the failed one too, is spent
    failed = served_by(faulted)[-1]
    assert_failed_call(failed, fault)
    step = faulted.steps.get(llm_call=failed)
    if fault.invalid:
        # The reply is rejected, nothing is followed, and the walk goes on to its budget.
        assert step.kind == case.kind
        assert "rejected" in step.summary.lower() or "no usable" in step.summary.lower()
        assert faulted.status == Search.Status.DONE
    else:
        assert step.kind == SearchStep.Kind.FINISH and step.summary.startswith("The LLM failed:")
        assert faulted.status == Search.Status.FAILED and faulted.ended_because == f"error: {failed.error}"[:255]
    if case.in_child:  # the parent gets the child's end back and ends on its own budget
        assert search.status == Search.Status.DONE and search.ended_because == "budget:max_llm_calls"
        handback = search.steps.get(kind=SearchStep.Kind.HANDBACK)
        assert faulted.ended_because in handback.summary
    # Nothing was saved half-way: no new node, and no record of a save that did not happen.
    assert set(Node.objects.values_list("pk", flat=True)) == nodes_before
    assert not ToolCall.objects.filter(tool="save_answer").exists()
    numbers = list(faulted.steps.values_list("number", flat=True))
    assert numbers == list(range(1, faulted.steps_taken + 1))


# Ticks and chat --------------------------------------------------------------------------------


def decide(action: str, **arguments) -> Reply:
    return Reply.json({"action": action, "arguments": arguments, "reason": "It is the next step."})


REFLECT = Reply.json({"thought": "Nothing stirs in the memory tree.", "inner_thought": None})
PLAN = Reply.json({"steps": ["list_dir /user", "idle"]})


@dataclass(frozen=True)
class TickStepCase:
    before: tuple[Reply, ...]
    after_invalid: tuple[Reply, ...]  # what the tick still asks when the fault was an invalid reply
    step: str
    plan: tuple[str, ...] = ("look around", "read", "write")  # a plan left: no replan
    deep: bool = False


TICK_STEPS = {
    # An invalid decision is the tick's error, not its end: it reflects on it and replans.
    "decide": TickStepCase((), (REFLECT, PLAN), "decide"),
    # The reflection carries the inner thought too: one call for both.
    "reflect": TickStepCase((decide("list_dir", path="/user"),), (), "reflect"),
    "deep reflect": TickStepCase((decide("idle"), REFLECT), (), "deep_reflect", deep=True),
    "replan": TickStepCase((decide("idle"), REFLECT), (), "replan", plan=()),
}


def brain_rows(agent) -> dict:
    brain = Brain.objects.filter(pk=agent.pk).values("plan", "plan_step", "self_summary").get()
    return {
        **brain,
        "goals": list(Goal.objects.filter(brain_id=agent.pk).values_list("text", flat=True)),
        "facts": list(
            Record.objects.filter(brain_id=agent.pk, kind__in=["fact", "self_instruction"]).values_list(
                "text", flat=True
            )
        ),
    }


@pytest.mark.django_db
@fault_kinds
@pytest.mark.parametrize("case", list(TICK_STEPS.values()), ids=list(TICK_STEPS))
def test_a_tick_ends_cleanly_whatever_step_the_llm_fails(llm, internal, settings, case, fault):
    agent = AgentFactory(name="scout", model="gpt-4")
    ticked_by(agent)
    with brain_writing(agent=agent) as write:
        write.set(plan=list(case.plan), plan_step=0, self_summary="I scout.")
    if case.deep:
        settings.MEMSITE_TICK_DEEP_REFLECT_EVERY = 1
    before = brain_rows(agent)
    llm.script(*case.before, *fault.replies, *(case.after_invalid if fault.invalid else ()))

    run = brain_services.tick_run(agent_id=agent.pk)

    assert_all_consumed(llm)
    assert not TickRun.objects.filter(status=TickRun.Status.RUNNING).exists()
    brain = Brain.objects.get(pk=agent.pk)
    assert brain.lease_until is None and brain.tick_count == 1
    calls = served_by(run)
    failed = next(call for call in calls if call.status == LLMCall.Status.ERROR)
    assert_failed_call(failed, fault)
    steps = {step["name"]: step["detail"] for step in run.steps}
    assert steps[case.step]["call"] == failed.pk and steps[case.step]["error"] == failed.error
    if case.step == "decide" and not fault.invalid:
        # The decision is the tick: without it the tick fails, and asks nothing more.
        assert run.status == TickRun.Status.FAILED and run.error == f"decide: {failed.error}"
        assert list(steps) == ["read", "decide"] and calls == [failed]
        assert brain.last_error and not Record.objects.filter(brain_id=agent.pk, kind="episode").exists()
        return
    # Any other failure is recorded in its step; the tick still records what it did.
    assert run.status == TickRun.Status.DONE
    assert "record" in steps and Record.objects.filter(brain_id=agent.pk, kind="episode").count() == 1
    if case.step == "decide":
        assert (
            run.error.startswith("No valid action was decided")
            and brain.last_error == run.error[: len(brain.last_error)]
        )
    else:
        assert run.error == ""
    if case.step == "reflect":
        assert not Record.objects.filter(brain_id=agent.pk, kind__in=["thought", "inner_thought"]).exists()
        assert run.outcome.startswith("Listed /user")
    if case.step in ("deep_reflect", "replan"):
        assert brain_rows(agent) == {**before, "plan_step": brain.plan_step}  # no summary, goal, fact or plan
    assert len(calls) == len(case.before) + 1 + (len(case.after_invalid) if fault.invalid else 0)


@pytest.mark.django_db
@fault_kinds
def test_a_chat_the_llm_cannot_answer_keeps_the_users_line(llm, internal, fault):
    agent = AgentFactory(name="scout", model="gpt-4")
    brain_create(agent=agent)
    llm.script(*fault.replies)

    with pytest.raises(ChatFailed) as info:
        brain_services.chat_send(agent=agent, text="What did you find?", by=system())

    assert_all_consumed(llm)
    assert info.value.data["reason"] == fault.reason.value
    lines = list(Message.objects.filter(agent=agent).values_list("role", "content"))
    assert lines == [("user", "What did you find?")]
    [failed] = LLMCall.objects.filter(purpose="chat")
    assert_failed_call(failed, fault)
    assert Brain.objects.get(pk=agent.pk).last_user_message == "What did you find?"


# Reasoning graphs ------------------------------------------------------------------------------


def patch(parent: str = "1", label: str = "look it up") -> Reply:
    return Reply.json(
        {
            "add_nodes": [
                {"tmp_id": "s", "kind": "subtask", "thought": [{"role": "assistant", "content": label}]},
                {"tmp_id": "e", "kind": "evidence", "thought": [{"role": "tool", "content": f"{label}: port 8001"}]},
            ],
            "add_edges": [{"src": parent, "dst": "s", "rationale": "decompose"}, {"src": "e", "dst": "s"}],
        }
    )


def step(number: int) -> list[dict]:
    return [
        {"role": "assistant", "content": f"I look up service {number}."},
        {"role": "tool", "content": f"Service {number} listens on port {8000 + number}."},
    ]


def graph_rows(graph: Graph) -> tuple:
    graph.refresh_from_db()
    return (
        list(GraphNode.objects.filter(graph=graph).order_by("node_id").values()),
        list(GraphEdge.objects.filter(graph=graph).order_by("id").values()),
        graph.next_node_id,
    )


@pytest.fixture
def graph(db):
    return graph_services.graph_create(
        space=default_space(), task="Find the port", model="gpt-4", trigger_tokens=8_000, target_tokens=4_000
    )


def assert_graph_settled(graph: Graph) -> None:
    assert not GraphOp.objects.filter(graph=graph, status=GraphOp.Status.QUEUED).exists()
    graph.refresh_from_db()
    assert graph.lease_until is None


@fault_kinds
@pytest.mark.parametrize("failing", [1, 2], ids=["first pair", "second pair"])
def test_a_memorize_keeps_the_pairs_applied_and_nothing_of_the_failed_one(llm, graph, failing, fault):
    good = patch(label="the other service")
    llm.script(*([*fault.replies, good] if failing == 1 else [good, *fault.replies]))

    op = graph_services.graph_memorize(by=system(), graph=graph, messages=step(1) + step(2))
    graph_services.graph_work(graph_id=graph.pk)

    assert_all_consumed(llm)
    assert_graph_settled(graph)
    op.refresh_from_db()
    assert op.status == GraphOp.Status.REJECTED and op.rationale == "1 of 2 steps memorized"
    [failed] = [call for call in served_by(op) if call.status == LLMCall.Status.ERROR]
    assert_failed_call(failed, fault)
    assert op.error == failed.error and op.ended_at is not None
    pairs = op.detail["pairs"]
    assert pairs[failing - 1]["error"] == failed.error and "node_ids" not in pairs[failing - 1]
    kept = pairs[2 - failing]
    assert kept["node_ids"] == {"s": 2, "e": 3}
    # The applied pair's nodes and edges, whole; nothing of the failed pair.
    nodes = GraphNode.objects.filter(graph=graph).order_by("node_id")
    assert list(nodes.values_list("node_id", "related_turn_ids")) == [
        (1, []),
        (2, kept["turn_ids"]),
        (3, kept["turn_ids"]),
    ]
    assert list(GraphEdge.objects.filter(graph=graph).values_list("src", "dst")) == [(1, 2), (3, 2)]
    graph.refresh_from_db()
    assert graph.next_node_id == 4
    assert Turn.objects.filter(graph=graph).count() == 4  # the raw turns are kept all the same


@fault_kinds
@pytest.mark.parametrize("how", ["asked for", "over the trigger"])
def test_a_failed_recall_leaves_the_graph_as_it_was(llm, graph, how, fault):
    llm.script(patch())
    graph_services.graph_memorize(by=system(), graph=graph, messages=step(1))
    graph_services.graph_work(graph_id=graph.pk)
    before = graph_rows(graph)
    if how == "over the trigger":  # the next memorize pushes the context past it: recall fires
        Graph.objects.filter(pk=graph.pk).update(
            trigger_tokens=20, target_tokens=10, protected_head=0, protected_tail=0
        )
        llm.script(Reply.json({"add_nodes": [], "add_edges": []}), *fault.replies)
        memorized = graph_services.graph_memorize(by=system(), graph=graph, messages=step(2))
    else:
        llm.script(*fault.replies)
        graph_services.graph_recall(graph=graph, by=system())
    graph_services.graph_work(graph_id=graph.pk)

    assert_all_consumed(llm)
    assert_graph_settled(graph)
    recall = GraphOp.objects.get(graph=graph, kind=GraphOp.Kind.RECALL)
    assert recall.status == GraphOp.Status.REJECTED and recall.rationale == how
    [failed] = served_by(recall)
    assert_failed_call(failed, fault)
    assert recall.error == failed.error and recall.tokens_after == recall.tokens_before
    assert graph_rows(graph) == before
    if how == "over the trigger":
        memorized.refresh_from_db()
        assert memorized.status == GraphOp.Status.APPLIED  # its own (empty) patch stands


def test_an_operation_that_breaks_is_failed_and_the_graphs_next_ones_still_run(llm, graph, monkeypatch):
    from agents.graphs.services import graphs

    original = graphs._apply_patch
    calls = []

    def breaks_once(*args, **kwargs):
        calls.append(args)
        if len(calls) == 1:
            raise RuntimeError("a bug below the LLM")
        return original(*args, **kwargs)

    monkeypatch.setattr(graphs, "_apply_patch", breaks_once)
    llm.script(patch(label="first"), patch(label="second"))
    broken = graph_services.graph_memorize(by=system(), graph=graph, messages=step(1))
    later = graph_services.graph_memorize(by=system(), graph=graph, messages=step(2))

    assert graph_services.graph_work(graph_id=graph.pk) == 2

    assert_all_consumed(llm)
    assert_graph_settled(graph)
    broken.refresh_from_db()
    later.refresh_from_db()
    assert broken.status == GraphOp.Status.FAILED and broken.error == "RuntimeError: a bug below the LLM"
    assert broken.ended_at is not None
    assert later.status == GraphOp.Status.APPLIED and later.detail["pairs"][0]["node_ids"] == {"s": 2, "e": 3}
    assert GraphNode.objects.filter(graph=graph).count() == 3
