"""Ticks as tasks: the per-brain lease that keeps ticks from overlapping, beat's start of due
brains, and many agents ticked by a real Celery worker."""

import threading
import time
from datetime import timedelta

import pytest
from django.db import connection
from django.db.models import F
from django.utils import timezone

from agents.brains import services
from agents.brains.models import Brain, TickRun
from memsite.errors import InvalidInput, ServiceUnavailable
from tests.factories import AgentFactory, a_member, ticked_by


def slow_llm(monkeypatch, seconds: float, running: list[int] | None = None):
    """Every tick's LLM call takes `seconds` longer; with `running`, each call notes how many of
    the brain's tick runs are running."""
    from agents.brains.services import ticks

    real = ticks.complete

    def slow(**kwargs):
        if running is not None:
            running.append(TickRun.objects.filter(brain_id=kwargs["served"].brain_id, status="running").count())
        time.sleep(seconds)
        return real(**kwargs)

    monkeypatch.setattr(ticks, "complete", slow)


# The lease ---------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_tick_while_another_holds_the_lease_does_nothing(agent, internal):
    Brain.objects.filter(pk=agent.pk).update(lease_until=timezone.now() + timedelta(seconds=60))

    assert services.tick_run(agent_id=agent.pk) is None

    assert not TickRun.objects.exists()
    brain = Brain.objects.get(pk=agent.pk)
    assert brain.tick_count == 0 and brain.lease_until is not None


@pytest.mark.django_db
def test_an_expired_lease_is_taken_over_and_the_dead_ticks_run_fails(agent, internal):
    dead = TickRun.objects.create(brain_id=agent.pk, number=1)
    Brain.objects.filter(pk=agent.pk).update(tick_count=1, lease_until=timezone.now() - timedelta(seconds=1))

    run = services.tick_run(agent_id=agent.pk)

    assert run.number == 2 and run.status == TickRun.Status.DONE
    dead.refresh_from_db()
    assert dead.status == TickRun.Status.FAILED and "lease" in dead.error
    assert Brain.objects.get(pk=agent.pk).lease_until is None  # released at the end


@pytest.mark.django_db
def test_a_tick_that_lost_its_lease_writes_nothing_more(agent, internal, monkeypatch):
    from agents.brains.services import ticks

    real = ticks.complete

    def taken_over(**kwargs):
        # Another tick takes the brain over while this one waits for the LLM.
        Brain.objects.filter(pk=agent.pk).update(lease_until=timezone.now() + timedelta(seconds=600))
        return real(**kwargs)

    monkeypatch.setattr(ticks, "complete", taken_over)

    assert services.tick_run(agent_id=agent.pk) is not None
    run = TickRun.objects.get()
    assert run.status == TickRun.Status.RUNNING  # left for the tick that took over to end
    assert [step["name"] for step in run.steps] == ["read"]
    assert not Brain.objects.get(pk=agent.pk).records.filter(kind="episode").exists()


@pytest.mark.django_db
def test_a_step_renews_the_lease_once_a_tenth_of_it_is_spent(agent, internal, monkeypatch, settings):
    settings.MEMSITE_TICK_LEASE_S = 2
    leases = []
    slow_llm(monkeypatch, 0.3)  # each LLM call spends more than a tenth of the lease
    from agents.brains.services import ticks

    slow = ticks.complete

    def noting(**kwargs):
        leases.append(Brain.objects.get(pk=agent.pk).lease_until)
        return slow(**kwargs)

    monkeypatch.setattr(ticks, "complete", noting)

    run = services.tick_run(agent_id=agent.pk)

    assert run.status == TickRun.Status.DONE
    assert leases[1] > leases[0]  # the decision's step renewed it before the reflection's call
    assert Brain.objects.get(pk=agent.pk).lease_until is None


@pytest.mark.django_db
def test_a_tick_whose_lease_is_taken_over_as_it_renews_it_stops_there(agent, internal, monkeypatch):
    from agents.brains.services import leases

    renewed = leases.lease_renewed

    def taken_over(tick):
        # The step's check has passed; another tick takes the brain over before the renewal.
        Brain.objects.filter(pk=agent.pk).update(lease_until=timezone.now() + timedelta(seconds=600))
        return renewed(tick) or timezone.now() + timedelta(seconds=300)

    monkeypatch.setattr(leases, "lease_renewed", taken_over)

    services.tick_run(agent_id=agent.pk)

    # The renewal found the lease another's and wrote nothing, the decision's step included (in
    # one connection the takeover goes with it).
    run = TickRun.objects.get()
    assert run.status == TickRun.Status.RUNNING and [step["name"] for step in run.steps] == ["read"]
    assert not Brain.objects.get(pk=agent.pk).records.filter(kind="episode").exists()


