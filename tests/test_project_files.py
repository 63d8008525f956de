"""The deployment files agree with each other: docker-compose runs the Procfile's processes."""

import shlex
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def procfile(name: str) -> dict[str, list[str]]:
    entries = {}
    for line in (ROOT / name).read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            process, command = line.split(":", 1)
            entries[process.strip()] = shlex.split(command)
    return entries


def test_compose_services_run_the_procfile_commands():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    assert {"web", "worker", "beat", "redis", "postgres"} <= set(services)
    for process, command in procfile("Procfile").items():
        assert shlex.split(services[process]["command"]) == command, process


def test_compose_points_the_app_at_postgres_and_redis():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    for process in ("web", "worker", "beat"):
        environment = compose["services"][process]["environment"]
        assert environment["DATABASE_URL"].startswith("postgres://")
        assert environment["REDIS_URL"].startswith("redis://redis:")
        assert compose["services"][process]["build"] == "."


def test_web_is_gunicorn_in_production_and_the_dev_server_embedded():
    assert procfile("Procfile")["web"][0] == "gunicorn"
    assert procfile("Procfile.dev")["web"][:2] == ["python", "manage.py"]


def test_ci_runs_the_readme_test_command():
    assert "make test" in (ROOT / ".ci" / "run").read_text()
    readme = (ROOT / "README.md").read_text()
    assert "make run" in readme and "make test" in readme
