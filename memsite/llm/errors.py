"""The one error the gateway raises. Whatever went wrong inside a provider ends here, with a
reason a caller can branch on and the ledger row that recorded the failed call."""

from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memsite.llm.models import LLMCall


class Reason(StrEnum):
    TIMEOUT = "timeout"  # the call's deadline passed
    RATE_LIMITED = "rate_limited"  # 429 until the retries ran out
    SERVER_ERROR = "server_error"  # 5xx until the retries ran out
    CONNECTION = "connection"  # the server could not be reached
    BAD_REQUEST = "bad_request"  # 400, 404, 422...: retrying will not help
    AUTHENTICATION = "authentication"  # 401/403
    INVALID_REPLY = "invalid_reply"  # not valid for the schema after every repair
    OFFLINE_UNSUPPORTED = "offline_unsupported"  # the offline provider cannot fill the schema
    CONFIGURATION = "configuration"
    INTERNAL = "internal"  # a bug: logged with its traceback
    BUDGET_SPENT = "budget_spent"  # the user's daily LLM budget is spent: nothing was sent


class LLMError(Exception):
    def __init__(self, reason: Reason | str, message: str, *, call: "LLMCall | None" = None):
        super().__init__(f"{reason}: {message}")
        self.reason = Reason(reason)
        self.message = message
        self.call = call
