"""Errors a service raises when it refuses a write. Each carries the HTTP status it means."""


class ServiceError(Exception):
    status = 400

    def __init__(self, message: str, *, data: dict | None = None):
        super().__init__(message)
        self.message = message
        self.data = data or {}  # fields the API answers next to the message


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
