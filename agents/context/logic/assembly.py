"""Context assembly's pure parts: the request and its checks, the window, the fixed tiers, the
strategies' choices over loaded messages, and the report. No queries: the selector
`agents.context.selectors.assembly` reads and calls these."""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Generic, TypeAlias, TypeVar

from agents.context.logic.wire import summary_wire_message, wire_message, wire_message_of, wire_tokens
from agents.context.models import RESULT_ROLES, Agent, Role, Strategy
from agents.fields import max_chars
from memsite.errors import InvalidInput, Unprocessable
from memsite.llm.tokens import TOKENS_REPLY_PRIMING, TokenCounter

if TYPE_CHECKING:
    from agents.context.selectors.messages import ScoredMessage, StoredMessage
    from agents.context.selectors.summaries import StoredSummary

    # A message as assembly reads it: whole, or (for the importance strategy's choice) its
    # scores.
    Row: TypeAlias = StoredMessage | ScoredMessage

# Units hold the rows of one kind: whole messages, or only their scores.
RowT = TypeVar("RowT", bound="Row")

# Without a budget from the caller, long-term memory may take this share of the window.
LONG_TERM_SHARE = 0.25
# The importance strategy chooses among this many trigger budgets of the newest history.
IMPORTANCE_LOOKBACK = 2
IMPORTANCE_WEIGHTS = {"recency": 0.4, "importance": 0.3, "role": 0.15, "references": 0.15}
ROLE_SCORES: dict[str, float] = {
    Role.SYSTEM: 1.0,
    Role.DEVELOPER: 1.0,
    Role.USER: 0.8,
    Role.ASSISTANT: 0.5,
    Role.TOOL: 0.3,
    Role.FUNCTION: 0.3,
}
REFERENCES_FOR_FULL_SCORE = 3
# The summarize strategy keeps this share of the window (at most MEMSITE_SUMMARY_MAX_TOKENS)
# for the summary.
SUMMARY_SHARE = 0.1

SYSTEM, PINNED, WORKING, LONG_TERM, SUMMARY, SHORT_TERM, PRIMING = (
    "system",
    "pinned",
    "working_memory",
    "long_term",
    "summary",
    "short_term",
    "reply_priming",
)
REASONS = {
    "compaction": "cut oldest first, from the compaction trigger down to the target",
    "outside_window": "before the last turns the sliding window keeps",
    "low_importance": "lowest importance score, evicted down to the target",
    "beyond_lookback": "older than the history the importance strategy chooses from",
    "tool_pair": "a tool result whose call was dropped goes with it",
    "summarized": "replaced by the stored summary",
    "summary_pending": "cut oldest first while a summary of it is written",
    "before_summary": "older than the stored summary reaches",
    "over_budget": "did not fit in the tier's budget",
}
COMPACTION_REASONS = (
    "compaction",
    "low_importance",
    "summarized",
    "summary_pending",
    "before_summary",
)
WORKING_HEADING = "# Working memory"
LONG_TERM_HEADING = "# Long-term memory: facts and search results"
# A request is held to the limits of the agent's own settings.
MAX_MODEL_CHARS = max_chars(Agent, "model")
MAX_WINDOW_TURNS = 10_000
MODEL_INVALID = f"model must be a model name of at most {MAX_MODEL_CHARS} characters."
STRATEGY_INVALID = f"strategy must be one of {', '.join(Strategy.values)}."


class TokenBudgetExceeded(Unprocessable):
    """Nothing can be sent: the pinned part alone does not fit the window, or the conversation
    has spent its token budget. `data` has the numbers."""


# -- the report ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Included:
    tier: str
    tokens: int
    position: int | None = None  # stored messages only


@dataclass(frozen=True)
class Dropped:
    tier: str
    reason: str
    tokens: int
    count: int  # messages, or items of a tier
    first_position: int | None = None  # stored messages: the range they came from
    last_position: int | None = None
    item: int | None = None  # working or long-term memory: the item's number, from 1

    @property
    def detail(self) -> str:
        return REASONS[self.reason]


@dataclass(frozen=True)
class SummaryUsed:
    id: int
    since: int
    through: int
    level: int
    tokens: int
    truncated: bool  # cut to the room the strategy keeps for it


