"""Context assembly (seed 003): the messages of one model call of an agent, within the model's
context window less the output reserved for the reply, and a report of how they were chosen.

Tiers, in the order the model reads them:
1. the pinned system message: the agent's instructions rendered from its context variables;
2. working memory: blocks the caller passes (active goals, the current plan step, the active
   reasoning-graph summary), in one system message;
3. long-term memory: facts and memory-search results the caller passes, in the caller's order,
   within a budget, in one system message;
4. short-term memory: the stored conversation in order: every pinned message, and what the
   strategy keeps of the others.

The pinned part (instructions and pinned messages) is never dropped; when it alone cannot fit,
or the conversation has spent its token budget, assembly refuses with `TokenBudgetExceeded`.
A stored message and the tool (or function) results after it form one unit, kept or dropped whole.

Compaction. The unpinned history may fill the window up to the compaction trigger, less what
the other tiers take. Past that, the oldest history is cut in steps of (trigger - target) of the
window, counted from the conversation's first token, which brings it back to the target (less
the size of the newest message) and lets it grow until it next reaches the trigger. The cut
points sit at fixed offsets of the history, so between two compactions the same messages stay
and the start of the prompt does not change; the assembler keeps no state and writes nothing.

Strategies:
- `fifo`: the oldest history goes first, at the compaction cut.
- `sliding_window`: only the last N turns (a turn begins at a user message), cut at the
  compaction cut when that is later.
- `importance`: keeps as many tokens as `fifo` would, chosen by score (recency, role, the
  message's importance, references from other messages), lowest evicted first, from the history
  of the last `IMPORTANCE_LOOKBACK` trigger budgets. The newest unit goes last.
- `summarize`: cuts as `fifo` does, leaving room for a summary, and puts in place of what it
  cut the stored summary that reaches furthest into it (`agents.context.models.Summary`). Writing a
  summary takes LLM calls, so assembly never waits for one: the report names the position a
  summary should reach (`summary_wanted`) and `agents.context.services.context_build` queues it.

Stored messages are used with the token counts they were written with: nothing stored is
re-counted, loaded beyond what the strategy may keep, or changed. The same conversation, agent
settings and arguments give the same result."""

import math
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from django.conf import settings

from agents.context import selectors
from agents.context.logic.instructions import instructions_render
from agents.context.logic.wire import summary_wire_message, wire_message, wire_tokens
from agents.context.models import RESULT_ROLES, Agent, Role, Strategy
from agents.context.selectors.messages import HistoryPoint, ScoredMessage, StoredMessage
from agents.context.selectors.summaries import StoredSummary
from agents.context.services.agents import MAX_MODEL_CHARS, MAX_WINDOW_TURNS
from memsite.errors import InvalidInput, Unprocessable
from memsite.llm.config import llm_config
from memsite.llm.tokens import TOKENS_REPLY_PRIMING, TokenCounter, counter_for_model

