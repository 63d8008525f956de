import pytest

from memsite import views

pytestmark = pytest.mark.django_db


def test_healthz_answers_without_login_and_reports_each_backend(client):
    response = client.get("/healthz")
    assert response.status_code in (200, 503)
    body = response.json()
    assert set(body) == {"status", "database", "broker"}
    assert body["database"] is True
    assert isinstance(body["broker"], bool)
    assert body["status"] == ("ok" if body["broker"] else "degraded")
    assert response.status_code == (200 if body["broker"] else 503)


def test_healthz_is_ok_when_every_backend_answers(client, monkeypatch):
    monkeypatch.setattr(views, "_broker_ok", lambda: True)
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": True, "broker": True}


def test_healthz_is_degraded_when_the_broker_is_down(client, monkeypatch):
    monkeypatch.setattr(views, "_broker_ok", lambda: False)
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json() == {"status": "degraded", "database": True, "broker": False}


def test_healthz_is_degraded_when_the_database_is_down(client, monkeypatch):
    monkeypatch.setattr(views, "_broker_ok", lambda: True)
    monkeypatch.setattr(views, "_database_ok", lambda: False)
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["database"] is False


def test_healthz_only_answers_get(client):
    assert client.post("/healthz").status_code == 405