@dataclass(frozen=True)
class ContextReport:
    model: str
    strategy: str
    encoding: str
    exact: bool  # every count made with this model's own encoding
    context_window: int
    reserved_output_tokens: int
    turn_input_limit: int | None
    window: int
    total: int
    free: int
    tiers: dict[str, int]
    warning_at: int
    trigger_at: int
    target_at: int
    compacted: bool
    warnings: list[str]
    conversation_tokens: int
    conversation_token_budget: int | None
    stored_messages: int
    included: list[Included]
    dropped: list[Dropped]
    summary: SummaryUsed | None
    # The position a summary should reach for this cut, when no written summary reaches it.
    summary_wanted: int | None


@dataclass(frozen=True)
class AssembledContext:
    messages: list[dict]  # in the chat API's form
    report: ContextReport


# -- the request and the window -----------------------------------------------------------------


@dataclass(frozen=True)
class ContextRequest:
    """What the caller asked for, with the agent's settings in place of what it left out."""

    model: str
    strategy: str
    turns: int
    working_memory: list[str]
    long_term: list[str]
    long_term_budget: int | None


@dataclass(frozen=True)
class Conversation:
    """The agent's settings and conversation counters assembly reads, as loaded."""

    reserved_output_tokens: int
    turn_input_limit: int | None
    warning_threshold: float
    compaction_trigger: float
    compaction_target: float
    conversation_token_budget: int | None
    conversation_tokens: int
    history_tokens: int
    message_count: int


def _text_items(name: str, items: object) -> list[str]:
    if isinstance(items, str) or not isinstance(items, Sequence) or not all(isinstance(item, str) for item in items):
        raise InvalidInput(f"{name} must be a list of strings.")
    return list(items)


def context_request(
    *,
    model: object,
    strategy: object,
    turns: object,
    working_memory: object,
    long_term: object,
    long_term_budget: object,
) -> ContextRequest:
    """The request once checked, or `InvalidInput` naming the first argument that is wrong.
    Callers in Python reach assembly without a serializer, so the checks stay here too."""
    if not isinstance(model, str) or not model.strip() or len(model) > MAX_MODEL_CHARS:
        raise InvalidInput(MODEL_INVALID)
    if strategy not in Strategy.values:
        raise InvalidInput(STRATEGY_INVALID)
    if isinstance(turns, bool) or not isinstance(turns, int) or not 1 <= turns <= MAX_WINDOW_TURNS:
        raise InvalidInput(f"turns must be an integer from 1 to {MAX_WINDOW_TURNS}.")
    working = _text_items("working_memory", working_memory)
    memory = _text_items("long_term", long_term)
    if long_term_budget is not None and (
        isinstance(long_term_budget, bool) or not isinstance(long_term_budget, int) or long_term_budget < 0
    ):
        raise InvalidInput("long_term_budget must be a whole number of tokens.")
    return ContextRequest(
        model=model,
        strategy=str(strategy),
        turns=turns,
        working_memory=working,
        long_term=memory,
        long_term_budget=long_term_budget,
    )


@dataclass(frozen=True)
class Window:
    """The tokens one call may send, and the marks within them."""

    model: str
    context_window: int
    reserved_output_tokens: int
    turn_input_limit: int | None
    size: int
    warning_at: int
    trigger_at: int
    target_at: int

    @property
    def numbers(self) -> dict:
        """What a refusal reports about the window."""
        return {
            "model": self.model,
            "context_window": self.context_window,
            "reserved_output_tokens": self.reserved_output_tokens,
            "turn_input_limit": self.turn_input_limit,
            "window": self.size,
        }


def context_window(*, model: str, context_window: int, conversation: Conversation) -> Window:
    """The model's context less the reserved output, capped at the agent's turn limit; refuses
    when the conversation has spent its token budget."""
    size = context_window - conversation.reserved_output_tokens
    if conversation.turn_input_limit is not None:
        size = min(size, conversation.turn_input_limit)
    window = Window(
        model=model,
        context_window=context_window,
        reserved_output_tokens=conversation.reserved_output_tokens,
        turn_input_limit=conversation.turn_input_limit,
        size=size,
        warning_at=math.floor(conversation.warning_threshold * size),
        trigger_at=math.floor(conversation.compaction_trigger * size),
        target_at=math.floor(conversation.compaction_target * size),
    )
    budget, spent = conversation.conversation_token_budget, conversation.conversation_tokens
    if budget is not None and spent >= budget:
        raise TokenBudgetExceeded(
            f"The conversation has spent its token budget: {spent} of {budget} tokens.",
            data={
                "reason": "conversation_budget",
                "conversation_tokens": spent,
                "conversation_token_budget": budget,
                **window.numbers,
            },
        )
    return window


