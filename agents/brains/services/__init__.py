from agents.brains.services.brains_json import ImportReport, brain_export, brain_import
from agents.brains.services.chat import ChatExchange, ChatFailed, chat_send
from agents.brains.services.ticks import (
    tick_request,
    tick_run,
    ticking_pause,
    ticking_start,
    ticks_start_due,
    ticks_sweep_stale,
)

__all__ = [
    "ChatExchange",
    "ChatFailed",
    "ImportReport",
    "brain_export",
    "brain_import",
    "chat_send",
    "tick_request",
    "tick_run",
    "ticking_pause",
    "ticking_start",
    "ticks_start_due",
    "ticks_sweep_stale",
]
