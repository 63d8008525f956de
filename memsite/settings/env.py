"""Typed reads of the environment: the one place configuration comes from."""

import os
from typing import overload

from django.core.exceptions import ImproperlyConfigured


@overload
def env_str(name: str, default: str) -> str: ...
@overload
def env_str(name: str, default: None = None) -> str | None: ...
def env_str(name: str, default: str | None = None) -> str | None:
    value = os.environ.get(name)
    return default if value in (None, "") else value


def env_bool(name: str, default: bool) -> bool:
    value = env_str(name)
    if value is None:
        return default
    lowered = value.lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (true/false), got {value!r}.")


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    value = env_str(name)
    if value is None:
        return default
    try:
        number = int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, got {value!r}.") from None
    if minimum is not None and number < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}, got {number}.")
    return number


def env_list(name: str, default: list[str]) -> list[str]:
    value = env_str(name)
    if value is None:
        return default
    return [item.strip() for item in value.split(",") if item.strip()]


def env_int_map(name: str) -> dict[str, int]:
    """`a=1,b=2` as {"a": 1, "b": 2}."""
    mapping = {}
    for item in env_list(name, []):
        key, _, value = item.partition("=")
        try:
            mapping[key.strip()] = int(value)
        except ValueError:
            raise ImproperlyConfigured(f"{name} must read like `name=10,other=20`, got {item!r}.") from None
    return mapping
