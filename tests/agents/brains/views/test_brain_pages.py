import re
import time
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from agents.brains import views as views_brains
from agents.brains.models import Brain, Goal, Record, RecordKind, TickRun
from agents.brains.services.brains import brain_create, brain_writing, goal_complete, goal_create
from agents.context.models import Agent, Message
from agents.context.services import message_append
from tests.agents.conftest import HTMX
from tests.factories import AgentFactory, DocumentFactory
from tests.fake_openai import Reply

pytestmark = pytest.mark.django_db

SCRIPT = "<script>alert(1)</script>"
ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;"
START = timezone.now() - timedelta(hours=1)


def page_url(agent: Agent) -> str:
    return reverse("agents:brain_detail", args=[agent.pk])


def stream_url(agent: Agent, **query) -> str:
    url = reverse("agents:brain_stream", args=[agent.pk])
    return f"{url}?{'&'.join(f'{key}={value}' for key, value in query.items())}" if query else url


def records(agent: Agent, kind: str) -> list[str]:
    return list(Record.objects.filter(brain_id=agent.pk, kind=kind).order_by("seq").values_list("text", flat=True))


def conversation(agent: Agent) -> list[str]:
    return list(Message.objects.filter(agent=agent).order_by("position").values_list("content", flat=True))


def tick(agent: Agent, number: int, *, joy: float, dopamine: float = 0.5, status: str = "done") -> TickRun:
    brain_create(agent=agent)
    return TickRun.objects.create(
        brain_id=agent.pk,
        number=number,
        status=status,
        emotions={"joy": joy, "frustration": 0.0, "interest": 0.0, "confusion": 0.0},
        hormones={"dopamine": dopamine, "cortisol": 0.5, "serotonin": 0.5},
        ended_at=None if status == "running" else timezone.now(),
    )


def polling(html: str) -> str | None:
    """The URL the stream polls, if it polls."""
    stream = re.search(r'<section class="card stream" id="stream"[^>]*>', html, re.DOTALL).group(0)
    found = re.search(r'hx-get="([^"]+)"', stream)
    return found.group(1).replace("&amp;", "&") if found else None


def polyline(html: str, series: str) -> str:
    return re.search(rf'<polyline[^>]*data-series="{series}" points="([^"]*)"', html).group(1)


@pytest.fixture(autouse=True)
def offline(settings):
    settings.MEMSITE_LLM_PROVIDER = "offline"
    settings.OPENAI_API_KEY = None
    settings.OPENAI_BASE_URL = None
    return settings


@pytest.fixture
def agent():
    return AgentFactory(name="scout", model="gpt-4")


@pytest.fixture
def queued(monkeypatch) -> list[dict]:
    """The ticks queued for the worker."""
    ticks: list[dict] = []
    monkeypatch.setattr("agents.brains.tasks.tick_run.delay", lambda **kwargs: ticks.append(kwargs))
    return ticks


@pytest.fixture
def lived_in(agent):
    """A brain with a bit of everything, written as ticks write it."""
    with brain_writing(agent=agent) as brain:
        for number in range(1, 4):
            brain.record(
                kind=RecordKind.THOUGHT, text=f"thought {number}", item={}, at=START + timedelta(minutes=number)
            )
            brain.record(
                kind=RecordKind.EPISODE,
                text=f"episode {number}",
                item={"type": "list_dir", "where": f"/notes/{number}"},
                at=START + timedelta(minutes=number, seconds=1),
            )
        brain.record(kind=RecordKind.FACT, text="Cats purr.", item={}, at=START)
        brain.record(kind=RecordKind.SELF_INSTRUCTION, text="Read before writing.", item={}, at=START)
        me = brain.neuron(kind="self", label="self", at=START, strength=4.0)
        cats = brain.neuron(kind="concept", label="cats", at=START, strength=2.0)
        notes = brain.neuron(kind="path", label="/notes", at=START, strength=1.0)
        brain.connect(me, cats, at=START, weight=0.7)
        brain.connect(me, notes, at=START, weight=0.2)
        brain.connect(notes, cats, at=START, weight=0.4)
        brain.set(
            self_summary="I keep notes about cats.",
            plan=["list /notes", "read a note", "write a summary"],
            plan_step=1,
            last_error="no such path: /dogs",
        )
    goal_create(agent=agent, text="learn about cats")
    return agent