# Without a budget from the caller, long-term memory may take this share of the window.
LONG_TERM_SHARE = 0.25
# The importance strategy chooses among this many trigger budgets of the newest history.
IMPORTANCE_LOOKBACK = 2
IMPORTANCE_WEIGHTS = {"recency": 0.4, "importance": 0.3, "role": 0.15, "references": 0.15}
ROLE_SCORES = {
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
COMPACTION_REASONS = ("compaction", "low_importance", "summarized", "summary_pending", "before_summary")
# A message as assembly reads it: whole, or (for the importance strategy's choice) its scores.
Row = StoredMessage | ScoredMessage
WORKING_HEADING = "# Working memory"
LONG_TERM_HEADING = "# Long-term memory: facts and search results"


class TokenBudgetExceeded(Unprocessable):
    """Nothing can be sent: the pinned part alone does not fit the window, or the conversation
    has spent its token budget. `data` has the numbers."""


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


@dataclass
class _Unit:
    """A stored message and the tool results that answer it. Its sums are taken once the unit
    is whole: the importance strategy reads them for every unit several times."""

    messages: list["Row"]

    @property
    def position(self) -> int:
        return self.messages[0].position

    @cached_property
    def tokens(self) -> int:
        return sum(message.token_count for message in self.messages)

    @cached_property
    def importance(self) -> float:
        return max(message.importance for message in self.messages)


def _stored_wire(message: StoredMessage) -> dict:
    # Each read parses the JSON columns afresh, so the message may hold them without copies.
    return wire_message(
        role=message.role,
        content=message.content,
        content_parts=message.content_parts,
        name=message.name,
        refusal=message.refusal,
        audio_id=message.audio_id,
        function_call=message.function_call,
        tool_calls=message.tool_calls,
        tool_call_id=message.tool_call_id,
    )


def _block(
    counter: TokenCounter, *, tier: str, heading: str, items: Sequence[str], budget: int
) -> tuple[dict | None, int, list[Dropped]]:
    """One system message of the items that fit in `budget`, in the caller's order. Items are
    chosen by their own counts, then the message is counted whole and trimmed from the end
    until it fits (tokens can merge across the joins)."""
    if not items:
        return None, 0, []

    def message(texts: list[str]) -> dict:
        return wire_message(role=Role.SYSTEM.value, content="\n\n".join([heading, *texts]))

    kept: list[tuple[int, str, int]] = []
    dropped = []
    estimate = wire_tokens(counter, message([]))
    for number, item in enumerate(items, 1):
        cost = counter.count("\n\n" + item)
        if estimate + cost <= budget:
            kept.append((number, item, cost))
            estimate += cost
        else:
            dropped.append(Dropped(tier=tier, reason="over_budget", tokens=cost, count=1, item=number))
    while kept:
        whole = message([item for _, item, _ in kept])
        tokens = wire_tokens(counter, whole)
        if tokens <= budget:
            return whole, tokens, sorted(dropped, key=lambda entry: entry.item)
        number, _, cost = kept.pop()
        dropped.append(Dropped(tier=tier, reason="over_budget", tokens=cost, count=1, item=number))
    return None, 0, sorted(dropped, key=lambda entry: entry.item)


class _Ranges:
    """Drops of stored messages, as ranges of positions (pinned positions are never in them)."""

    def __init__(self, pinned_positions: list[int]):
        self.pinned = pinned_positions
        self.entries: list[Dropped] = []

    def unpinned(self, first: int, last: int) -> int:
        return (last - first + 1) - (bisect_right(self.pinned, last) - bisect_left(self.pinned, first))

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

    def units(self, reason: str, units: Sequence[_Unit]) -> None:
        """Dropped units, a range for each run of neighbours."""
        run: list[Row] = []
        for unit in units:
            if run and self.unpinned(run[-1].position + 1, unit.position - 1) > 0:
                self._run(reason, run)
                run = []
            run.extend(unit.messages)
        if run:
            self._run(reason, run)

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


def _units(messages: Sequence[Row]) -> tuple[list[Row], list[_Unit]]:
    """Leading tool results whose call is not in `messages`, and the units of the rest."""
    orphans: list[Row] = []
    units: list[_Unit] = []
    for message in messages:
        if message.role in RESULT_ROLES:
            (units[-1].messages if units else orphans).append(message)
        else:
            units.append(_Unit([message]))
    return orphans, units


def _compaction_cut(history_tokens: int, trigger_budget: int, step: int) -> int:
    """Unpinned tokens to cut from the start of the history: the first multiple of `step` that
    leaves at most `trigger_budget`."""
    return math.ceil((history_tokens - trigger_budget) / step) * step


def _sequential(
    *, agent: Agent, strategy: str, turns: int, trigger_budget: int, step: int, ranges: _Ranges
) -> list[StoredMessage]:
    """fifo and sliding_window: one starting point; everything after it is kept."""
    start = HistoryPoint(position=1, offset=0)
    if strategy == Strategy.SLIDING_WINDOW:
        turn = selectors.message_turn_start(agent=agent, turns=turns, through=agent.message_count)
        if turn is not None and turn.position > start.position:
            ranges.span("outside_window", start.position, turn.position - 1, turn.offset)
            start = turn
    if agent.history_tokens > trigger_budget:
        cut = selectors.message_history_point(
            agent=agent,
            offset=_compaction_cut(agent.history_tokens, trigger_budget, step),
            through=agent.message_count,
        )
        if cut is None:
            ranges.span("compaction", start.position, agent.message_count, agent.history_tokens - start.offset)
            return []
        if cut.position > start.position:
            ranges.span("compaction", start.position, cut.position - 1, cut.offset - start.offset)
            start = cut
    history = selectors.message_history(agent=agent, start_position=start.position, through=agent.message_count)
    orphans, units = _units(history)
    if orphans:
        ranges.units("tool_pair", [_Unit(orphans)])
    return [message for unit in units for message in unit.messages]


def _scores(units: list[_Unit], referenced: Counter) -> list[float]:
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


def _by_importance(
    *, agent: Agent, pinned: list[StoredMessage], trigger_budget: int, step: int, ranges: _Ranges
) -> list[StoredMessage]:
    if agent.history_tokens <= trigger_budget:
        return selectors.message_history(agent=agent, start_position=1, through=agent.message_count)
    budget = agent.history_tokens - _compaction_cut(agent.history_tokens, trigger_budget, step)
    horizon = selectors.message_history_point(
        agent=agent,
        offset=max(0, agent.history_tokens - IMPORTANCE_LOOKBACK * trigger_budget),
        through=agent.message_count,
    )
    if budget <= 0 or horizon is None:
        ranges.span("compaction", 1, agent.message_count, agent.history_tokens)
        return []
    ranges.span("beyond_lookback", 1, horizon.position - 1, horizon.offset)
    # Scored without their contents; only the kept are then read whole.
    history = selectors.message_scores(agent=agent, start_position=horizon.position, through=agent.message_count)
    orphans, units = _units(history)
    if orphans:
        ranges.units("tool_pair", [_Unit(orphans)])
    if not units:
        return []
    referenced = Counter(
        reference
        for message in [*pinned, *(message for unit in units for message in unit.messages)]
        for reference in message.references
    )
    scores = _scores(units, referenced)
    newest = len(units) - 1
    order = sorted(range(newest), key=lambda index: (scores[index], units[index].position)) + [newest]
    kept_tokens = sum(unit.tokens for unit in units)
    evicted: set[int] = set()
    for index in order:
        if kept_tokens <= budget:
            break
        evicted.add(index)
        kept_tokens -= units[index].tokens
    ranges.units("low_importance", [unit for index, unit in enumerate(units) if index in evicted])
    kept = [message.position for index, unit in enumerate(units) if index not in evicted for message in unit.messages]
    return selectors.message_rows(agent=agent, positions=kept)


@dataclass(frozen=True)
class _Summarized:
    kept: list[StoredMessage]
    message: dict | None = None
    used: SummaryUsed | None = None
    wanted: int | None = None


def _summarized(
    *, agent: Agent, counter: TokenCounter, trigger_budget: int, room: int, step: int, ranges: _Ranges
) -> _Summarized:
    """The history `fifo` keeps, the written summary (within `room` tokens) that reaches
    furthest into what it cuts, and the position a summary should reach when none written
    does. Tool results at the cut are summarized with their call."""
    if agent.history_tokens <= trigger_budget:
        return _Summarized(selectors.message_history(agent=agent, start_position=1, through=agent.message_count))
    cut = selectors.message_history_point(
        agent=agent,
        offset=_compaction_cut(agent.history_tokens, trigger_budget, step),
        through=agent.message_count,
    )
    units: list[_Unit] = []
    end = agent.message_count + 1, agent.history_tokens  # where the kept history starts
    if cut is not None:
        history = selectors.message_history(agent=agent, start_position=cut.position, through=agent.message_count)
        orphans, units = _units(history)
        start = units[0].position if units else agent.message_count + 1
        end = start, cut.offset + sum(message.token_count for message in orphans)
    wanted, cut_offset = end[0] - 1, end[1]
    summary = selectors.summary_latest(agent=agent, through=wanted)
    message, used = _summary_message(counter, summary, room) if summary is not None else (None, None)
    pending_from, pending_offset = 1, 0
    if summary is not None and used is not None:
        ranges.span("before_summary", 1, summary.since - 1, summary.history_start)
        ranges.span(
            "summarized", summary.since, summary.through, summary.history_end - summary.history_start
        )
        pending_from, pending_offset = summary.through + 1, summary.history_end
    ranges.span("summary_pending", pending_from, wanted, cut_offset - pending_offset)
    return _Summarized(
        kept=[message for unit in units for message in unit.messages],
        message=message,
        used=used,
        wanted=wanted if pending_from <= wanted else None,
    )


def _summary_message(
    counter: TokenCounter, summary: StoredSummary, room: int
) -> tuple[dict | None, SummaryUsed | None]:
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


def _text_items(name: str, items: object) -> list[str]:
    if (
        isinstance(items, str)
        or not isinstance(items, Sequence)
        or not all(isinstance(item, str) for item in items)
    ):
        raise InvalidInput(f"{name} must be a list of strings.")
    return list(items)


def context_assemble(
    *,
    agent: Agent,
    model: str | None = None,
    strategy: str | None = None,
    turns: int | None = None,
    working_memory: Sequence[str] = (),
    long_term: Sequence[str] = (),
    long_term_budget: int | None = None,
) -> AssembledContext:
    """The messages for one call of `agent` to `model` (default: the agent's) with `strategy`
    (default: the agent's); `turns` overrides the agent's `window_turns` for sliding_window;
    `long_term_budget` caps long-term memory in tokens (default: a quarter of the window)."""
    # The row as it is now: the caller's copy may predate appends or a change of settings.
    agent = selectors.agent_get(agent_id=agent.pk)
    model = agent.model if model is None else model
    if not isinstance(model, str) or not model.strip() or len(model) > MAX_MODEL_CHARS:
        raise InvalidInput(f"model must be a model name of at most {MAX_MODEL_CHARS} characters.")
    strategy = agent.strategy if strategy is None else strategy
    if strategy not in Strategy.values:
        raise InvalidInput(f"strategy must be one of {', '.join(Strategy.values)}.")
    turns = agent.window_turns if turns is None else turns
    if isinstance(turns, bool) or not isinstance(turns, int) or not 1 <= turns <= MAX_WINDOW_TURNS:
        raise InvalidInput(f"turns must be an integer from 1 to {MAX_WINDOW_TURNS}.")
    working_memory = _text_items("working_memory", working_memory)
    long_term = _text_items("long_term", long_term)
    if long_term_budget is not None and (
        isinstance(long_term_budget, bool) or not isinstance(long_term_budget, int) or long_term_budget < 0
    ):
        raise InvalidInput("long_term_budget must be a whole number of tokens.")

    info = llm_config().model_info(model)
    counter = counter_for_model(model)
    window = info.context_window - agent.reserved_output_tokens
    if agent.turn_input_limit is not None:
        window = min(window, agent.turn_input_limit)
    numbers = {
        "model": model,
        "context_window": info.context_window,
        "reserved_output_tokens": agent.reserved_output_tokens,
        "turn_input_limit": agent.turn_input_limit,
        "window": window,
    }
    budget = agent.conversation_token_budget
    if budget is not None and agent.conversation_tokens >= budget:
        raise TokenBudgetExceeded(
            f"The conversation has spent its token budget: {agent.conversation_tokens} of {budget} tokens.",
            data={
                "reason": "conversation_budget",
                "conversation_tokens": agent.conversation_tokens,
                "conversation_token_budget": budget,
                **numbers,
            },
        )

    instructions = instructions_render(template=agent.instructions, variables=agent.context_variables)
    system = [wire_message(role=Role.SYSTEM.value, content=instructions)] if instructions else []
    system_tokens = sum(wire_tokens(counter, message) for message in system)
    pinned = selectors.message_pinned(agent=agent, through=agent.message_count)
    pinned_tokens = sum(message.token_count for message in pinned)
    fixed = TOKENS_REPLY_PRIMING + system_tokens + pinned_tokens
    if fixed > window:
        raise TokenBudgetExceeded(
            f"The instructions and pinned messages need {fixed} tokens; the window holds {window} "
            f"({info.context_window} in {model}'s context less {agent.reserved_output_tokens} reserved for output"
            + (f", capped at {agent.turn_input_limit} per turn" if agent.turn_input_limit is not None else "")
            + ").",
            data={"reason": "pinned", "needed": fixed, "pinned_messages": len(pinned), **numbers},
        )

    working, working_tokens, working_dropped = _block(
        counter, tier=WORKING, heading=WORKING_HEADING, items=working_memory, budget=window - fixed
    )
    long_term_cap = math.floor(LONG_TERM_SHARE * window) if long_term_budget is None else long_term_budget
    memory, long_term_tokens, long_term_dropped = _block(
        counter,
        tier=LONG_TERM,
        heading=LONG_TERM_HEADING,
        items=long_term,
        budget=min(long_term_cap, window - fixed - working_tokens),
    )

    warning_at = math.floor(agent.warning_threshold * window)
    trigger_at = math.floor(agent.compaction_trigger * window)
    target_at = math.floor(agent.compaction_target * window)
    others = fixed + working_tokens + long_term_tokens
    summary_room = 0
    if strategy == Strategy.SUMMARIZE:
        summary_room = min(settings.MEMSITE_SUMMARY_MAX_TOKENS, math.floor(SUMMARY_SHARE * window))
    trigger_budget = max(0, trigger_at - others - summary_room)
    step = max(1, trigger_at - target_at)
    ranges = _Ranges([message.position for message in pinned])
    summarized = _Summarized(kept=[])
    if strategy == Strategy.IMPORTANCE:
        kept = _by_importance(agent=agent, pinned=pinned, trigger_budget=trigger_budget, step=step, ranges=ranges)
    elif strategy == Strategy.SUMMARIZE:
        summarized = _summarized(
            agent=agent,
            counter=counter,
            trigger_budget=trigger_budget,
            room=summary_room,
            step=step,
            ranges=ranges,
        )
        kept = summarized.kept
    else:
        kept = _sequential(
            agent=agent, strategy=strategy, turns=turns, trigger_budget=trigger_budget, step=step, ranges=ranges
        )

    history = sorted([*pinned, *kept], key=lambda message: message.position)
    summary_tokens = summarized.used.tokens if summarized.used else 0
    blocks = [(WORKING, working, working_tokens), (LONG_TERM, memory, long_term_tokens)]
    blocks.append((SUMMARY, summarized.message, summary_tokens))
    messages = list(system)
    included = [Included(tier=SYSTEM, tokens=system_tokens)] if system else []
    for tier, block, tokens in blocks:
        if block:
            messages.append(block)
            included.append(Included(tier=tier, tokens=tokens))
    for message in history:
        messages.append(_stored_wire(message))
        included.append(
            Included(
                tier=PINNED if message.pinned else SHORT_TERM,
                tokens=message.token_count,
                position=message.position,
            )
        )

    tiers = {
        SYSTEM: system_tokens,
        PINNED: pinned_tokens,
        WORKING: working_tokens,
        LONG_TERM: long_term_tokens,
        SUMMARY: summary_tokens,
        SHORT_TERM: sum(message.token_count for message in kept),
        PRIMING: TOKENS_REPLY_PRIMING,
    }
    total = sum(tiers.values())
    warnings = []
    if total >= warning_at:
        warnings.append(
            f"The context takes {total} of {window} tokens ({total / window:.0%}), "
            f"at or over the warning threshold of {agent.warning_threshold:.0%}."
        )
    if trigger_budget == 0 and agent.history_tokens:
        warnings.append(
            f"Instructions, pinned messages and memory take {others} tokens, past the compaction trigger "
            f"({trigger_at}): no unpinned history fits."
        )
    if summarized.wanted:
        warnings.append(
            f"Messages up to position {summarized.wanted} are cut while a summary of them is written."
        )
    history_dropped = sorted(ranges.entries, key=lambda entry: entry.first_position)
    dropped = [*working_dropped, *long_term_dropped, *history_dropped]
    report = ContextReport(
        model=model,
        strategy=strategy,
        encoding=counter.encoding.name,
        exact=counter.exact and all(message.token_encoding == counter.encoding.name for message in history),
        context_window=info.context_window,
        reserved_output_tokens=agent.reserved_output_tokens,
        turn_input_limit=agent.turn_input_limit,
        window=window,
        total=total,
        free=window - total,
        tiers=tiers,
        warning_at=warning_at,
        trigger_at=trigger_at,
        target_at=target_at,
        compacted=any(entry.reason in COMPACTION_REASONS for entry in ranges.entries),
        warnings=warnings,
        conversation_tokens=agent.conversation_tokens,
        conversation_token_budget=budget,
        stored_messages=agent.message_count,
        included=included,
        dropped=dropped,
        summary=summarized.used,
        summary_wanted=summarized.wanted,
    )
    return AssembledContext(messages=messages, report=report)
