"""Outages of Redis and PostgreSQL, simulated with a TCP proxy (tests/hardening/proxy.py) in
front of the shared servers, which are never stopped themselves.

Redis down: reads and the dashboard keep working; starting background work answers 503 with a
message and changes nothing; a worker runs the work queued before once Redis is back, and the
stale-search sweep re-queues a search whose worker went away. PostgreSQL restarted: the
requests of the outage answer 503 (JSON, a page, an htmx fragment), and the same server
process serves normally again afterwards."""

import http.client
import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest
import redis
from django.conf import settings
from django.db import OperationalError, connection
from django.test import Client, RequestFactory
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from memory import services as memory_services
from memory.models import Search
from memsite import views
from memsite.celery import app as celery_app
from memsite.middleware import DATABASE_UNAVAILABLE
from memsite.queue import QUEUE_UNAVAILABLE
from tests.agents.support import say
from tests.factories import AgentFactory, SearchFactory, UserFactory, default_space, system, token_for
from tests.hardening.bad_input_world import database_dump
from tests.hardening.proxy import TcpProxy, free_port

REPO = Path(__file__).resolve().parents[2]
HTMX = {"HTTP_HX_REQUEST": "true"}
QUICK_S = 2.5  # a refusal, or a read with Redis gone, answers within this


def timed(call: Callable[[], object]) -> tuple[object, float]:
    started = time.monotonic()
    result = call()
    return result, time.monotonic() - started


def wait_for(condition: Callable[[], bool], *, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"Timed out after {timeout} s waiting for {what}.")
        time.sleep(0.2)


def _stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@pytest.fixture(autouse=True)
def offline(offline_llm):
    """The offline provider: nothing here may reach a model."""
    return offline_llm


def internal_folders() -> None:
    """Transactional tests empty the tables, the internal folders with them."""
    default_space()  # made again if emptied, and with it its internal folders


# -- Redis -------------------------------------------------------------------------------------


@dataclass
class Broker:
    proxy: TcpProxy
    url: str  # REDIS_URL through the proxy
    queue: str  # this test's own queue: another run's worker on the same Redis never takes its tasks


def _proxied_url(url: str, port: int) -> str:
    parts = urlsplit(url)
    userinfo = parts.netloc.rpartition("@")[0]
    return parts._replace(netloc=f"{userinfo + '@' if userinfo else ''}127.0.0.1:{port}").geturl()


@contextmanager
def celery_broker(url: str, queue: str) -> Iterator[None]:
    """The Celery app publishing to `url`, on `queue` by default. Its AMQP half (queues,
    exchanges, the producer pool) and its connection pool are made afresh for the block, and
    the usual ones put back after it."""
    saved_conf = {"broker_url": celery_app.conf.broker_url, "task_default_queue": celery_app.conf.task_default_queue}
    saved_amqp, saved_pool = celery_app.amqp, celery_app._pool
    celery_app.conf.update(broker_url=url, task_default_queue=queue)
    del celery_app.amqp
    celery_app._pool = None
    try:
        yield
    finally:
        for pool in (celery_app._pool, celery_app.amqp._producer_pool):
            if pool is not None:
                pool.force_close_all()
        celery_app.conf.update(saved_conf)
        celery_app.amqp, celery_app._pool = saved_amqp, saved_pool


@pytest.fixture
def broker(settings) -> Iterator[Broker]:
    """Celery's broker and the rate limit's cache, both in Redis through a proxy."""
    if not settings.REDIS_URL:
        pytest.skip(
            "Redis outages are simulated in front of a real Redis: set REDIS_URL (CI does; "
            "the embedded run's filesystem broker cannot go away)."
        )
    target = urlsplit(settings.REDIS_URL)
    with TcpProxy(target.hostname or "127.0.0.1", target.port or 6379) as proxy:
        url = _proxied_url(settings.REDIS_URL, proxy.port)
        queue = f"memsite-outages-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        settings.CACHES = {
            "default": {
                **settings.CACHES["default"],
                "BACKEND": "django.core.cache.backends.redis.RedisCache",
                "LOCATION": url,
                "KEY_PREFIX": queue,
                "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
            }
        }
        try:
            with celery_broker(url, queue):
                yield Broker(proxy=proxy, url=url, queue=queue)
        finally:
            client = redis.Redis.from_url(settings.REDIS_URL)
            client.delete(
                queue, f"_kombu.binding.{queue}", f"_kombu.binding_permanent.{queue}"
            )  # the worker declared them
            client.close()


