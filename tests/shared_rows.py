"""Rows a whole module's tests share, written once: in an outer transaction rolled back after
the module's last test. Each test runs in a savepoint inside it (pytest-django's `db`, as
Django's setUpTestData), so what one test writes the next never sees, and gets its own copy of
the Python objects. Only for modules whose tests all run in transactions: a transactional test
would find the outer one open."""

import copy
import sys
from collections.abc import Callable, Iterator
from typing import TypeVar

from django.db import transaction

T = TypeVar("T")


def built_once(blocker, build: Callable[[], T]) -> Iterator[T]:
    """A module fixture's body: `yield from built_once(django_db_blocker, build)`."""
    outer = transaction.atomic()
    with blocker.unblock():
        outer.__enter__()
        try:
            made = build()
        except BaseException:
            outer.__exit__(*sys.exc_info())
            raise
    try:
        yield made
    finally:
        with blocker.unblock():
            transaction.set_rollback(True)
            outer.__exit__(None, None, None)


def own_copy(made: T) -> T:
    """A test's own copy of what the module's tests share, so that changing an attribute of one
    of its rows in a test leaves the next test's as the database has it."""
    return copy.deepcopy(made)