# -- the fixed tiers ----------------------------------------------------------------------------


def memory_block(
    counter: TokenCounter, *, tier: str, heading: str, items: Sequence[str], budget: int
) -> tuple[dict | None, int, list[Dropped]]:
    """One system message of the items that fit in `budget`, in the caller's order. Items are
    chosen by their own counts, then the message is counted whole and trimmed from the end
    until it fits (tokens can merge across the joins). The brains' chat fits its memory so too."""
    if not items:
        return None, 0, []

    def message(texts: list[str]) -> dict:
        return wire_message(role=Role.SYSTEM.value, content="\n\n".join([heading, *texts]))

    def over(number: int, cost: int) -> Dropped:
        return Dropped(tier=tier, reason="over_budget", tokens=cost, count=1, item=number)

    kept: list[tuple[int, str, int]] = []
    dropped: list[tuple[int, int]] = []  # each item left out: its number and its cost
    estimate = wire_tokens(counter, message([]))
    for number, item in enumerate(items, 1):
        cost = counter.count("\n\n" + item)
        if estimate + cost <= budget:
            kept.append((number, item, cost))
            estimate += cost
        else:
            dropped.append((number, cost))
    while kept:
        whole = message([item for _, item, _ in kept])
        tokens = wire_tokens(counter, whole)
        if tokens <= budget:
            return whole, tokens, [over(number, cost) for number, cost in sorted(dropped)]
        number, _, cost = kept.pop()
        dropped.append((number, cost))
    return None, 0, [over(number, cost) for number, cost in sorted(dropped)]


@dataclass(frozen=True)
class Tier:
    """A tier sent as one system message, or nothing when no item fits."""

    message: dict | None = None
    tokens: int = 0
    dropped: list[Dropped] = field(default_factory=list)


@dataclass(frozen=True)
class FixedTiers:
    """What is sent whatever the strategy: instructions, pinned messages and memory."""

    system: list[dict]
    system_tokens: int
    pinned: list[StoredMessage]
    pinned_tokens: int
    working: Tier
    long_term: Tier

    @property
    def fixed(self) -> int:
        """The part never dropped, with the reply priming."""
        return TOKENS_REPLY_PRIMING + self.system_tokens + self.pinned_tokens

    @property
    def others(self) -> int:
        """Everything but the history."""
        return self.fixed + self.working.tokens + self.long_term.tokens


def _pinned_refusal(window: Window, needed: int, pinned_messages: int) -> TokenBudgetExceeded:
    capped = f", capped at {window.turn_input_limit} per turn" if window.turn_input_limit is not None else ""
    return TokenBudgetExceeded(
        f"The instructions and pinned messages need {needed} tokens; the window holds "
        f"{window.size} ({window.context_window} in {window.model}'s context less "
        f"{window.reserved_output_tokens} reserved for output{capped}).",
        data={
            "reason": "pinned",
            "needed": needed,
            "pinned_messages": pinned_messages,
            **window.numbers,
        },
    )


def fixed_tiers(
    counter: TokenCounter,
    *,
    window: Window,
    request: ContextRequest,
    instructions: str,
    pinned: list[StoredMessage],
) -> FixedTiers:
    """The tiers in order: instructions, pinned messages (refused when they alone do not fit),
    working memory in what remains, then long-term memory within its budget."""
    system = [wire_message(role=Role.SYSTEM.value, content=instructions)] if instructions else []
    tiers = FixedTiers(
        system=system,
        system_tokens=sum(wire_tokens(counter, message) for message in system),
        pinned=pinned,
        pinned_tokens=sum(message.token_count for message in pinned),
        working=Tier(),
        long_term=Tier(),
    )
    if tiers.fixed > window.size:
        raise _pinned_refusal(window, tiers.fixed, len(pinned))
    room = window.size - tiers.fixed
    working = Tier(
        *memory_block(
            counter,
            tier=WORKING,
            heading=WORKING_HEADING,
            items=request.working_memory,
            budget=room,
        )
    )
    cap = request.long_term_budget
    if cap is None:
        cap = math.floor(LONG_TERM_SHARE * window.size)
    long_term = Tier(
        *memory_block(
            counter,
            tier=LONG_TERM,
            heading=LONG_TERM_HEADING,
            items=request.long_term,
            budget=min(cap, room - working.tokens),
        )
    )
    return replace(tiers, working=working, long_term=long_term)