def starts(world) -> list[tuple[str, Callable[[dict], object]]]:
    """Every request that starts background work, by the API and by the dashboard."""
    agent, graph = world.agent, world.graph
    memorize = {"messages": [{"role": "assistant", "content": "ls"}, {"role": "tool", "content": "README.md"}]}
    return [
        ("api search", lambda c: c["api"].post("/api/searches/", {"questions": ["Where is the plan?"]}, format="json")),
        ("api tick", lambda c: c["api"].post(f"/api/agents/{agent.pk}/tick/")),
        (
            "api ticking",
            lambda c: c["api"].post(f"/api/agents/{agent.pk}/ticking/start/", {"interval_s": 30}, format="json"),
        ),
        ("api memorize", lambda c: c["api"].post(f"/api/graphs/{graph.pk}/memorize/", memorize, format="json")),
        ("api recall", lambda c: c["api"].post(f"/api/graphs/{graph.pk}/recall/")),
        (
            "page search",
            lambda c: c["dashboard"].post(
                reverse("memory:search_start"),
                {"questions": "Where is the plan?", "output": "answer", "fallback": "none"},
            ),
        ),
        ("page tick", lambda c: c["dashboard"].post(reverse("agents:brain_tick", args=[agent.pk]), **HTMX)),
        (
            "page ticking",
            lambda c: c["dashboard"].post(
                reverse("agents:brain_ticking_start", args=[agent.pk]), {"interval_s": "30"}, **HTMX
            ),
        ),
        (
            "page memorize",
            lambda c: c["dashboard"].post(
                reverse("agents:graph_memorize", args=[graph.pk]), {"role_0": "assistant", "content_0": "ls"}, **HTMX
            ),
        ),
        ("page recall", lambda c: c["dashboard"].post(reverse("agents:graph_recall", args=[graph.pk]), **HTMX)),
    ]


def reads(world, talker) -> list[tuple[str, Callable[[dict], object]]]:
    agent, graph = world.agent, world.graph
    api = [
        "/api/nodes/roots/",
        f"/api/nodes/{world.document.pk}/",
        f"/api/nodes/{world.document.pk}/content/",
        f"/api/searches/{world.ended_search.pk}/",
        f"/api/agents/{agent.pk}/",
        f"/api/agents/{agent.pk}/brain/",
        f"/api/agents/{talker.pk}/context/?strategy=summarize",  # its cut wants a summary queued
        f"/api/graphs/{graph.pk}/",
        f"/api/graphs/{graph.pk}/ops/",
    ]
    pages = [
        reverse("memory:browser"),
        reverse("memory:search_list"),
        reverse("memory:search_detail", args=[world.ended_search.pk]),
        reverse("agents:agent_detail", args=[talker.pk]),
        reverse("agents:brain_detail", args=[agent.pk]),
        reverse("agents:graph_detail", args=[graph.pk]),
        reverse("llm:ledger"),
    ]
    return [(path, lambda c, path=path: c["api"].get(path)) for path in api] + [
        (path, lambda c, path=path: c["dashboard"].get(path)) for path in pages
    ]


def test_with_redis_down_reads_work_and_starting_work_is_a_503_that_changes_nothing(broker, world, clients):
    talker = AgentFactory(model="gpt-4", turn_input_limit=1_000)
    for _ in range(8):
        say(talker, 100)
    assert clients["api"].get("/healthz").status_code == 200
    response = clients["api"].post("/api/searches/", {"questions": ["Where is the plan?"]}, format="json")
    assert response.status_code == 202  # the broker answers through the proxy
    before = database_dump()

    broker.proxy.stop()

    for name, request in starts(world):
        response, seconds = timed(lambda request=request: request(clients))
        assert response.status_code == 503, name
        assert QUEUE_UNAVAILABLE in response.content.decode(), name
        assert seconds < QUICK_S, (name, seconds)
        if name.startswith("api"):
            assert response["Retry-After"] == "5" and response.json() == {"detail": QUEUE_UNAVAILABLE}
    assert database_dump() == before  # no row queued that nobody would run, nothing else either

    for name, request in reads(world, talker):
        response, seconds = timed(lambda request=request: request(clients))
        assert response.status_code == 200, name
        assert seconds < QUICK_S, (name, seconds)
    assert database_dump() == before  # the assembly's summary was not queued either

    health = clients["api"].get("/healthz")
    assert health.status_code == 503 and health.json() == {"status": "degraded", "database": True, "broker": False}

    broker.proxy.start()
    response = clients["api"].post(f"/api/agents/{world.agent.pk}/tick/")
    assert response.status_code == 202  # the same process starts work again, no restart
    assert clients["api"].get("/healthz").status_code == 200