# -- access ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "name"),
    [
        ("get", "agents:brain_detail"),
        ("get", "agents:brain_stream"),
        ("post", "agents:brain_tick"),
        ("post", "agents:brain_ticking_start"),
        ("post", "agents:brain_ticking_pause"),
        ("post", "agents:brain_goal_create"),
        ("post", "agents:brain_chat"),
    ],
)
def test_pages_need_a_login(client, agent, queued, method, name):
    response = getattr(client, method)(reverse(name, args=[agent.pk]), {"text": "hello", "interval_s": 5})
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
    assert not Brain.objects.exists() and not queued


def test_completing_a_goal_needs_a_login(client, agent):
    goal = goal_create(agent=agent, text="learn")
    response = client.post(reverse("agents:brain_goal_complete", args=[agent.pk, goal.pk]))
    assert response.status_code == 302 and Goal.objects.get(pk=goal.pk).status == "active"


def test_writes_need_post_and_a_csrf_token(user, agent):
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    assert client.get(reverse("agents:brain_chat", args=[agent.pk])).status_code == 405
    for name, data in [
        ("agents:brain_chat", {"text": "hello"}),
        ("agents:brain_goal_create", {"text": "learn"}),
        ("agents:brain_tick", {}),
        ("agents:brain_ticking_start", {"interval_s": 5}),
        ("agents:brain_ticking_pause", {}),
    ]:
        assert client.post(reverse(name, args=[agent.pk]), data).status_code == 403
    assert not Brain.objects.exists()


def test_every_form_carries_a_csrf_token(user_client, lived_in):
    html = user_client.get(page_url(lived_in)).content.decode()
    main = html[html.index("<main") :]
    forms = re.findall(r"<form [^>]*method=\"post\".*?</form>", main, re.DOTALL)
    assert len(forms) == 6  # tick, start, pause, complete, add goal, chat
    assert all('name="csrfmiddlewaretoken"' in form for form in forms)


def test_an_unknown_agent_is_not_found(user_client):
    assert user_client.get(reverse("agents:brain_detail", args=[999])).status_code == 404
    assert user_client.get(reverse("agents:brain_stream", args=[999]), **HTMX).status_code == 404
    assert user_client.post(reverse("agents:brain_chat", args=[999]), {"text": "hi"}).status_code == 404


def test_the_agents_page_links_to_its_brain(user_client, agent):
    html = user_client.get(reverse("agents:agent_detail", args=[agent.pk])).content.decode()
    assert f'href="{page_url(agent)}"' in html


# -- the page ----------------------------------------------------------------------------------


def test_an_empty_brain_renders_without_writing(user_client, agent):
    html = user_client.get(page_url(agent)).content.decode()

    assert not Brain.objects.exists()
    assert 'id="no-brain"' in html and 'id="no-stream"' in html and "No goals yet." in html
    assert html.count("No ticks yet") == 2 and "<polyline" not in html


def test_the_page_shows_the_brain(user_client, lived_in):
    html = user_client.get(page_url(lived_in)).content.decode()

    stream = re.findall(r'<li class="stream-entry stream-(\w+)" id="(\w+-\d+)">', html)
    assert [entry_id for _, entry_id in stream] == [
        "episode-3",
        "thought-3",
        "episode-2",
        "thought-2",
        "episode-1",
        "thought-1",
    ]
    assert "at <code>/notes/3</code>" in html and "episode · list_dir" in html
    goal = Goal.objects.get()
    assert f'id="goal-{goal.pk}"' in html and "learn about cats" in html
    assert reverse("agents:brain_goal_complete", args=[lived_in.pk, goal.pk]) in html
    current = re.search(r'<li class="plan-step plan-current" aria-current="step">(.*?)</li>', html).group(1)
    assert "read a note" in current
    assert '<li class="plan-step plan-done">list /notes</li>' in html
    assert '<li class="plan-step">write a summary</li>' in html
    assert "I keep notes about cats." in html and "Read before writing." in html
    assert 'id="fact-1">Cats purr.</li>' in html and "no such path: /dogs" in html
    assert reverse("agents-api:memory-json", args=[lived_in.pk]) in html