# -- the history --------------------------------------------------------------------------------


@dataclass(frozen=True)
class HistoryBudget:
    """The unpinned history's room: up to `trigger` tokens, cut in steps of `step`; the
    summarize strategy keeps `summary_room` of the window for its summary."""

    trigger: int
    step: int
    summary_room: int


def history_budget(*, window: Window, strategy: str, others: int, summary_max_tokens: int) -> HistoryBudget:
    summary_room = 0
    if strategy == Strategy.SUMMARIZE:
        summary_room = min(summary_max_tokens, math.floor(SUMMARY_SHARE * window.size))
    return HistoryBudget(
        trigger=max(0, window.trigger_at - others - summary_room),
        step=max(1, window.trigger_at - window.target_at),
        summary_room=summary_room,
    )


def compaction_cut(history_tokens: int, budget: HistoryBudget) -> int:
    """Unpinned tokens to cut from the start of the history: the first multiple of the step that
    leaves at most the trigger budget."""
    return math.ceil((history_tokens - budget.trigger) / budget.step) * budget.step


@dataclass
class Unit(Generic[RowT]):
    """A stored message and the tool results that answer it. Its sums are taken once the unit
    is whole: the importance strategy reads them for every unit several times."""

    messages: list[RowT]

    @property
    def position(self) -> int:
        return self.messages[0].position

    @cached_property
    def tokens(self) -> int:
        return sum(message.token_count for message in self.messages)

    @cached_property
    def importance(self) -> float:
        return max(message.importance for message in self.messages)


def units_of(messages: Sequence[RowT]) -> tuple[list[RowT], list[Unit[RowT]]]:
    """Leading tool results whose call is not in `messages`, and the units of the rest."""
    orphans: list[RowT] = []
    units: list[Unit[RowT]] = []
    for message in messages:
        if message.role in RESULT_ROLES:
            (units[-1].messages if units else orphans).append(message)
        else:
            units.append(Unit([message]))
    return orphans, units


class Ranges:
    """Drops of stored messages, as ranges of positions (pinned positions are never in them)."""

    def __init__(self, pinned_positions: list[int]):
        self.pinned = pinned_positions
        self.entries: list[Dropped] = []

    def unpinned(self, first: int, last: int) -> int:
        pinned = bisect_right(self.pinned, last) - bisect_left(self.pinned, first)
        return (last - first + 1) - pinned

    def span(self, reason: str, first: int, last: int, tokens: int) -> None:
        count = self.unpinned(first, last) if last >= first else 0
        if count:
            self.entries.append(
                Dropped(
                    tier=SHORT_TERM,
                    reason=reason,
                    tokens=tokens,
                    count=count,
                    first_position=first,
                    last_position=last,
                )
            )

    def units(self, reason: str, units: Sequence[Unit]) -> None:
        """Dropped units, a range for each run of neighbours."""
        run: list[Row] = []
        for unit in units:
            if run and self.unpinned(run[-1].position + 1, unit.position - 1) > 0:
                self._run(reason, run)
                run = []
            run.extend(unit.messages)
        if run:
            self._run(reason, run)

    def orphans(self, messages: list[RowT]) -> None:
        """Tool results at the start of what is read, whose call was cut."""
        if messages:
            self.units("tool_pair", [Unit(messages)])

    def _run(self, reason: str, messages: list[Row]) -> None:
        self.entries.append(
            Dropped(
                tier=SHORT_TERM,
                reason=reason,
                tokens=sum(message.token_count for message in messages),
                count=len(messages),
                first_position=messages[0].position,
                last_position=messages[-1].position,
            )
        )


