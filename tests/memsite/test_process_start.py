"""Server processes freeze what they loaded at start-up, so the collector's full passes skip it
(docs/benchmarks.md, context assembly, finding 1)."""

import secrets
import subprocess
import sys

import pytest

PROBES = {
    "web": "import gc, memsite.wsgi; print(gc.get_freeze_count())",
    "threads-pool worker": (
        "import gc, django; django.setup(); from celery.signals import worker_ready; "
        "import memsite.celery; worker_ready.send(sender=None); print(gc.get_freeze_count())"
    ),
    "mcp server": (
        "import gc, django; django.setup(); import uvicorn; uvicorn.run = lambda *args, **options: None; "
        "from django.core.management import call_command; call_command('mcp_serve'); print(gc.get_freeze_count())"
    ),
    "prefork worker": (
        "import gc, django; django.setup(); from celery.signals import worker_process_init; "
        "import memsite.celery; worker_process_init.send(sender=None); print(gc.get_freeze_count())"
    ),
}


@pytest.mark.parametrize("process", PROBES)
def test_a_started_process_freezes_its_loaded_objects(process):
    env = {
        "DJANGO_SETTINGS_MODULE": "memsite.settings",
        "PATH": "/usr/bin:/bin",
        # As deployed: DEBUG off (the default), with a strong key of the deployment's own.
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
    }
    result = subprocess.run(
        [sys.executable, "-c", PROBES[process]], capture_output=True, text=True, env=env, timeout=60, check=True
    )
    assert int(result.stdout.strip().splitlines()[-1]) > 10_000
