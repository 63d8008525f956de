"""Errors a service raises when it refuses a write. Each carries the HTTP status it means."""


class ServiceError(Exception):
    status = 400

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


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
