"""Beat's period for starting due ticks is the shortest ticking interval: the two cannot
disagree, and an interval below it is refused, on the dashboard too, naming the period."""

import json

import pytest
from django.urls import reverse

from agents.brains.models import Brain
from tests.factories import AgentFactory
from tests.memsite.test_deploy_settings import run_memsite

pytestmark = pytest.mark.django_db

SCHEDULE = (
    "import json; from django.conf import settings; "
    "print(json.dumps([settings.MEMSITE_TICK_MIN_INTERVAL_S, "
    "settings.CELERY_BEAT_SCHEDULE['ticks-start-due']['schedule']]))"
)


def test_beat_starts_due_ticks_at_the_shortest_interval(settings):
    assert settings.CELERY_BEAT_SCHEDULE["ticks-start-due"]["schedule"] == settings.MEMSITE_TICK_MIN_INTERVAL_S


def test_beat_follows_the_configured_shortest_interval(tmp_path):
    result = run_memsite(tmp_path, SCHEDULE, DJANGO_DEBUG="true", MEMSITE_TICK_MIN_INTERVAL_S="30")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [30, 30.0]


def test_the_dashboard_refuses_an_interval_below_beats_period(client, user, settings, offline_llm):
    settings.MEMSITE_TICK_MIN_INTERVAL_S = 30
    agent = AgentFactory()
    client.force_login(user)
    start = reverse("agents:brain_ticking_start", args=[agent.pk])
    page = client.post(start, {"interval_s": 20}, HTTP_HX_REQUEST="true")
    assert page.status_code == 400
    assert "beat queues due ticks every 30 s" in page.content.decode()
    assert not Brain.objects.filter(pk=agent.pk, ticking=True).exists()


def test_the_interval_field_asks_for_beats_period_at_least(client, user, settings):
    settings.MEMSITE_TICK_MIN_INTERVAL_S = 30
    agent = AgentFactory()
    client.force_login(user)
    html = client.get(reverse("agents:brain_detail", args=[agent.pk])).content.decode()
    assert 'name="interval_s" value="60" min="30"' in html
