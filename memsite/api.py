"""API plumbing shared by every app: service errors become JSON responses with their status."""

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from memsite.errors import ServiceError


def exception_handler(exc: Exception, context: dict) -> Response | None:
    if isinstance(exc, ServiceError):
        return Response({"detail": exc.message, **exc.data}, status=exc.status)
    if isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(detail=exc.message_dict if hasattr(exc, "error_dict") else exc.messages)
    return drf_exception_handler(exc, context)