def _scores(units: list[Unit], referenced: Counter) -> list[float]:
    first, last = units[0].position, units[-1].position
    span = max(1, last - first)
    weights = IMPORTANCE_WEIGHTS
    scores = []
    for unit in units:
        references = sum(referenced[message.position] for message in unit.messages)
        scores.append(
            weights["recency"] * (unit.position - first) / span
            + weights["importance"] * unit.importance
            + weights["role"] * ROLE_SCORES[unit.messages[0].role]
            + weights["references"] * min(1.0, references / REFERENCES_FOR_FULL_SCORE)
        )
    return scores


def importance_keep(*, units: list[Unit], pinned: Sequence[Row], budget: int, ranges: Ranges) -> list[int]:
    """The positions kept when the lowest-scored units are evicted until the rest fit in
    `budget`; the newest unit goes last."""
    referenced = Counter(
        reference
        for message in [*pinned, *(message for unit in units for message in unit.messages)]
        for reference in message.references
    )
    scores = _scores(units, referenced)
    newest = len(units) - 1
    order = sorted(range(newest), key=lambda index: (scores[index], units[index].position))
    order.append(newest)
    kept_tokens = sum(unit.tokens for unit in units)
    evicted: set[int] = set()
    for index in order:
        if kept_tokens <= budget:
            break
        evicted.add(index)
        kept_tokens -= units[index].tokens
    ranges.units("low_importance", [unit for index, unit in enumerate(units) if index in evicted])
    return [message.position for index, unit in enumerate(units) if index not in evicted for message in unit.messages]


@dataclass(frozen=True)
class History:
    """What a strategy keeps of the unpinned history, and the summary put in place of a cut."""

    kept: list[StoredMessage]
    message: dict | None = None
    used: SummaryUsed | None = None
    wanted: int | None = None


def summary_message(counter: TokenCounter, summary: StoredSummary, room: int) -> tuple[dict | None, SummaryUsed | None]:
    """The summary as a system message, cut to `room` tokens when it is longer (as when it was
    written for a model with a larger window); None when not even its heading fits."""

    def message(text: str) -> dict:
        return summary_wire_message(since=summary.since, through=summary.through, text=text)

    text = summary.content
    whole = message(text)
    tokens = summary.token_count if summary.token_encoding == counter.encoding.name else wire_tokens(counter, whole)
    truncated = False
    while tokens > room and text:
        # Tokens can merge across the cut, so cut again until it fits.
        text = counter.truncate(text, max(0, counter.count(text) - (tokens - room)))
        whole, tokens, truncated = message(text), wire_tokens(counter, message(text)), True
    if tokens > room:
        return None, None
    used = SummaryUsed(
        id=summary.id,
        since=summary.since,
        through=summary.through,
        level=summary.level,
        tokens=tokens,
        truncated=truncated,
    )
    return whole, used


def summarized_history(
    counter: TokenCounter,
    *,
    kept: list[StoredMessage],
    summary: StoredSummary | None,
    room: int,
    wanted: int,
    cut_offset: int,
    ranges: Ranges,
) -> History:
    """The kept history with the summary (within `room`) in place of what was cut up to
    position `wanted` (`cut_offset` unpinned tokens), and what of the cut no summary covers."""
    message, used = summary_message(counter, summary, room) if summary is not None else (None, None)
    pending_from, pending_offset = 1, 0
    if summary is not None and used is not None:
        ranges.span("before_summary", 1, summary.since - 1, summary.history_start)
        ranges.span(
            "summarized",
            summary.since,
            summary.through,
            summary.history_end - summary.history_start,
        )
        pending_from, pending_offset = summary.through + 1, summary.history_end
    ranges.span("summary_pending", pending_from, wanted, cut_offset - pending_offset)
    return History(
        kept=kept,
        message=message,
        used=used,
        wanted=wanted if pending_from <= wanted else None,
    )


# -- the report ---------------------------------------------------------------------------------


def stored_wire(message: StoredMessage) -> dict:
    # Each read parses the JSON columns afresh, so the message may hold them without copies.
    return wire_message_of(vars(message))


