"""`make run PORT=…` serves the web process at that port, read from the Makefile and Procfile.dev
as make and honcho read them (nothing is started): make exports PORT to honcho, which gives the
first process of Procfile.dev that port; the default stays 8000. The MCP server follows it, one
port above. The upkeep worker and beat log
warnings only, so their every-ten-seconds chatter stays out of the terminal, and Ctrl-C, the way
it is stopped, is no error of make's."""

import os
import re
import subprocess

import pytest
from honcho.environ import expand_processes, parse_procfile

from tests.process_files import ROOT, procfile_commands

MAKEFILE = (ROOT / "Makefile").read_text()
DEFAULT = re.compile(r"\$\{(\w+):-([^}]*)\}")


def make_default(variable: str) -> str:
    match = re.search(rf"^{variable} \?= (\S+)$", MAKEFILE, re.MULTILINE)
    assert match, f"no `{variable} ?=` default in the Makefile"
    return match.group(1)


def shell_expanded(command: str, environment: dict[str, str]) -> str:
    """`${NAME:-default}` as sh expands it (the only form the Procfile uses)."""
    return DEFAULT.sub(lambda match: environment.get(match.group(1)) or match.group(2), command)


def web_command(port: int) -> str:
    """The web process's command as honcho starts it when make hands it PORT=`port`."""
    processes = parse_procfile((ROOT / "Procfile.dev").read_text()).processes
    web = next(params for params in expand_processes(processes, port=port) if params.name == "web.1")
    return shell_expanded(web.cmd, web.env)


def test_the_default_port_stays_8000():
    assert make_default("PORT") == "8000"
    assert "127.0.0.1:${PORT:-8000}" in procfile_commands("Procfile.dev")["web"][-1]


def test_make_run_hands_its_port_to_honcho_and_the_demo_urls():
    assert re.search(r"^run: export PORT := \$\(PORT\)$", MAKEFILE, re.MULTILINE)
    assert "seed_demo --url http://127.0.0.1:$(PORT)/" in MAKEFILE
    assert "seed_demo_agents --url http://127.0.0.1:$(PORT)/" in MAKEFILE  # it prints where to start scout
    assert re.search(r"honcho start -f Procfile\.dev ", MAKEFILE)


def honcho_line() -> str:
    """The recipe line of `make run` that starts honcho, as make would run it."""
    shown = subprocess.run(
        ["make", "-n", "-o", "install", "run"], cwd=ROOT, capture_output=True, text=True, check=True, timeout=30
    ).stdout
    return next(line for line in shown.splitlines() if "honcho start" in line)


@pytest.mark.parametrize(("honcho_exit", "make_fails"), [(0, False), (130, False), (1, True), (143, True)])
def test_ctrl_c_ends_make_run_quietly_and_a_crash_does_not(tmp_path, honcho_exit, make_fails):
    stub = tmp_path / "honcho"
    stub.write_text(f"#!/bin/sh\nexit {honcho_exit}\n")
    stub.chmod(0o755)
    line = honcho_line().replace(".venv/bin/honcho", str(stub))
    assert str(stub) in line
    done = subprocess.run(["sh", "-c", line], cwd=ROOT, capture_output=True, timeout=30)
    assert (done.returncode != 0) == make_fails


def test_honcho_gives_the_port_to_the_web_process():
    assert next(iter(parse_procfile((ROOT / "Procfile.dev").read_text()).processes)) == "web"
    assert web_command(8123).endswith("runserver 127.0.0.1:8123")
    assert web_command(int(make_default("PORT"))).endswith("runserver 127.0.0.1:8000")


def mcp_port(*arguments: str, **environment: str) -> str:
    """MEMSITE_MCP_PORT as make computes it for `make run ARGUMENTS` (nothing is run)."""
    show = "show-mcp-port: ; @echo $(MEMSITE_MCP_PORT)"
    env = {name: value for name, value in os.environ.items() if name not in ("PORT", "MEMSITE_MCP_PORT")}
    done = subprocess.run(
        ["make", "-s", "--no-print-directory", "--eval", show, "show-mcp-port", *arguments],
        cwd=ROOT,
        env={**env, **environment},
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    return done.stdout.strip()


def test_the_mcp_server_follows_the_web_servers_port_unless_told_otherwise():
    assert mcp_port() == "8001"
    assert mcp_port("PORT=8100") == "8101"
    assert mcp_port("PORT=8100", MEMSITE_MCP_PORT="9000") == "9000"
    assert re.search(r"^run: export MEMSITE_MCP_PORT := \$\(MEMSITE_MCP_PORT\)$", MAKEFILE, re.MULTILINE)
    assert "--port" not in procfile_commands("Procfile.dev")["mcp"]  # it reads MEMSITE_MCP_PORT


def test_the_upkeep_worker_and_beat_log_warnings_only():
    commands = procfile_commands("Procfile.dev")
    for process in ("upkeep", "beat"):
        level = commands[process][commands[process].index("--loglevel") + 1]
        assert level == "WARNING", process


def test_the_filesystem_broker_names_a_host(settings):
    if settings.CELERY_BROKER_URL.startswith("filesystem"):
        assert settings.CELERY_BROKER_URL == "filesystem://localhost/"  # else kombu warns at each connection
