"""Production defaults: DEBUG is off unless asked for; with it off memsite starts only with a
strong secret key, sends its pages over HTTPS with HSTS, Secure cookies and a
Content-Security-Policy, `check --deploy` finds nothing, and the demo data is refused."""

import json
import logging
import re
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError

from agents.context.models import Agent
from memory.models import Node
from memsite.settings.security import secret_key_refusal

ROOT = Path(__file__).resolve().parent.parent.parent

# Run in a fresh interpreter, as a deployment starts: the settings read the environment once.
PROBE = """
import json, django
django.setup()
from django.conf import settings
from django.test import Client
names = ["DEBUG", "SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE", "SECURE_SSL_REDIRECT", "SECURE_HSTS_SECONDS",
         "SECURE_HSTS_INCLUDE_SUBDOMAINS", "SECURE_HSTS_PRELOAD", "SECURE_PROXY_SSL_HEADER", "SILENCED_SYSTEM_CHECKS"]
client = Client()
answers = {
    "plain": client.get("/memory/"),
    "healthz": client.get("/healthz"),
    "proxied": client.get("/memory/", headers={"X-Forwarded-Proto": "https"}),
}
print(json.dumps({
    "settings": {name: getattr(settings, name) for name in names},
    "answers": {
        name: [answer.status_code, answer.headers.get("Location"), dict(answer.headers)]
        for name, answer in answers.items()
    },
}))
"""


def run_memsite(tmp_path: Path, code: str, **env: str) -> subprocess.CompletedProcess:
    environment = {
        "PATH": "/usr/bin:/bin",
        "DJANGO_SETTINGS_MODULE": "memsite.settings",
        "MEMSITE_VAR_DIR": str(tmp_path),
        **env,
    }
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=environment, capture_output=True, text=True, timeout=120
    )


def strong_key() -> str:
    return secrets.token_urlsafe(50)


def probe(tmp_path: Path, **env: str) -> dict:
    result = run_memsite(tmp_path, PROBE, **env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_debug_is_off_unless_asked_for_and_production_is_https_only(tmp_path):
    seen = probe(tmp_path, DJANGO_SECRET_KEY=strong_key())  # no DJANGO_DEBUG at all
    assert seen["settings"] == {
        "DEBUG": False,
        "SESSION_COOKIE_SECURE": True,
        "CSRF_COOKIE_SECURE": True,
        "SECURE_SSL_REDIRECT": True,
        "SECURE_HSTS_SECONDS": 31_536_000,
        "SECURE_HSTS_INCLUDE_SUBDOMAINS": True,
        "SECURE_HSTS_PRELOAD": False,
        "SECURE_PROXY_SSL_HEADER": ["HTTP_X_FORWARDED_PROTO", "https"],
        "SILENCED_SYSTEM_CHECKS": ["security.W021"],
    }
    plain, healthz, proxied = (seen["answers"][name] for name in ("plain", "healthz", "proxied"))
    assert plain[:2] == [301, "https://testserver/memory/"]
    assert healthz[0] != 301  # load balancers probe it over plain HTTP
    # Behind the TLS-terminating proxy: served (here, sent to log in), with HSTS and the CSP.
    assert proxied[:2] == [302, "/login/?next=/memory/"]
    headers = proxied[2]
    assert headers["Strict-Transport-Security"] == "max-age=31536000; includeSubDomains"
    assert headers["Content-Security-Policy"].startswith("default-src 'self'; script-src 'self';")
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Referrer-Policy"] == "same-origin" and headers["X-Frame-Options"] == "DENY"


def test_the_https_settings_can_be_changed_for_the_deployment(tmp_path):
    seen = probe(
        tmp_path,
        DJANGO_SECRET_KEY=strong_key(),
        DJANGO_SECURE_SSL_REDIRECT="false",
        DJANGO_SECURE_HSTS_SECONDS="600",
        DJANGO_SECURE_HSTS_PRELOAD="true",
        DJANGO_SECURE_PROXY_SSL_HEADER="false",
    )["settings"]
    assert seen["SECURE_SSL_REDIRECT"] is False and seen["SECURE_HSTS_SECONDS"] == 600
    assert seen["SECURE_HSTS_PRELOAD"] is True and seen["SILENCED_SYSTEM_CHECKS"] == []
    assert seen["SECURE_PROXY_SSL_HEADER"] is None
    assert seen["SESSION_COOKIE_SECURE"] is True  # not a knob: without HTTPS, run with DEBUG


def test_make_run_s_debug_keeps_the_developer_s_http_defaults(tmp_path):
    seen = probe(tmp_path, DJANGO_DEBUG="true")["settings"]
    assert seen["DEBUG"] is True and seen["SECURE_SSL_REDIRECT"] is False and seen["SECURE_HSTS_SECONDS"] == 0
    assert seen["SESSION_COOKIE_SECURE"] is False and seen["SECURE_PROXY_SSL_HEADER"] is None


def test_check_deploy_finds_nothing_with_debug_off_and_a_strong_key(tmp_path):
    code = (
        "import sys; from django.core.management import execute_from_command_line; execute_from_command_line(sys.argv)"
    )
    argv = '["manage.py", "check", "--deploy", "--fail-level", "DEBUG"]'
    result = run_memsite(tmp_path, code.replace("sys.argv", argv), DJANGO_DEBUG="false", DJANGO_SECRET_KEY=strong_key())
    assert result.returncode == 0, result.stderr
    assert "System check identified no issues (1 silenced)." in result.stdout


@pytest.mark.parametrize(
    ("key", "reason"),
    [
        (None, "DJANGO_SECRET_KEY is not set."),
        ("change-me", "DJANGO_SECRET_KEY is a published placeholder."),  # .env.example's, once
        ("memsite-embedded-insecure-key", "DJANGO_SECRET_KEY is a published placeholder."),
    ],
)
def test_production_refuses_to_start_without_a_strong_key(tmp_path, key, reason):
    env = {"DJANGO_DEBUG": "false"} | ({"DJANGO_SECRET_KEY": key} if key else {})
    result = run_memsite(tmp_path, "import django; django.setup()", **env)
    assert result.returncode != 0
    assert f"django.core.exceptions.ImproperlyConfigured: {reason}" in result.stderr
    assert "token_urlsafe(50)" in result.stderr  # and says how to make one


@pytest.mark.parametrize(
    ("key", "refusal"),
    [
        ("change-me", "is a published placeholder"),
        ("Secret", "is a published placeholder"),
        ("django-insecure-" + "k" * 60, "is a published placeholder"),
        ("please-change-me-" + secrets.token_hex(30), "looks like a placeholder"),
        (secrets.token_hex(12), "has 24 characters; at least 50 are needed"),
        ("abcd" * 20, "has fewer than 5 different characters"),
    ],
)
def test_weak_keys_are_named_with_the_reason(key, refusal):
    assert secret_key_refusal(key) == refusal


def test_a_random_key_is_accepted():
    assert secret_key_refusal(secrets.token_urlsafe(50)) is None


def test_pages_carry_the_content_security_policy_with_debug_off(client, settings):
    response = client.get("/login/")
    assert response.status_code == 200
    assert response["Content-Security-Policy"] == settings.MEMSITE_CONTENT_SECURITY_POLICY
    assert "script-src 'self'" in settings.MEMSITE_CONTENT_SECURITY_POLICY  # no inline script, no eval
    settings.DEBUG = True  # Django's debug pages need inline scripts
    assert "Content-Security-Policy" not in client.get("/login/")


INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.IGNORECASE)


