"""Reading the files that say how memsite's processes start: the Procfiles and docker-compose."""

import shlex
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def procfile_commands(name: str) -> dict[str, list[str]]:
    entries = {}
    for line in (ROOT / name).read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            process, command = line.split(":", 1)
            entries[process.strip()] = shlex.split(command)
    return entries


def compose_services() -> dict[str, dict]:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