@pytest.mark.django_db
def test_a_tick_whose_brain_ticked_since_its_read_does_nothing(agent, internal, monkeypatch):
    from agents.brains.services import ticks

    explore = ticks.explore_next

    def another_tick_meanwhile(**kwargs):
        exploration = explore(**kwargs)
        Brain.objects.filter(pk=agent.pk).update(tick_count=F("tick_count") + 1)
        return exploration

    monkeypatch.setattr(ticks, "explore_next", another_tick_meanwhile)

    assert services.tick_run(agent_id=agent.pk) is None

    assert not TickRun.objects.exists()
    assert Brain.objects.get(pk=agent.pk).lease_until is None


@pytest.mark.django_db
def test_a_tick_that_lost_its_lease_leaves_its_run_to_the_tick_that_took_over(agent, internal, monkeypatch):
    from agents.brains.services import ticks

    theirs = timezone.now() + timedelta(seconds=600)

    def broken_after_a_takeover(**kwargs):
        Brain.objects.filter(pk=agent.pk).update(lease_until=theirs)
        raise RuntimeError("the action broke")

    monkeypatch.setattr(ticks, "action_run", broken_after_a_takeover)

    run = services.tick_run(agent_id=agent.pk)

    assert run.status == TickRun.Status.RUNNING and run.error == ""  # not ended over the new holder
    assert Brain.objects.get(pk=agent.pk).lease_until == theirs


@pytest.mark.django_db
def test_the_lease_expires_by_itself(agent, internal, settings):
    settings.MEMSITE_TICK_LEASE_S = 1
    Brain.objects.filter(pk=agent.pk).update(lease_until=timezone.now() + timedelta(seconds=1))
    assert services.tick_run(agent_id=agent.pk) is None

    time.sleep(1.1)

    assert services.tick_run(agent_id=agent.pk).status == TickRun.Status.DONE


def test_concurrent_ticks_of_one_agent_never_overlap(tree, sqlite_waits_for_locks, monkeypatch):
    agent = AgentFactory(name="racer")
    ticked_by(agent)
    running: list[int] = []
    slow_llm(monkeypatch, 0.05, running)
    results: list[object] = []
    errors: list[BaseException] = []

    def tick() -> None:
        try:
            for _ in range(3):
                results.append(services.tick_run(agent_id=agent.pk))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=tick) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)

    assert errors == []
    ran = [result for result in results if result is not None]
    assert ran and len(ran) < len(results)  # some found the lease held
    numbers = sorted(TickRun.objects.filter(brain_id=agent.pk).values_list("number", flat=True))
    assert numbers == list(range(1, len(ran) + 1))  # unique and sequential
    assert set(running) == {1}  # whenever a tick called the LLM, it was the only one running
    assert not TickRun.objects.filter(status=TickRun.Status.RUNNING).exists()
    assert Brain.objects.get(pk=agent.pk).tick_count == len(ran)


# Ticking and beat --------------------------------------------------------------------------------


@pytest.fixture
def ticks_queued(monkeypatch) -> list[int]:
    queued: list[int] = []
    monkeypatch.setattr("agents.brains.tasks.tick_run.delay", lambda agent_id: queued.append(agent_id))
    return queued


@pytest.mark.django_db
def test_ticking_start_makes_the_brain_due_now(agent, ticks_queued, django_capture_on_commit_callbacks):
    brain = services.ticking_start(agent=agent, interval_s=30, by=a_member())

    assert brain.ticking and brain.tick_interval_s == 30
    assert brain.next_tick_at <= timezone.now()
    with django_capture_on_commit_callbacks(execute=True):
        assert services.ticks_start_due() == 1
    assert ticks_queued == [agent.pk]
    brain.refresh_from_db()
    assert timedelta(seconds=29) < brain.next_tick_at - timezone.now() <= timedelta(seconds=30)


