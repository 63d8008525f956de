"""Fair description work, memsite's own upkeep in each space: nodes whose space's budget is
spent (the whole space's, or memsite's own there) leave the queue until it has room again, and
spaces take turns, so that one space's backlog or spent budget delays another
space's descriptions by at most a pass."""

import pytest

from memory import selectors
from memory.models import Node, PendingDescription
from memory.services.descriptions import descriptions_sweep, descriptions_write_pending
from memsite.llm.models import LLMCall
from memsite.spaces.models import Space
from memsite.spaces.services import space_create
from tests.factories import DocumentFactory, acting, default_space, system
from tests.llm.factories import make_call

pytestmark = pytest.mark.django_db

PASS = 20  # nodes a pass takes, as a task does
BACKLOG = 45  # the other space's nodes queued first: more than two passes' worth


@pytest.fixture(autouse=True)
def served(served_llm, settings):
    """A model serves the describe calls: the daily budgets count only such calls."""
    settings.MEMSITE_EMBEDDINGS = "off"


@pytest.fixture
def lab(user) -> Space:
    """Another space, with a backlog of documents queued for a description before any other."""
    lab = space_create(user=user, slug="lab", name="Lab")
    swarmstar = selectors.node_internal_folder(space=lab, name="swarmstar")
    for number in range(BACKLOG):
        DocumentFactory(parent=swarmstar, description="", content=f"Lab notes, day {number}.".encode())
    return lab


def spend_the_days_budget(space: Space) -> None:
    space.llm_daily_calls = 1
    space.save()
    make_call(by=system(space))


def passes_until_described(node) -> int:
    """How many passes of the description task run before `node` has its description."""
    for passes in range(1, 10):
        descriptions_write_pending(limit=PASS)
        if Node.objects.get(pk=node.pk).description:
            return passes
    raise AssertionError(f"{node.pk} still has no description after 9 passes")


def waiting_for_budget(space: Space) -> int:
    return PendingDescription.objects.filter(node__space=space, waiting_for_budget=True).count()


def test_a_backlog_in_one_space_delays_another_spaces_node_by_one_pass_at_most(lab):
    ours = DocumentFactory(description="", content=b"Ana adopted a greyhound named Pixel.")

    assert passes_until_described(ours) == 1
    # The pass was shared in turn: the lab's oldest went on too.
    assert PendingDescription.objects.filter(node__space=lab).count() == BACKLOG - (PASS - 1)


def test_a_spent_budget_delays_another_spaces_node_by_one_pass_at_most(lab):
    spend_the_days_budget(lab)
    ours = DocumentFactory(description="", content=b"Ana adopted a greyhound named Pixel.")

    assert passes_until_described(ours) == 1
    assert LLMCall.objects.filter(purpose="describe", space=lab).count() == 0  # refused, nothing sent


def test_a_spent_budget_sets_its_nodes_aside_until_it_has_room_again(lab, monkeypatch):
    from memory import tasks

    published = []
    monkeypatch.setattr(tasks.descriptions_write, "delay", lambda: published.append(True))
    spend_the_days_budget(lab)

    assert descriptions_write_pending(limit=PASS) == PASS  # the first refusal sets all aside
    assert waiting_for_budget(lab) == BACKLOG
    published.clear()  # the pass queued the next, which finds nothing ready

    descriptions_sweep()  # still spent: nothing comes back, nothing is queued
    assert waiting_for_budget(lab) == BACKLOG and published == []

    lab.llm_daily_calls = None  # the owner lifts the budget; a new day does the same
    lab.save()
    descriptions_sweep()
    assert waiting_for_budget(lab) == 0 and published == [True]
    assert descriptions_write_pending(limit=PASS) == PASS
    assert LLMCall.objects.filter(purpose="describe", space=lab).count() == PASS


def test_descriptions_are_charged_to_memsites_own_budget_in_the_space_not_to_the_writer(lab, user, settings):
    settings.MEMSITE_LLM_DAILY_CALLS = 1
    settings.MEMSITE_SYSTEM_LLM_DAILY_CALLS = 1
    make_call(by=acting(user))  # the writer's own day is spent: it holds up no description
    make_call(by=system(lab))  # memsite's own day in the lab is
    ours = DocumentFactory(description="", content=b"Ana adopted a greyhound named Pixel.", by=acting(user))

    assert passes_until_described(ours) == 1
    assert waiting_for_budget(lab) == BACKLOG
    [call] = LLMCall.objects.filter(purpose="describe")
    assert (call.space, call.user, call.acted_as) == (default_space(), None, LLMCall.ActedAs.SYSTEM)


def test_a_node_queued_while_its_spaces_budget_is_spent_joins_the_others_aside(lab):
    spend_the_days_budget(lab)
    descriptions_write_pending(limit=PASS)
    swarmstar = selectors.node_internal_folder(space=lab, name="swarmstar")
    late = DocumentFactory(parent=swarmstar, description="", content=b"Lab notes, a late day.")

    assert descriptions_write_pending(limit=PASS) == 1

    assert PendingDescription.objects.get(node_id=late.pk).waiting_for_budget
    assert waiting_for_budget(lab) == BACKLOG + 1


def test_offline_descriptions_wait_for_the_offline_cap_alone(lab, settings, monkeypatch):
    from memory import tasks

    monkeypatch.setattr(tasks.descriptions_write, "delay", lambda: None)
    settings.MEMSITE_LLM_PROVIDER = "offline"
    settings.MEMSITE_OFFLINE_LLM_DAILY_CALLS = 1
    spend_the_days_budget(lab)  # by a model's call: it holds up no offline one

    assert descriptions_write_pending(limit=PASS) == PASS  # one described, then the cap sets the rest aside
    assert waiting_for_budget(lab) == BACKLOG - 1
    descriptions_sweep()  # still capped
    assert waiting_for_budget(lab) == BACKLOG - 1

    settings.MEMSITE_OFFLINE_LLM_DAILY_CALLS = 20_000
    descriptions_sweep()  # back, though the budget of calls a model served is spent
    assert waiting_for_budget(lab) == 0
    assert descriptions_write_pending(limit=PASS) == PASS
    assert LLMCall.objects.filter(purpose="describe", space=lab, provider="offline").count() == PASS + 1