def test_a_broker_that_does_not_answer_refuses_work_and_changes_nothing_in_any_setup(world, clients, monkeypatch):
    """The same refusals, whatever the broker (the embedded filesystem one cannot go away)."""

    def refused() -> None:
        raise ConnectionRefusedError(111, "Connection refused")

    monkeypatch.setattr("memsite.queue._broker_check", refused)
    talker = AgentFactory(model="gpt-4", turn_input_limit=1_000)
    for _ in range(8):
        say(talker, 100)
    before = database_dump()
    for name, request in starts(world):
        response = request(clients)
        assert response.status_code == 503 and QUEUE_UNAVAILABLE in response.content.decode(), name
    context = clients["api"].get(f"/api/agents/{talker.pk}/context/?strategy=summarize")
    assert context.status_code == 200 and context.json()["report"]["summary_wanted"]
    assert database_dump() == before


def test_work_is_published_once_its_transaction_commits(db, monkeypatch, django_capture_on_commit_callbacks):
    published = []
    monkeypatch.setattr("memory.tasks.search_run.delay", lambda **kwargs: published.append(kwargs))
    with django_capture_on_commit_callbacks() as callbacks:
        search = memory_services.search_start(by=system(), questions=["Which port?"])
    assert published == [] and len(callbacks) == 1
    callbacks[0]()
    assert published == [{"search_id": search.pk}]


def test_the_dashboards_503_is_swapped_in_by_htmx(client, user):
    """The layout tells htmx to swap a 503 in, as it does 4xx: the refusal's message shows."""
    client.force_login(user)
    html = client.get(reverse("memory:browser")).content.decode()
    config = html.split('name="htmx-config" content=\'', 1)[1].split("'", 1)[0]
    handling = json.loads(config)["responseHandling"]
    first = next(rule for rule in handling if rule["code"] in ("503", "5..", "..."))
    assert first == {"code": "503", "swap": True, "error": True}
    assert '<div id="outage"></div>' in html


def test_publishing_gives_up_within_seconds_when_the_broker_is_gone(broker):
    """A publish on a pooled connection to a broker that went away fails in seconds rather
    than hanging: the post-commit half of memsite.queue.enqueue."""
    with celery_app.producer_or_acquire() as producer:  # open the pooled connection
        producer.connection.ensure_connection(max_retries=0)
    broker.proxy.stop()
    started = time.monotonic()
    with pytest.raises(Exception):  # noqa: B017 (kombu's or redis-py's connection error)
        celery_app.send_task("memsite.outages.never_run", queue=broker.queue)
    assert time.monotonic() - started < 5


# -- a real worker through the proxy -----------------------------------------------------------


def _database_url(*, port: int | None = None) -> str:
    """The test database as a subprocess reaches it: directly, or on 127.0.0.1:`port`."""
    params = connection.settings_dict
    user = quote(params["USER"] or "", safe="")
    password = f":{quote(params['PASSWORD'], safe='')}" if params["PASSWORD"] else ""
    where = f"127.0.0.1:{port}" if port else f"{params['HOST'] or '127.0.0.1'}:{params['PORT'] or 5432}"
    return f"postgres://{user}{password}@{where}/{params['NAME']}"


@contextmanager
def celery_worker(*, broker_url: str, queue: str, log: Path) -> Iterator[subprocess.Popen]:
    """`celery worker` as the Procfile runs it (threads pool), on the test database."""
    env = {
        **os.environ,
        "DATABASE_URL": _database_url(),
        "REDIS_URL": broker_url,
        "MEMSITE_LLM_PROVIDER": "offline",
        "MEMSITE_VAR_DIR": str(log.parent),
    }
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        env.pop(name, None)
    command = [
        str(Path(sys.executable).parent / "celery"), "-A", "memsite", "worker", "--pool", "threads",
        "--concurrency", "2", "--loglevel", "INFO", "-Q", queue, "-n", f"{queue}@%h",
        "--without-gossip", "--without-mingle",
    ]  # fmt: skip
    with log.open("wb") as output:
        process = subprocess.Popen(command, cwd=REPO, env=env, stdout=output, stderr=subprocess.STDOUT)
    try:
        yield process
    finally:
        _stop(process)


def search_status(search_id: int) -> str:
    return Search.objects.values_list("status", flat=True).get(pk=search_id)


