"""The deployment files: beat's jobs have a queue and a worker of their own in every way memsite
is started, and so does the MCP server; gunicorn reads one config, and compose publishes nginx
in front of both."""

import runpy
import shlex

import pytest
from django.conf import settings

from memsite.celery import app
from tests.process_files import ROOT, compose_services, procfile_commands

GUNICORN_CONFIG = "deploy/gunicorn.conf.py"
BEAT_TASKS = sorted({entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()})
# What beat's jobs queue in turn: searches, ticks, graphs' operations, summaries, embeddings
# and descriptions.
WORK_TASKS = [
    "memory.tasks.search_run",
    "agents.tasks.tick_run",
    "agents.tasks.graph_work",
    "agents.tasks.summary_write",
    "memory.tasks.index_embed",
    "memory.tasks.descriptions_write",
]


def compose_commands() -> dict[str, list[str]]:
    services = compose_services()
    return {name: shlex.split(service["command"]) for name, service in services.items() if "command" in service}


def served_queues(command: list[str]) -> set[str]:
    """The queues a `celery worker` command consumes (none for any other command)."""
    if command[:1] != ["celery"] or "worker" not in command:
        return set()
    for flag in ("--queues", "-Q"):
        if flag in command:
            return set(command[command.index(flag) + 1].split(","))
    return {settings.CELERY_TASK_DEFAULT_QUEUE}


def queue_of(task: str) -> str:
    return app.amqp.router.route({}, task)["queue"].name


def test_beat_jobs_are_routed_to_the_upkeep_queue_and_what_they_queue_to_the_work_queue():
    assert BEAT_TASKS == [
        "agents.tasks.graphs_sweep_stale",
        "agents.tasks.ticks_start_due",
        "agents.tasks.ticks_sweep_stale",
        "memory.tasks.descriptions_sweep",
        "memory.tasks.index_embed_sweep",
        "memory.tasks.searches_sweep_stale",
    ]
    assert settings.CELERY_TASK_ROUTES == {task: {"queue": "upkeep"} for task in BEAT_TASKS}
    assert {task: queue_of(task) for task in BEAT_TASKS} == dict.fromkeys(BEAT_TASKS, "upkeep")
    assert {task: queue_of(task) for task in WORK_TASKS} == dict.fromkeys(WORK_TASKS, "celery")


@pytest.mark.parametrize("source", ["Procfile", "Procfile.dev", "docker-compose.yml"])
def test_each_way_of_starting_memsite_serves_the_work_and_upkeep_queues_apart(source):
    commands = compose_commands() if source.endswith(".yml") else procfile_commands(source)
    queues = {process: served_queues(command) for process, command in commands.items()}
    assert queues["worker"] == {"celery"}
    assert queues["upkeep"] == {"upkeep"}  # beat's jobs never wait behind a backlog of work
    assert set().union(*queues.values()) == {"celery", "upkeep"}
    assert commands["beat"][:4] == ["celery", "-A", "memsite", "beat"]
    # Two workers on one machine need names of their own.
    assert commands["upkeep"][commands["upkeep"].index("--hostname") + 1] == "upkeep@%h"


def test_the_mcp_server_is_a_process_of_its_own_in_every_way_memsite_is_started():
    served = ["python", "manage.py", "mcp_serve", "--host", "0.0.0.0"]
    assert procfile_commands("Procfile")["mcp"] == served
    assert compose_commands()["mcp"] == served
    # `make run` starts it too, on the loopback only, at MEMSITE_MCP_PORT.
    assert procfile_commands("Procfile.dev")["mcp"] == ["python", "manage.py", "mcp_serve", "--host", "127.0.0.1"]
    mcp = compose_services()["mcp"]
    assert mcp["expose"] == [str(settings.MEMSITE_MCP_PORT)]
    assert mcp["depends_on"] == {"migrate": {"condition": "service_completed_successfully"}}


def test_gunicorn_reads_one_config_in_the_procfile_compose_and_the_dockerfile():
    expected = ["gunicorn", "memsite.wsgi:application", "--config", GUNICORN_CONFIG]
    assert procfile_commands("Procfile")["web"] == expected
    assert compose_commands()["web"] == expected
    assert f"CMD {expected}".replace("'", '"') in (ROOT / "Dockerfile").read_text()


def test_the_gunicorn_config_runs_threads_on_the_platforms_port(monkeypatch):
    monkeypatch.setenv("PORT", "8123")
    monkeypatch.delenv("FORWARDED_ALLOW_IPS", raising=False)
    config = runpy.run_path(str(ROOT / GUNICORN_CONFIG))
    assert config["bind"] == ["0.0.0.0:8123"]
    assert config["worker_class"] == "gthread" and config["workers"] >= 2 and config["threads"] >= 2
    assert config["forwarded_allow_ips"] == "127.0.0.1,::1"  # only a local proxy, unless told otherwise
    assert config["timeout"] > 0 and config["limit_request_line"] > 0


def test_compose_publishes_nginx_in_front_of_gunicorn_not_gunicorn():
    services = compose_services()
    nginx = services["nginx"]
    assert nginx["image"].startswith("nginx:")
    assert nginx["ports"] == ["8000:8000"] and "ports" not in services["web"]
    assert nginx["environment"] == {
        "MEMSITE_UPSTREAM": "web:8000",
        "MEMSITE_MCP_UPSTREAM": "mcp:8001",
        "MEMSITE_PROXY_PORT": "8000",
    }
    assert nginx["depends_on"] == ["web", "mcp"] and "ports" not in services["mcp"]
    assert nginx["volumes"] == ["./deploy/nginx/default.conf.template:/etc/nginx/templates/default.conf.template:ro"]
    web = services["web"]["environment"]
    assert (
        web["DJANGO_DEBUG"] == "false" and web["FORWARDED_ALLOW_IPS"] == "*" and web["MEMSITE_TRUSTED_PROXIES"] == "1"
    )
