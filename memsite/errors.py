"""Errors a service raises when it refuses a write. Each carries the HTTP status it means. And
the bounds of every error body: `bounded` is applied to each one the API answers."""

from collections.abc import Mapping
from typing import Any


class ServiceError(Exception):
    status = 400
    retry_after_s: int | None = None  # sent as Retry-After, where a retry may succeed

    def __init__(self, message: str, *, data: dict | None = None):
        super().__init__(message)
        self.message = message
        self.data = data or {}  # fields the API answers next to the message

    def body(self) -> Any:
        """What the API answers (REST and MCP alike): the message and `data`, bounded."""
        return bounded({"detail": self.message, **self.data})


class InvalidInput(ServiceError):
    status = 400


class Forbidden(ServiceError):
    status = 403


class NotFound(ServiceError):
    status = 404


class Conflict(ServiceError):
    status = 409


class LengthRequired(ServiceError):
    status = 411


class TooLarge(ServiceError):
    status = 413


class Unprocessable(ServiceError):
    """Well-formed, but it cannot be done; `data` holds the numbers that say why."""

    status = 422


class ServiceUnavailable(ServiceError):
    """A backend the write needs (the task queue) does not answer; the write was rolled back."""

    status = 503
    retry_after_s = 5  # sent as Retry-After


# -- bounded error bodies ----------------------------------------------------------------------
# A refusal must never be larger than what it refuses: a body of 5,000 bad items would otherwise
# be answered with 5,000 messages, each perhaps echoing its item.

MAX_ERRORS = 20  # messages an error body names; the rest are counted
MAX_MESSAGE_CHARS = 500  # a longer message (one that echoes its input) is cut
MAX_KEY_CHARS = 100  # a field name is the client's own text when the field is unknown
MORE_ERRORS = "more_errors"  # the key, beside the errors shown, that says how many are not


def cut(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """`text`, cut to `limit` characters with an ellipsis when it is longer."""
    return text if len(text) <= limit else text[:limit] + "…"


def more_errors(count: int, what: str = "errors are") -> list[str]:
    """The value of MORE_ERRORS: one message, so that it has the shape of any field's errors."""
    return [f"{count:,} more {what} not shown."]


def bounded(body: Any) -> Any:
    """An error body (DRF's nesting of objects, lists and messages) naming at most MAX_ERRORS
    errors, depth first, each message cut to MAX_MESSAGE_CHARS. An error is a message, or a
    record of scalars (a field's list of messages, `{"path": ..., "message": ...}`); the
    top-level `detail` is the refusal itself and always shown. Where errors are left out, the
    object gains MORE_ERRORS saying how many, and a list ends with that message."""
    if isinstance(body, Mapping) and isinstance(body.get("detail"), str):
        rest = _bounded({key: item for key, item in body.items() if key != "detail"}, [MAX_ERRORS])
        return {"detail": cut(body["detail"]), **rest}
    return _bounded(body, [MAX_ERRORS])


def _is_record(value: Any) -> bool:
    items = value.values() if isinstance(value, Mapping) else value
    return isinstance(value, Mapping | list | tuple) and not any(
        isinstance(item, Mapping | list | tuple) for item in items
    )


def _bounded(value: Any, budget: list[int]) -> Any:
    if isinstance(value, str):
        budget[0] -= 1
        return cut(value)
    if _is_record(value) and value:
        budget[0] -= 1
        return _bounded_record(value)
    if isinstance(value, Mapping):
        return _bounded_mapping(value, budget)
    if isinstance(value, list | tuple):
        shown, rest = _bounded_items(list(value), budget)
        return shown + more_errors(rest) if rest else shown
    return value  # numbers, booleans and null say how much, not what was sent


def _bounded_record(record: Mapping | list | tuple) -> dict | list:
    def scalar(item: Any) -> Any:
        return cut(item) if isinstance(item, str) else item

    if isinstance(record, Mapping):
        return {cut(str(key), MAX_KEY_CHARS): scalar(item) for key, item in list(record.items())[:MAX_ERRORS]}
    shown = [scalar(item) for item in record[:MAX_ERRORS]]
    return shown + more_errors(len(record) - MAX_ERRORS, "messages are") if len(record) > MAX_ERRORS else shown


def _bounded_mapping(value: Mapping, budget: list[int]) -> dict:
    summary = list(value.get(MORE_ERRORS) or ())  # the counts a validator gave itself are kept
    entries = [(key, item) for key, item in value.items() if key != MORE_ERRORS]
    shown_items, rest = _bounded_items([item for _, item in entries], budget)
    shown = {cut(str(key), MAX_KEY_CHARS): item for (key, _), item in zip(entries, shown_items, strict=False)}
    summary += more_errors(rest) if rest else []
    return {**shown, MORE_ERRORS: [cut(str(line)) for line in summary]} if summary else shown


def _bounded_items(items: list, budget: list[int]) -> tuple[list, int]:
    """The items shown while the budget lasts, and how many of the rest hold an error."""
    shown: list[Any] = []
    for index, item in enumerate(items):
        if budget[0] <= 0:
            return shown, sum(1 for rest in items[index:] if rest not in ({}, [], None, ""))
        shown.append(_bounded(item, budget))
    return shown, 0