@pytest.fixture
def worker_database(transactional_db):
    if connection.vendor != "postgresql":
        pytest.skip(
            "The worker is a process of its own: it cannot see the in-memory SQLite test database; "
            "run with a PostgreSQL DATABASE_URL."
        )
    internal_folders()


def test_a_worker_runs_the_work_queued_before_redis_went_away(worker_database, broker, tmp_path):
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {token_for(UserFactory())}")
    response = api.post("/api/searches/", {"questions": ["Where is the plan?"]}, format="json")
    assert response.status_code == 202
    queued = response.json()["id"]

    broker.proxy.stop()
    count = Search.objects.count()
    assert api.post("/api/searches/", {"questions": ["Who deploys?"]}, format="json").status_code == 503
    assert Search.objects.count() == count

    log = tmp_path / "worker.log"
    with celery_worker(broker_url=broker.url, queue=broker.queue, log=log) as worker:
        time.sleep(2)  # the worker starts with Redis gone and keeps trying
        assert worker.poll() is None, log.read_text()
        assert search_status(queued) == Search.Status.QUEUED

        broker.proxy.start()
        wait_for(
            lambda: search_status(queued) == Search.Status.DONE,
            timeout=45,
            what=f"the queued search to run\n{log.read_text()}",
        )

        # Redis goes away under the connected worker, for a moment, and comes back.
        broker.proxy.stop()
        time.sleep(2)
        broker.proxy.start()

        # A search that was running when Redis went away, and whose worker went with it: the
        # sweep queues it again.
        long_ago = timezone.now() - timedelta(hours=1)
        stale = SearchFactory(
            questions=["Which port?"], status=Search.Status.RUNNING, started_at=long_ago, heartbeat_at=long_ago
        )
        assert memory_services.searches_sweep_stale() == {"requeued": 1, "failed": 0}
        wait_for(
            lambda: search_status(stale.pk) == Search.Status.DONE,
            timeout=45,
            what=f"the swept search\n{log.read_text()}",
        )

        fresh = api.post("/api/searches/", {"questions": ["Who deploys?"]}, format="json")
        assert fresh.status_code == 202
        wait_for(
            lambda: search_status(fresh.json()["id"]) == Search.Status.DONE,
            timeout=45,
            what=f"a new search\n{log.read_text()}",
        )
        assert worker.poll() is None  # one worker process throughout


# -- PostgreSQL --------------------------------------------------------------------------------


def test_a_lost_database_is_a_503_with_a_message_not_a_traceback(settings, user):
    """Any vendor: every query fails as it does while PostgreSQL restarts."""
    session = Client()
    session.force_login(user)
    token = token_for(user)

    def lost(execute, sql, params, many, context):
        raise OperationalError("server closed the connection unexpectedly")

    for debug in (True, False):
        settings.DEBUG = debug
        with connection.execute_wrapper(lost):
            api = Client().get("/api/nodes/roots/", HTTP_AUTHORIZATION=f"Token {token}")
            page = session.get(reverse("memory:browser"))
            fragment = session.get(reverse("memory:search_list"), **HTMX)
        assert api.status_code == 503 and api.json() == {"detail": DATABASE_UNAVAILABLE}
        assert api["Retry-After"] == "5"
        assert page.status_code == 503 and DATABASE_UNAVAILABLE in page.content.decode()
        assert "Traceback" not in page.content.decode() and "OperationalError" not in page.content.decode()
        assert fragment.status_code == 503 and fragment["HX-Reswap"] == "none"
        assert 'id="outage"' in fragment.content.decode() and 'hx-swap-oob="true"' in fragment.content.decode()
    assert session.get(reverse("memory:browser")).status_code == 200  # the same connection, fine again


def test_a_lost_database_met_outside_a_view_is_a_503_too(rf: RequestFactory):
    """handler500 (DEBUG off): what middleware raises, such as a session saved on the way out."""
    try:
        raise OperationalError("could not connect to server: Connection refused")
    except OperationalError:
        response = views.server_error(rf.get("/memory/"))
    assert response.status_code == 503 and DATABASE_UNAVAILABLE in response.content.decode()
    try:
        raise ValueError("a bug")
    except ValueError:
        assert views.server_error(rf.get("/memory/")).status_code == 500


@pytest.fixture
def postgres_proxy(transactional_db) -> Iterator[TcpProxy]:
    if connection.vendor != "postgresql":
        pytest.skip(
            "A PostgreSQL restart is simulated in front of a real PostgreSQL: run with a postgres DATABASE_URL."
        )
    params = connection.settings_dict
    with TcpProxy(params["HOST"] or "127.0.0.1", int(params["PORT"] or 5432)) as proxy:
        yield proxy