def _sent(tiers: FixedTiers, history: History, stored: list[StoredMessage]) -> tuple[list[dict], list[Included]]:
    """The messages in the order the model reads them, and what each is."""
    messages = list(tiers.system)
    included = [Included(tier=SYSTEM, tokens=tiers.system_tokens)] if tiers.system else []
    summary_tokens = history.used.tokens if history.used else 0
    blocks = [
        (WORKING, tiers.working.message, tiers.working.tokens),
        (LONG_TERM, tiers.long_term.message, tiers.long_term.tokens),
        (SUMMARY, history.message, summary_tokens),
    ]
    for tier, block, tokens in blocks:
        if block:
            messages.append(block)
            included.append(Included(tier=tier, tokens=tokens))
    for message in stored:
        messages.append(stored_wire(message))
        included.append(
            Included(
                tier=PINNED if message.pinned else SHORT_TERM,
                tokens=message.token_count,
                position=message.position,
            )
        )
    return messages, included


def _warnings(
    *,
    total: int,
    window: Window,
    conversation: Conversation,
    tiers: FixedTiers,
    budget: HistoryBudget,
    history: History,
) -> list[str]:
    warnings = []
    if total >= window.warning_at:
        warnings.append(
            f"The context takes {total} of {window.size} tokens ({total / window.size:.0%}), "
            f"at or over the warning threshold of {conversation.warning_threshold:.0%}."
        )
    if budget.trigger == 0 and conversation.history_tokens:
        warnings.append(
            f"Instructions, pinned messages and memory take {tiers.others} tokens, past the "
            f"compaction trigger ({window.trigger_at}): no unpinned history fits."
        )
    if history.wanted:
        warnings.append(f"Messages up to position {history.wanted} are cut while a summary of them is written.")
    return warnings


@dataclass(frozen=True)
class Assembly:
    """Everything chosen, for the report."""

    request: ContextRequest
    conversation: Conversation
    window: Window
    tiers: FixedTiers
    budget: HistoryBudget
    history: History
    ranges: Ranges


def _range_start(entry: Dropped) -> int:
    """The first position of a range of dropped messages, which `Ranges` gives every entry."""
    if entry.first_position is None:
        raise ValueError(f"A drop for {entry.reason} has no range of messages.")
    return entry.first_position


def context_assembled(counter: TokenCounter, assembly: Assembly) -> AssembledContext:
    """The messages to send and the report of how they were chosen."""
    tiers, history, window = assembly.tiers, assembly.history, assembly.window
    conversation = assembly.conversation
    stored = sorted([*tiers.pinned, *history.kept], key=lambda message: message.position)
    messages, included = _sent(tiers, history, stored)
    tier_tokens = {
        SYSTEM: tiers.system_tokens,
        PINNED: tiers.pinned_tokens,
        WORKING: tiers.working.tokens,
        LONG_TERM: tiers.long_term.tokens,
        SUMMARY: history.used.tokens if history.used else 0,
        SHORT_TERM: sum(message.token_count for message in history.kept),
        PRIMING: TOKENS_REPLY_PRIMING,
    }
    total = sum(tier_tokens.values())
    entries = assembly.ranges.entries
    encoding = counter.encoding.name
    report = ContextReport(
        model=window.model,
        strategy=assembly.request.strategy,
        encoding=encoding,
        exact=counter.exact and all(message.token_encoding == encoding for message in stored),
        context_window=window.context_window,
        reserved_output_tokens=window.reserved_output_tokens,
        turn_input_limit=window.turn_input_limit,
        window=window.size,
        total=total,
        free=window.size - total,
        tiers=tier_tokens,
        warning_at=window.warning_at,
        trigger_at=window.trigger_at,
        target_at=window.target_at,
        compacted=any(entry.reason in COMPACTION_REASONS for entry in entries),
        warnings=_warnings(
            total=total,
            window=window,
            conversation=conversation,
            tiers=tiers,
            budget=assembly.budget,
            history=history,
        ),
        conversation_tokens=conversation.conversation_tokens,
        conversation_token_budget=conversation.conversation_token_budget,
        stored_messages=conversation.message_count,
        included=included,
        dropped=[
            *tiers.working.dropped,
            *tiers.long_term.dropped,
            *sorted(entries, key=_range_start),
        ],
        summary=history.used,
        summary_wanted=history.wanted,
    )
    return AssembledContext(messages=messages, report=report)
