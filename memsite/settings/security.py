"""Production's refusal of weak secret keys, and the Content-Security-Policy pages are served with."""

from django.core.checks.security.base import (
    SECRET_KEY_INSECURE_PREFIX,
    SECRET_KEY_MIN_LENGTH,
    SECRET_KEY_MIN_UNIQUE_CHARACTERS,
)
from django.core.exceptions import ImproperlyConfigured

# The development key embedded in memsite's settings, and placeholders people copy from
# examples (.env.example once shipped `change-me`): published, so anyone could sign sessions.
PUBLISHED_SECRET_KEYS = frozenset(
    {"memsite-embedded-insecure-key", "change-me", "changeme", "secret", "secret-key", "your-secret-key"}
)
PLACEHOLDER_MARKERS = ("change-me", "changeme", "replace-me", "insecure")
GENERATE_HINT = "python -c 'import secrets; print(secrets.token_urlsafe(50))'"


def secret_key_refusal(key: str) -> str | None:
    """Why `key` may not sign a production deployment's sessions, or None when it may.
    Refuses what Django's `check --deploy` warns about (security.W009), and placeholders."""
    lowered = key.strip().lower()
    if lowered in PUBLISHED_SECRET_KEYS or key.startswith(SECRET_KEY_INSECURE_PREFIX):
        return "is a published placeholder"
    if any(marker in lowered for marker in PLACEHOLDER_MARKERS):
        return "looks like a placeholder"
    if len(key) < SECRET_KEY_MIN_LENGTH:
        return f"has {len(key)} characters; at least {SECRET_KEY_MIN_LENGTH} are needed"
    if len(set(key)) < SECRET_KEY_MIN_UNIQUE_CHARACTERS:
        return f"has fewer than {SECRET_KEY_MIN_UNIQUE_CHARACTERS} different characters"
    return None


def production_secret_key(key: str | None) -> str:
    """`key`, or ImproperlyConfigured saying why it is refused and how to make a good one."""
    refusal = "is not set" if key is None else secret_key_refusal(key)
    if key is None or refusal is not None:
        raise ImproperlyConfigured(
            f"DJANGO_SECRET_KEY {refusal}. With DJANGO_DEBUG off (the default) memsite needs a random "
            f"key of its own; make one with: {GENERATE_HINT} "
            "(on a developer's machine, set DJANGO_DEBUG=true instead)."
        )
    return key


def content_security_policy(directives: dict[str, list[str]]) -> str:
    """The header's value: `name source source; name source`."""
    return "; ".join(" ".join([name, *sources]) for name, sources in directives.items())