@pytest.mark.django_db
def test_beat_starts_only_due_ticking_brains_and_each_once(ticks_queued, django_capture_on_commit_callbacks):
    due, later, paused = (AgentFactory() for _ in range(3))
    for agent in (due, later, paused):
        services.ticking_start(agent=agent, interval_s=60, by=a_member())
    Brain.objects.filter(pk=later.pk).update(next_tick_at=timezone.now() + timedelta(seconds=30))
    services.ticking_pause(agent=paused)

    with django_capture_on_commit_callbacks(execute=True):
        first = services.ticks_start_due()
        second = services.ticks_start_due()  # a second beat at once finds nothing due

    assert (first, second) == (1, 0)
    assert ticks_queued == [due.pk]
    paused_brain = Brain.objects.get(pk=paused.pk)
    assert not paused_brain.ticking and paused_brain.next_tick_at is None


@pytest.mark.django_db
def test_beat_checks_the_broker_once_for_all_the_ticks_it_queues(
    ticks_queued, django_capture_on_commit_callbacks, monkeypatch
):
    agents = [AgentFactory() for _ in range(3)]
    for agent in agents:
        services.ticking_start(agent=agent, interval_s=60, by=a_member())
    checks: list[bool] = []
    monkeypatch.setattr("memsite.queue._broker_check", lambda: checks.append(True))

    with django_capture_on_commit_callbacks(execute=True):
        assert services.ticks_start_due() == 3

    assert len(checks) == 1 and sorted(ticks_queued) == sorted(agent.pk for agent in agents)


@pytest.mark.django_db
def test_beat_with_the_broker_down_moves_no_tick_on(agent, ticks_queued, monkeypatch):
    services.ticking_start(agent=agent, interval_s=60, by=a_member())
    due_at = Brain.objects.get(pk=agent.pk).next_tick_at

    def down() -> None:
        raise ConnectionError("broker down")

    monkeypatch.setattr("memsite.queue._broker_check", down)
    with pytest.raises(ServiceUnavailable):
        services.ticks_start_due()

    assert Brain.objects.get(pk=agent.pk).next_tick_at == due_at and ticks_queued == []


@pytest.mark.django_db
def test_ticking_start_checks_the_interval(agent):
    for interval in (0, -5, True, "60", 10**9):
        with pytest.raises(InvalidInput):
            services.ticking_start(agent=agent, interval_s=interval, by=a_member())


@pytest.mark.django_db
def test_starting_again_keeps_the_next_tick_no_later_than_the_new_interval(agent):
    services.ticking_start(agent=agent, interval_s=600, by=a_member())
    Brain.objects.filter(pk=agent.pk).update(next_tick_at=timezone.now() + timedelta(seconds=500))

    brain = services.ticking_start(agent=agent, interval_s=10, by=a_member())

    assert brain.next_tick_at - timezone.now() <= timedelta(seconds=10)


@pytest.mark.django_db
def test_tick_request_queues_one_tick_on_commit(agent, ticks_queued, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        services.tick_request(agent=agent, by=a_member())
        assert ticks_queued == []  # not before the commit

    assert ticks_queued == [agent.pk]
    assert not Brain.objects.get(pk=agent.pk).ticking  # run once: it does not start ticking


@pytest.mark.django_db
def test_a_tick_of_an_agent_that_is_gone_does_nothing():
    assert services.tick_run(agent_id=987_654) is None


# A real worker -----------------------------------------------------------------------------------


def wait_for(condition, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError(f"Not done after {seconds} s.")


def test_many_agents_are_ticked_by_one_worker(tick_worker):
    agents = [AgentFactory(name=f"swarm-{number}") for number in range(10)]
    for agent in agents:
        services.ticking_start(agent=agent, interval_s=3_600, by=a_member())

    assert services.ticks_start_due() == 10  # each queued as its row commits
    done = TickRun.objects.filter(status=TickRun.Status.DONE)
    wait_for(lambda: done.count() == 10)
    for agent in agents[:3]:
        services.tick_request(agent=agent, by=a_member())  # and a second tick for some, run once

    wait_for(lambda: done.count() == 13)
    for index, agent in enumerate(agents):
        runs = list(TickRun.objects.filter(brain_id=agent.pk).order_by("number"))
        assert [run.number for run in runs] == ([1, 2] if index < 3 else [1])
        assert all(run.status == TickRun.Status.DONE and run.action for run in runs)
        brain = Brain.objects.get(pk=agent.pk)
        assert brain.tick_count == len(runs) and brain.lease_until is None
        assert brain.records.filter(kind="episode").count() == len(runs)
    assert services.ticks_start_due() == 0  # the next ticks are an hour away