def test_the_strongest_neurons_with_their_synapses(user_client, lived_in):
    html = user_client.get(page_url(lived_in)).content.decode()

    rows = re.findall(r'<tr id="neuron-\d+">(.*?)</tr>', html, re.DOTALL)
    labels = [re.search(r'<td class="neuron-label">(.*?)</td>', row).group(1) for row in rows]
    assert labels == ["self", "cats", "/notes"]
    outgoing = re.findall(r"→ (\S+) <span class=\"muted\">([\d.]+)</span>", rows[0])
    assert outgoing == [("cats", "0.70"), ("/notes", "0.20")]
    incoming = re.findall(r"← (\S+) <span class=\"muted\">([\d.]+)</span>", rows[1])
    assert incoming == [("self", "0.70"), ("/notes", "0.40")]


def test_the_neurons_shown_are_bounded(user_client, agent, monkeypatch):
    monkeypatch.setattr(views_brains, "NEURONS_SHOWN", 3)
    with brain_writing(agent=agent) as brain:
        me = brain.neuron(kind="self", label="self", at=START)
        for number in range(10):
            brain.connect(me, brain.neuron(kind="concept", label=f"c{number}", at=START, strength=number), at=START)
    html = user_client.get(page_url(agent)).content.decode()
    assert html.count('<tr id="neuron-') == 3 and ">c9</td>" in html and ">c8</td>" in html


def test_emotions_and_hormones_are_drawn_as_lines(user_client, agent):
    for number, (joy, dopamine) in enumerate([(0.0, 0.5), (0.5, 0.75), (1.0, 1.0)], start=1):
        tick(agent, number, joy=joy, dopamine=dopamine)
    tick(agent, 4, joy=0.3, status="running")  # not ended: not drawn yet

    html = user_client.get(page_url(agent)).content.decode()

    emotions = html[html.index('id="chart-emotions"') : html.index('id="chart-hormones"')]
    hormones = html[html.index('id="chart-hormones"') :]
    assert polyline(emotions, "joy") == "0,120 240,60 480,0"
    assert polyline(emotions, "frustration") == "0,120 240,120 480,120"
    assert polyline(hormones, "dopamine") == "0,60 240,30 480,0"
    assert polyline(hormones, "cortisol") == "0,60 240,60 480,60"
    assert "ticks 1–3" in emotions
    assert 'aria-label="Emotions over ticks 1 to 3; the newest: joy 1.00, frustration 0.00' in emotions
    assert (
        '<li data-series="joy"><span class="chart-swatch series-0" aria-hidden="true"></span>'
        "joy <strong>1.00</strong></li>" in emotions
    )


def test_the_charts_show_the_last_ticks_only(user_client, agent, monkeypatch):
    monkeypatch.setattr(views_brains, "CHART_TICKS", 2)
    for number, joy in enumerate([0.9, 0.0, 1.0], start=1):
        tick(agent, number, joy=joy)
    html = user_client.get(page_url(agent)).content.decode()
    assert polyline(html, "joy") == "0,120 480,0" and "ticks 2–3" in html


def test_written_text_is_escaped(user_client, agent):
    with brain_writing(agent=agent) as brain:
        for kind in (RecordKind.THOUGHT, RecordKind.EPISODE, RecordKind.FACT, RecordKind.SELF_INSTRUCTION):
            brain.record(kind=kind, text=f"{kind} {SCRIPT}", item={"where": SCRIPT, "type": SCRIPT}, at=START)
        brain.neuron(kind="concept", label=SCRIPT, at=START)
        brain.set(self_summary=SCRIPT, plan=[SCRIPT], last_error=SCRIPT, last_user_message=SCRIPT)
    goal_create(agent=agent, text=SCRIPT)
    message_append(agent=agent, role="user", content=SCRIPT, sender=SCRIPT)

    html = user_client.get(page_url(agent)).content.decode()

    assert SCRIPT not in html
    assert html.count(ESCAPED) == 15  # the goal twice: its text and its button's label; the line and its sender


# -- the live stream ---------------------------------------------------------------------------


def test_an_idle_brain_does_not_poll(user_client, lived_in):
    html = user_client.get(page_url(lived_in)).content.decode()
    assert polling(html) is None and 'data-settled="true"' in html

    response = user_client.get(stream_url(lived_in), **HTMX)
    assert response.status_code == 286