@pytest.mark.parametrize("path", ["/login/", "/memory/", "/agents/", "/searches/", "/llm/", "/api/docs/"])
def test_pages_run_no_inline_script_the_policy_would_block(client, user, internal, path):
    client.force_login(user)
    response = client.get(path)
    assert response.status_code == 200
    assert INLINE_SCRIPT.findall(response.content.decode()) == []


@pytest.mark.django_db
@pytest.mark.parametrize("command", ["seed_demo", "seed_demo_agents"])
def test_demo_data_is_refused_with_debug_off(command):
    nodes = Node.objects.count()
    with pytest.raises(CommandError, match=f"{command} adds demo data .* refused with DEBUG off"):
        call_command(command)
    assert get_user_model().objects.count() == 0  # no demo login
    assert Node.objects.count() == nodes and not Agent.objects.exists()


def test_the_api_docs_start_swagger_ui_from_a_script_of_their_own(client):
    page = client.get("/api/docs/").content.decode()
    assert '<script src="/api/docs/?script="></script>' in page
    script = client.get("/api/docs/?script=")
    assert script.status_code == 200 and script["Content-Type"].startswith("application/javascript")
    assert "SwaggerUIBundle(" in script.content.decode()


def handlers_below_the_root(name: str) -> list[logging.Handler]:
    """The handlers a record of the logger `name` passes through before the root's (whose
    console handler prints everything; pytest adds its own there)."""
    logger: logging.Logger | None = logging.getLogger(name)
    reached: list[logging.Handler] = []
    while logger is not None and logger is not logging.root:
        reached += logger.handlers
        logger = logger.parent if logger.propagate else None
    return reached


def test_djangos_records_are_printed_once_by_the_roots_handler():
    """Django's console handler beside the root's printed "Watching for file changes" twice."""
    assert handlers_below_the_root("django.utils.autoreload") == []
    assert logging.getLogger("django").propagate
