"""The deployment files agree with each other: docker-compose runs the Procfile's processes."""

import shlex

from tests.process_files import ROOT, compose_services, procfile_commands


def test_compose_services_run_the_procfile_commands():
    services = compose_services()
    assert {"web", "worker", "beat", "redis", "postgres"} <= set(services)
    for process, command in procfile_commands("Procfile").items():
        assert shlex.split(services[process]["command"]) == command, process


def test_compose_points_the_app_at_postgres_and_redis():
    services = compose_services()
    for process in ("web", "mcp", "worker", "beat"):
        environment = services[process]["environment"]
        assert environment["DATABASE_URL"].startswith("postgres://")
        assert environment["REDIS_URL"].startswith("redis://redis:")
        assert services[process]["build"] == "."


def test_web_is_gunicorn_in_production_and_the_dev_server_embedded():
    assert procfile_commands("Procfile")["web"][0] == "gunicorn"
    assert procfile_commands("Procfile.dev")["web"][:2] == ["python", "manage.py"]


def test_ci_runs_the_readme_test_command():
    assert "make test" in (ROOT / ".ci" / "run").read_text()
    readme = (ROOT / "README.md").read_text()
    assert "make run" in readme and "make test" in readme