def test_a_ticking_brain_polls_and_the_poll_brings_new_entries(user_client, lived_in):
    Brain.objects.filter(pk=lived_in.pk).update(ticking=True, next_tick_at=timezone.now())
    html = user_client.get(page_url(lived_in)).content.decode()
    poll = polling(html)
    assert poll.startswith(stream_url(lived_in)) and 'hx-trigger="every 3s"' in html

    response = user_client.get(poll, **HTMX)
    assert response.status_code == 200
    partial = response.content.decode()
    assert polling(partial) == poll and 'hx-swap-oob="true"' not in partial  # nothing changed

    with brain_writing(agent=lived_in) as brain:
        brain.record(kind=RecordKind.THOUGHT, text="a new thought", item={}, at=timezone.now())
        brain.record(kind=RecordKind.FACT, text="Dogs bark.", item={}, at=timezone.now())
    partial = user_client.get(poll, **HTMX).content.decode()
    entries = re.findall(r'<li class="stream-entry stream-\w+" id="(\w+-\d+)">', partial)
    assert entries[0] == "thought-4"
    # The brain changed: the other panels come along, out of band.
    for panel in (
        'id="affect"',
        'id="plan"',
        'id="goal-list"',
        'id="self"',
        'id="facts"',
        'id="neurons"',
        'id="chat-log"',
    ):
        assert re.search(rf'{panel}[^>]*hx-swap-oob="true"', partial), panel
    assert "Dogs bark." in partial
    assert polling(partial) != poll  # the next poll asks from the new version


def test_a_running_tick_keeps_the_stream_polling_until_it_ends(user_client, agent):
    tick(agent, 1, joy=0.2, status="running")
    Brain.objects.filter(pk=agent.pk).update(tick_count=1, lease_until=timezone.now() + timedelta(minutes=5))

    response = user_client.get(stream_url(agent), **HTMX)
    assert response.status_code == 200 and "tick 1 running…" in response.content.decode()

    TickRun.objects.filter(brain_id=agent.pk).update(status="done", ended_at=timezone.now())
    Brain.objects.filter(pk=agent.pk).update(lease_until=None)
    response = user_client.get(stream_url(agent), **HTMX)
    assert response.status_code == 286 and "tick 1 done" in response.content.decode()


def test_a_tick_asked_for_is_awaited_for_a_while(user_client, agent):
    brain_create(agent=agent)
    until = int(time.time()) + 60
    response = user_client.get(stream_url(agent, awaiting=1, until=until), **HTMX)
    assert response.status_code == 200 and "tick 1 queued…" in response.content.decode()

    past = int(time.time()) - 1
    assert user_client.get(stream_url(agent, awaiting=1, until=past), **HTMX).status_code == 286

    Brain.objects.filter(pk=agent.pk).update(tick_count=1)  # it started, and has ended
    assert user_client.get(stream_url(agent, awaiting=1, until=until), **HTMX).status_code == 286


def test_the_stream_without_htmx_is_the_page(user_client, agent):
    response = user_client.get(stream_url(agent))
    assert response.status_code == 302 and response["Location"] == page_url(agent)


# -- tick controls -----------------------------------------------------------------------------


