from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.request import Request

from memsite.spaces.models import ApiToken
from memsite.spaces.principals import principal_remember
from memsite.spaces.services import TokenRefused, header_key, token_authenticate


class ApiTokenAuthentication(BaseAuthentication):
    """`Authorization: Token <key>` or `Bearer <key>`: request.user is the token's user,
    request.auth the ApiToken. A key that authenticates nobody is a 401 saying why."""

    def authenticate(self, request: Request) -> tuple[object, ApiToken] | None:
        try:
            key = header_key(get_authorization_header(request))
            if key is None:
                return None  # another scheme, or none: the session's turn
            principal = token_authenticate(key=key)
        except TokenRefused as refused:
            raise exceptions.AuthenticationFailed(refused.message) from None
        principal_remember(request, principal)
        assert principal.token is not None
        return principal.user, principal.token

    def authenticate_header(self, request: Request) -> str:
        return "Token"