@contextmanager
def gunicorn(env: dict[str, str], log: Path) -> Iterator[tuple[subprocess.Popen, int]]:
    """memsite under gunicorn as the Procfile runs it (gthread), one worker of two threads, each
    holding a persistent database connection."""
    port = free_port()
    command = [
        str(Path(sys.executable).parent / "gunicorn"), "memsite.wsgi:application", f"--bind=127.0.0.1:{port}",
        "--worker-class=gthread", "--workers=1", "--threads=2", "--log-level=warning",
    ]  # fmt: skip
    with log.open("wb") as output:
        process = subprocess.Popen(
            command, cwd=REPO, env={**os.environ, **env}, stdout=output, stderr=subprocess.STDOUT
        )
    try:
        wait_for(lambda: _answers(port) or process.poll() is not None, timeout=60, what="gunicorn")
        assert process.poll() is None, log.read_text()
        yield process, port
    finally:
        _stop(process)


def _answers(port: int) -> bool:
    try:
        get(port, "/healthz")
        return True
    except OSError:
        return False


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: str
    seconds: float


def get(port: int, path: str, headers: dict[str, str] | None = None) -> Answer:
    started = time.monotonic()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=15)
    try:
        conn.request("GET", path, headers=headers or {})
        response = conn.getresponse()
        body = response.read().decode()
        return Answer(
            response.status, {k.lower(): v for k, v in response.getheaders()}, body, time.monotonic() - started
        )
    finally:
        conn.close()


def gunicorn_workers(master: subprocess.Popen) -> set[int]:
    children = Path(f"/proc/{master.pid}/task/{master.pid}/children")
    return set(map(int, children.read_text().split())) if children.exists() else set()


def test_a_postgres_restart_fails_requests_briefly_then_the_same_server_recovers(postgres_proxy, tmp_path):
    assert settings.DATABASES["default"]["CONN_HEALTH_CHECKS"] is True
    assert settings.DATABASES["default"]["CONN_MAX_AGE"] > 0  # persistent connections, checked before reuse
    internal_folders()
    user = UserFactory()
    token = token_for(user)
    session = Client()
    session.force_login(user)
    cookie = f"{settings.SESSION_COOKIE_NAME}={session.cookies[settings.SESSION_COOKIE_NAME].value}"
    env = {"DATABASE_URL": _database_url(port=postgres_proxy.port), "MEMSITE_VAR_DIR": str(tmp_path)}

    api = {"Authorization": f"Token {token}"}
    page = {"Cookie": cookie}
    fragment = {"Cookie": cookie, "HX-Request": "true"}
    with gunicorn(env, tmp_path / "gunicorn.log") as (server, port):
        for _ in range(6):  # both threads open their persistent connection
            assert get(port, "/api/nodes/roots/", api).status == 200
            assert get(port, "/memory/", page).status == 200
        workers = gunicorn_workers(server)
        assert postgres_proxy.accepted >= 1

        postgres_proxy.stop()  # PostgreSQL goes down: every connection cut, new ones refused
        down_at = time.monotonic()
        for _ in range(3):
            answer = get(port, "/api/nodes/roots/", api)
            assert answer.status == 503 and json.loads(answer.body) == {"detail": DATABASE_UNAVAILABLE}
            assert answer.headers["retry-after"] == "5" and answer.seconds < 5
            answer = get(port, "/memory/", page)
            assert answer.status == 503 and DATABASE_UNAVAILABLE in answer.body and "Traceback" not in answer.body
            answer = get(port, "/searches/", fragment)
            assert answer.status == 503 and answer.headers["hx-reswap"] == "none" and 'id="outage"' in answer.body
        health = get(port, "/healthz")
        assert health.status == 503 and json.loads(health.body)["database"] is False
        time.sleep(max(0.0, 2 - (time.monotonic() - down_at)))

        accepted = postgres_proxy.accepted
        postgres_proxy.start()  # and back
        for _ in range(6):
            assert get(port, "/api/nodes/roots/", api).status == 200
            assert get(port, "/memory/", page).status == 200
        assert json.loads(get(port, "/healthz").body)["database"] is True
        assert postgres_proxy.accepted > accepted  # broken connections were dropped for new ones
        assert server.poll() is None and gunicorn_workers(server) == workers  # no restart of any process