def test_run_one_tick_queues_it_and_polls_for_it(user_client, agent, queued, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = user_client.post(reverse("agents:brain_tick", args=[agent.pk]), **HTMX)

    assert response.status_code == 200 and queued == [{"agent_id": agent.pk}]
    html = response.content.decode()
    assert "A tick is queued." in html and 'id="tick-controls"' in html
    assert 'id="stream"' in html and 'hx-swap-oob="true"' in html
    poll = polling(html)
    assert "awaiting=1" in poll and "tick 1 queued…" in html


def test_ticking_starts_and_pauses(user_client, agent):
    response = user_client.post(reverse("agents:brain_ticking_start", args=[agent.pk]), {"interval_s": "15"}, **HTMX)
    assert response.status_code == 200
    html = response.content.decode()
    assert "Ticking every 15 s." in html and polling(html) is not None and "every 15 s" in html
    brain = Brain.objects.get(pk=agent.pk)
    assert brain.ticking and brain.tick_interval_s == 15

    response = user_client.post(reverse("agents:brain_ticking_pause", args=[agent.pk]), **HTMX)
    html = response.content.decode()
    assert "Paused." in html and polling(html) is None and 'data-settled="true"' in html
    assert not Brain.objects.get(pk=agent.pk).ticking


@pytest.mark.parametrize("interval", ["", "0", "abc", "999999999"])
def test_a_bad_interval_is_shown_and_nothing_is_written(user_client, agent, interval):
    response = user_client.post(
        reverse("agents:brain_ticking_start", args=[agent.pk]), {"interval_s": interval}, **HTMX
    )
    assert response.status_code == 400
    assert 'class="alert alert-error"' in response.content.decode()
    assert not Brain.objects.exists()


def test_the_controls_work_without_javascript(user_client, agent, queued):
    response = user_client.post(reverse("agents:brain_ticking_start", args=[agent.pk]), {"interval_s": "30"})
    assert response.status_code == 302 and response["Location"] == page_url(agent)
    response = user_client.post(reverse("agents:brain_ticking_start", args=[agent.pk]), {"interval_s": "0"})
    assert response.status_code == 400 and "<h1>scout · brain</h1>" in response.content.decode()


# -- goals -------------------------------------------------------------------------------------


def test_a_goal_is_added(user_client, agent):
    response = user_client.post(reverse("agents:brain_goal_create", args=[agent.pk]), {"text": "map the notes"}, **HTMX)

    assert response.status_code == 200
    html = response.content.decode()
    goal = Goal.objects.get()
    assert goal.text == "map the notes" and f'id="goal-{goal.pk}"' in html
    assert html.startswith('\n<section class="card" id="goals"') and "Added the goal" in html
    assert 'value="map the notes"' not in html  # the form is cleared


def test_an_empty_goal_is_shown_and_nothing_is_written(user_client, agent):
    response = user_client.post(reverse("agents:brain_goal_create", args=[agent.pk]), {"text": ""}, **HTMX)
    assert response.status_code == 400 and "This field is required." in response.content.decode()
    assert not Goal.objects.exists()


def test_a_refused_goal_keeps_its_text_and_says_why(user_client, agent, settings):
    settings.MEMSITE_BRAIN_CAPS = {"goal": 1}
    goal_create(agent=agent, text="the only one")
    response = user_client.post(
        reverse("agents:brain_goal_create", args=[agent.pk]), {"text": f"another {SCRIPT}"}, **HTMX
    )

    assert response.status_code == 409
    html = response.content.decode()
    assert "complete one first" in html and f'value="another {ESCAPED}"' in html
    assert list(Goal.objects.values_list("text", flat=True)) == ["the only one"]


def test_a_goal_is_completed(user_client, agent):
    goal = goal_create(agent=agent, text="map the notes")
    url = reverse("agents:brain_goal_complete", args=[agent.pk, goal.pk])

    response = user_client.post(url, **HTMX)
    assert response.status_code == 200 and "Done: “map the notes”." in response.content.decode()
    assert Goal.objects.get().status == "done"

    response = user_client.post(url, **HTMX)
    assert response.status_code == 409 and "already done" in response.content.decode()


def test_another_agents_goal_is_not_completed(user_client, agent):
    goal = goal_create(agent=AgentFactory(), text="theirs")
    response = user_client.post(reverse("agents:brain_goal_complete", args=[agent.pk, goal.pk]), **HTMX)
    assert response.status_code == 404 and Goal.objects.get().status == "active"


def test_goals_work_without_javascript(user_client, agent):
    response = user_client.post(reverse("agents:brain_goal_create", args=[agent.pk]), {"text": "map"})
    assert response.status_code == 302 and response["Location"] == page_url(agent)
    goal = Goal.objects.get()
    goal_complete(agent=agent, goal_id=goal.pk)
    response = user_client.post(reverse("agents:brain_goal_complete", args=[agent.pk, goal.pk]))
    assert response.status_code == 409 and "already done" in response.content.decode()


# -- chat --------------------------------------------------------------------------------------


def test_chat_appends_the_exchange(user_client, agent):
    response = user_client.post(reverse("agents:brain_chat", args=[agent.pk]), {"text": "What do you know?"}, **HTMX)

    assert response.status_code == 200
    html = response.content.decode()
    said, reply = conversation(agent)
    assert said == "What do you know?" and reply
    appended = re.search(r'<ol hx-swap-oob="beforeend:#chat-log">(.*)</ol>', html, re.DOTALL).group(1)
    assert re.findall(r'<li class="chat-line chat-(\w+)" id="chat-(\d+)">', appended) == [
        ("user", "1"),
        ("assistant", "2"),
    ]
    assert "What do you know?" in appended and '<span class="chat-who">scout</span>' in appended
    assert html.lstrip().startswith('<form id="chat-form"') and "What do you know?</textarea>" not in html


def test_an_offline_reply_is_marked_heuristic_and_links_what_it_cites(user_client, agent, settings):
    settings.MEMSITE_EMBEDDINGS = "off"
    with brain_writing(agent=agent) as brain:
        brain.record(kind=RecordKind.FACT, text="The harbour office opens at nine.", item={}, at=START)
    doc = DocumentFactory(name="harbour-hours", content=b"The harbour office opens at nine on weekdays.")

    response = user_client.post(
        reverse("agents:brain_chat", args=[agent.pk]), {"text": "When does the harbour office open?"}, **HTMX
    )

    html = response.content.decode()
    reply = re.search(r'<li class="chat-line chat-assistant".*?</li>', html, re.DOTALL).group(0)
    assert '<span class="badge badge-heuristic"' in reply and "opens at nine" in reply
    assert '<a class="citation citation-fact" href="#fact-1">fact 1</a>' in reply
    assert f'<a class="citation citation-node" href="/memory/{doc.pk}/">/swarmstar/harbour-hours</a>' in reply
    page = user_client.get(page_url(agent)).content.decode()
    assert page.count('class="badge badge-heuristic"') == 1 and f'href="/memory/{doc.pk}/"' in page


def test_a_reply_of_a_model_is_not_marked_and_stored_citations_are_escaped(user_client, agent):
    data = {
        "provider": "openai",
        "citations": [
            {"kind": "node", "ref": "memory_ab", "label": SCRIPT},
            {"kind": "node", "ref": "javascript:alert(1)", "label": "bad"},
            {"kind": "fact", "ref": "1; x", "label": "bad"},
        ],
    }
    message_append(agent=agent, role="assistant", content="From a model.", data=data)

    html = user_client.get(page_url(agent)).content.decode()

    assert "badge-heuristic" not in html and SCRIPT not in html
    assert f'<a class="citation citation-node" href="/memory/memory_ab/">{ESCAPED}</a>' in html
    assert "javascript:" not in html and ">bad<" not in html


def test_a_cited_fact_the_page_does_not_show_is_quoted_not_linked(user_client, agent):
    shown = views_brains.FACTS_SHOWN
    with brain_writing(agent=agent) as brain:
        for number in range(1, shown + 2):  # fact 1 is one too old to be shown
            brain.record(kind=RecordKind.FACT, text=f"Fact <{number}>.", item={}, at=START)
    cited = [{"kind": "fact", "ref": ref, "label": f"fact {ref}"} for ref in ("1", str(shown + 1), "999")]
    message_append(
        agent=agent, role="assistant", content="From memory.", data={"provider": "openai", "citations": cited}
    )

    html = user_client.get(page_url(agent)).content.decode()

    chat = re.search(r'<ol class="chat-log".*?</ol>', html, re.DOTALL).group(0)
    assert '<span class="citation citation-fact" title="Fact &lt;1&gt;.">fact 1 <q>Fact &lt;1&gt;.</q></span>' in chat
    assert f'<a class="citation citation-fact" href="#fact-{shown + 1}">fact {shown + 1}</a>' in chat
    assert f'id="fact-{shown + 1}"' in html and 'id="fact-1"' not in html
    assert '<span class="citation citation-fact">fact 999</span>' in chat  # no longer kept: neither


def test_chat_text_is_escaped(user_client, agent):
    response = user_client.post(reverse("agents:brain_chat", args=[agent.pk]), {"text": f"say {SCRIPT}"}, **HTMX)
    html = response.content.decode() + user_client.get(page_url(agent)).content.decode()
    assert SCRIPT not in html and f"say {ESCAPED}" in html


def test_an_empty_message_is_shown_and_nothing_is_written(user_client, agent):
    response = user_client.post(reverse("agents:brain_chat", args=[agent.pk]), {"text": "   "}, **HTMX)
    assert response.status_code == 400
    html = response.content.decode()
    assert 'class="alert alert-error"' in html and "hx-swap-oob" not in html
    assert conversation(agent) == []


def test_a_failed_reply_is_shown_with_the_kept_line(user_client, agent, settings, fake_openai):
    settings.MEMSITE_LLM_PROVIDER = "openai"
    settings.OPENAI_API_KEY = "sk-test"
    settings.OPENAI_BASE_URL = fake_openai.url
    settings.MEMSITE_LLM_MAX_RETRIES = 0
    fake_openai.script(Reply.failure(500, "The model is down."))

    response = user_client.post(reverse("agents:brain_chat", args=[agent.pk]), {"text": "Are you there?"}, **HTMX)

    assert response.status_code == 200  # htmx swaps no 5xx
    html = response.content.decode()
    assert "LLM call failed" in html and "Are you there?</textarea>" in html
    assert re.findall(r'id="chat-(\d+)"', html) == ["1"]
    assert conversation(agent) == ["Are you there?"]


def test_chat_works_without_javascript(user_client, agent):
    response = user_client.post(reverse("agents:brain_chat", args=[agent.pk]), {"text": "hello"})
    assert response.status_code == 302 and response["Location"] == page_url(agent)
    html = user_client.get(page_url(agent)).content.decode()
    assert re.findall(r'<li class="chat-line chat-(\w+)"', html) == ["user", "assistant"]


def test_a_goal_said_in_chat_shows_in_the_goals(user_client, agent):
    response = user_client.post(reverse("agents:brain_chat", args=[agent.pk]), {"text": "goal: map the notes"}, **HTMX)
    html = response.content.decode()
    goal = Goal.objects.get()
    assert re.search(r'<ul class="goals" id="goal-list" hx-swap-oob="true">', html)
    assert f'id="goal-{goal.pk}"' in html and "Goal added: map the notes" in html


# -- one thread --------------------------------------------------------------------------------


def brain_thread(html: str) -> list[tuple[str, str, str]]:
    """(position, role, text) of the brain page's chat, oldest first."""
    chat = re.search(r'<ol class="chat-log".*?</ol>', html, re.DOTALL).group(0)
    lines = re.findall(
        r'<li class="chat-line chat-(\w+)" id="chat-(\d+)">.*?<span class="chat-text[^"]*">(.*?)</span>',
        chat,
        re.DOTALL,
    )
    return [(position, role, text) for role, position, text in lines]


def agent_thread(html: str) -> list[tuple[str, str, str]]:
    """(position, role, text) of the agent page's conversation, oldest first."""
    found = re.findall(
        r'<li class="message message-(\w+)[^"]*" id="message-(\d+)">'
        r'.*?(?:<pre class="code message-content">(.*?)</pre>|</li>)',
        html,
        re.DOTALL,
    )
    return [(position, role, text) for role, position, text in reversed(found)]


def test_the_brain_page_and_the_agent_page_show_one_thread(user_client, agent, settings):
    settings.MEMSITE_EMBEDDINGS = "off"
    with brain_writing(agent=agent) as brain:
        brain.record(kind=RecordKind.FACT, text="The harbour office opens at nine.", item={}, at=START)
    message_append(agent=agent, role="user", content="The office moved to pier 4.", sender="ops")
    user_client.post(reverse("agents:brain_chat", args=[agent.pk]), {"text": "When does the harbour office open?"})

    brain_page = user_client.get(page_url(agent)).content.decode()
    agent_page = user_client.get(reverse("agents:agent_detail", args=[agent.pk])).content.decode()

    reply = Message.objects.get(agent=agent, position=3)
    expected = [
        ("1", "user", "The office moved to pier 4."),
        ("2", "user", "When does the harbour office open?"),
        ("3", "assistant", reply.content.replace('"', "&quot;")),
    ]
    assert brain_thread(brain_page) == agent_thread(agent_page) == expected
    assert '<span class="chat-who">ops</span>' in brain_page  # who said it, when not the page's user
    # The reply's citation and its heuristic mark, on both pages.
    for html in (brain_page, agent_page):
        assert re.search(r'class="citation citation-fact"[^>]*>fact 1', html)
        assert html.count('class="badge badge-heuristic"') == 1


def test_a_message_appended_elsewhere_comes_to_the_chat_with_the_next_poll(user_client, lived_in):
    Brain.objects.filter(pk=lived_in.pk).update(ticking=True, next_tick_at=timezone.now())
    poll = polling(user_client.get(page_url(lived_in)).content.decode())

    message_append(agent=lived_in, role="user", content="Said through the API.")
    partial = user_client.get(poll, **HTMX).content.decode()

    assert re.search(r'id="chat-log"[^>]*hx-swap-oob="true"', partial)
    assert [line[2] for line in brain_thread(partial)][-1] == "Said through the API."
