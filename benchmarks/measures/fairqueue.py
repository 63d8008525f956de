"""The abuse benchmark's background attack: a space whose daily LLM budget is spent, with a
backlog of documents waiting for their descriptions, queued before another space's one. Run in
the benchmark's own process on its scratch database, the description task's passes called one
after the other as a worker runs them (the offline model writes the descriptions). Needs Django
set up."""

from __future__ import annotations

import time
from decimal import Decimal

from django.contrib.auth import get_user_model

from benchmarks.kit.harness import Table
from memory import selectors, services
from memory.models import Node, PendingDescription
from memory.services.descriptions import TASK_NODES, descriptions_write_pending
from memsite.llm.services import llm_call_record
from memsite.spaces.models import Space
from memsite.spaces.principals import principal_rebuilt
from memsite.spaces.services import space_create

BACKLOGS = (100, 800)  # the spent space's waiting documents; 800 took the review's 39 minutes
MAX_PASSES = 60
PASSES_TARGET = 1  # another space's description waits at most one pass


def _spend_the_days_budget(space: Space, user_id: int) -> None:
    """A budget of one call a day, and that call made."""
    space.llm_daily_calls = 1
    space.save(update_fields=["llm_daily_calls"])
    llm_call_record(
        purpose="describe",
        provider="offline",
        model="offline",
        ok=True,
        messages=[{"role": "user", "content": "spend"}],
        reply="spent",
        prompt_tokens=1,
        completion_tokens=1,
        tokens_reported=True,
        tokens_approximate=False,
        latency_ms=1,
        cost_usd=Decimal(0),
        retries=0,
        repairs=0,
        response_mode="text",
        schema_name="",
        by=principal_rebuilt(space=space, user_id=user_id),
    )


def _documents(space: Space, user, count: int, stem: str) -> list[Node]:
    folder = selectors.node_internal_folder(space=space, name="swarmstar")
    return [
        services.node_create(
            parent=folder,
            type="document",
            name=f"{stem}-{n}.md",
            content=f"{stem} notes, day {n}.".encode(),
            by=principal_rebuilt(space=space, user_id=user.pk),
        )
        for n in range(count)
    ]


def _passes_until_described(node: Node) -> tuple[int, float]:
    started = time.perf_counter()
    for passes in range(1, MAX_PASSES + 1):
        descriptions_write_pending(limit=TASK_NODES)
        if Node.objects.filter(pk=node.pk).exclude(description="").exists():
            return passes, time.perf_counter() - started
    return MAX_PASSES + 1, time.perf_counter() - started


def _row(backlog: int) -> tuple[str, ...]:
    PendingDescription.objects.all().delete()  # each row starts from an empty queue
    spender, other_user = (
        get_user_model().objects.create_user(username=f"fairqueue-{who}-{backlog}") for who in ("spender", "other")
    )
    spent = space_create(user=spender, slug=f"spent-{backlog}", name=f"Spent budget, {backlog} waiting")
    _spend_the_days_budget(spent, spender.pk)
    _documents(spent, spender, backlog, "spent")
    other = space_create(user=other_user, slug=f"other-{backlog}", name="Another space")
    (node,) = _documents(other, other_user, 1, "other")
    passes, seconds = _passes_until_described(node)
    set_aside = PendingDescription.objects.filter(node__space=spent, waiting_for_budget=True).count()
    ok = passes <= PASSES_TARGET
    shown = f"{passes}" if passes <= MAX_PASSES else f"over {MAX_PASSES}"
    return (f"{backlog:,}", shown, f"{seconds:.2f}", f"{set_aside:,}", f"≤ {PASSES_TARGET} {'✓' if ok else '✗'}")


def fair_queue_table() -> Table:
    """For each backlog: the passes of the description task (TASK_NODES nodes each) until the
    other space's document is described, and the spent space's nodes set aside meanwhile."""
    header = ("spent space's waiting documents", "passes", "s", "set aside for the budget", "target")
    return Table(header, [_row(backlog) for backlog in BACKLOGS], "rrrrl")
