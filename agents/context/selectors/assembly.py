"""Context assembly (seed 003): the messages of one model call of an agent, within the model's
context window less the output reserved for the reply, and a report of how they were chosen.
Its tiers, compaction and strategies are explained in docs/context.md."""

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from django.conf import settings

from agents.context import selectors
from agents.context.logic.assembly import (
    IMPORTANCE_LOOKBACK,
    LONG_TERM_HEADING,
    SHORT_TERM,
    WORKING_HEADING,
    AssembledContext,
    Assembly,
    ContextReport,
    ContextRequest,
    Conversation,
    Dropped,
    History,
    HistoryBudget,
    Ranges,
    TokenBudgetExceeded,
    compaction_cut,
    context_assembled,
    context_request,
    context_window,
    fixed_tiers,
    history_budget,
    importance_keep,
    summarized_history,
    units_of,
)
from agents.context.logic.instructions import instructions_render
from agents.context.models import Agent, Strategy
from agents.context.selectors.messages import StoredMessage
from memsite.errors import InvalidInput
from memsite.llm.config import llm_config
from memsite.llm.tokens import TokenCounter, counter_for_model

# Imported from here by the services, the dashboard, the brains' prompts and the benchmark.
__all__ = [
    "LONG_TERM_HEADING",
    "SHORT_TERM",
    "WORKING_HEADING",
    "AssembledContext",
    "ContextReport",
    "Dropped",
    "TokenBudgetExceeded",
    "context_assemble",
]


@dataclass(frozen=True)
class _Reading:
    """What a strategy reads the history with."""

    agent: Agent
    request: ContextRequest
    counter: TokenCounter
    pinned: list[StoredMessage]
    budget: HistoryBudget
    ranges: Ranges


def _whole(agent: Agent) -> list[StoredMessage]:
    return selectors.message_history(agent=agent, start_position=1, through=agent.message_count)


def _sequential(reading: _Reading) -> History:
    """fifo and sliding_window: one starting point; everything after it is kept."""
    agent, budget, ranges = reading.agent, reading.budget, reading.ranges
    start = selectors.HistoryPoint(position=1, offset=0)
    if reading.request.strategy == Strategy.SLIDING_WINDOW:
        turn = selectors.message_turn_start(agent=agent, turns=reading.request.turns, through=agent.message_count)
        if turn is not None and turn.position > start.position:
            ranges.span("outside_window", start.position, turn.position - 1, turn.offset)
            start = turn
    if agent.history_tokens > budget.trigger:
        cut = selectors.message_history_point(
            agent=agent,
            offset=compaction_cut(agent.history_tokens, budget),
            through=agent.message_count,
        )
        if cut is None:
            tokens = agent.history_tokens - start.offset
            ranges.span("compaction", start.position, agent.message_count, tokens)
            return History(kept=[])
        if cut.position > start.position:
            ranges.span("compaction", start.position, cut.position - 1, cut.offset - start.offset)
            start = cut
    history = selectors.message_history(agent=agent, start_position=start.position, through=agent.message_count)
    orphans, units = units_of(history)
    ranges.orphans(orphans)
    return History(kept=[message for unit in units for message in unit.messages])


def _by_importance(reading: _Reading) -> History:
    agent, budget, ranges = reading.agent, reading.budget, reading.ranges
    if agent.history_tokens <= budget.trigger:
        return History(kept=_whole(agent))
    keep = agent.history_tokens - compaction_cut(agent.history_tokens, budget)
    horizon = selectors.message_history_point(
        agent=agent,
        offset=max(0, agent.history_tokens - IMPORTANCE_LOOKBACK * budget.trigger),
        through=agent.message_count,
    )
    if keep <= 0 or horizon is None:
        ranges.span("compaction", 1, agent.message_count, agent.history_tokens)
        return History(kept=[])
    ranges.span("beyond_lookback", 1, horizon.position - 1, horizon.offset)
    # Scored without their contents; only the kept are then read whole.
    scored = selectors.message_scores(agent=agent, start_position=horizon.position, through=agent.message_count)
    orphans, units = units_of(scored)
    ranges.orphans(orphans)
    if not units:
        return History(kept=[])
    kept = importance_keep(units=units, pinned=reading.pinned, budget=keep, ranges=ranges)
    return History(kept=selectors.message_rows(agent=agent, positions=kept))


def _summarized(reading: _Reading) -> History:
    """The history `fifo` keeps, the written summary that reaches furthest into what it cuts,
    and the position a summary should reach when none written does. Tool results at the cut
    are summarized with their call."""
    agent, budget = reading.agent, reading.budget
    if agent.history_tokens <= budget.trigger:
        return History(kept=_whole(agent))
    cut = selectors.message_history_point(
        agent=agent,
        offset=compaction_cut(agent.history_tokens, budget),
        through=agent.message_count,
    )
    kept: list[StoredMessage] = []
    end = agent.message_count + 1, agent.history_tokens  # where the kept history starts
    if cut is not None:
        history = selectors.message_history(agent=agent, start_position=cut.position, through=agent.message_count)
        orphans, units = units_of(history)
        start = units[0].position if units else agent.message_count + 1
        end = start, cut.offset + sum(message.token_count for message in orphans)
        kept = [message for unit in units for message in unit.messages]
    wanted = end[0] - 1
    return summarized_history(
        reading.counter,
        kept=kept,
        summary=selectors.summary_latest(agent=agent, through=wanted),
        room=budget.summary_room,
        wanted=wanted,
        cut_offset=end[1],
        ranges=reading.ranges,
    )


STRATEGIES: dict[str, Callable[[_Reading], History]] = {
    Strategy.FIFO: _sequential,
    Strategy.SLIDING_WINDOW: _sequential,
    Strategy.IMPORTANCE: _by_importance,
    Strategy.SUMMARIZE: _summarized,
}


def _conversation(agent: Agent) -> Conversation:
    return Conversation(
        reserved_output_tokens=agent.reserved_output_tokens,
        turn_input_limit=agent.turn_input_limit,
        warning_threshold=agent.warning_threshold,
        compaction_trigger=agent.compaction_trigger,
        compaction_target=agent.compaction_target,
        conversation_token_budget=agent.conversation_token_budget,
        conversation_tokens=agent.conversation_tokens,
        history_tokens=agent.history_tokens,
        message_count=agent.message_count,
    )


def _as_of(agent: Agent, through: int) -> Agent:
    """The agent's row with its counters as they stood once message `through` was written: what
    a reply to that message reads, whatever was appended since. Never saved."""
    if isinstance(through, bool) or not isinstance(through, int) or not 0 <= through <= agent.message_count:
        raise InvalidInput(f"through must be a message position from 0 to {agent.message_count}.")
    every, unpinned = selectors.message_tokens_after(agent=agent, position=through)
    agent.message_count = through
    agent.conversation_tokens -= every
    agent.history_tokens -= unpinned
    return agent


def context_assemble(
    *,
    agent: Agent,
    model: str | None = None,
    strategy: str | None = None,
    turns: int | None = None,
    working_memory: Sequence[str] = (),
    long_term: Sequence[str] = (),
    long_term_budget: int | None = None,
    through: int | None = None,
) -> AssembledContext:
    """The messages for one call of `agent` to `model` (default: the agent's) with `strategy`
    (default: the agent's); `turns` overrides the agent's `window_turns` for sliding_window;
    `long_term_budget` caps long-term memory in tokens (default: a quarter of the window);
    `through` ends the conversation at that message (default: the newest)."""
    agent = selectors.agent_fresh(agent=agent)
    if through is not None:
        agent = _as_of(agent, through)
    request = context_request(
        model=agent.model if model is None else model,
        strategy=agent.strategy if strategy is None else strategy,
        turns=agent.window_turns if turns is None else turns,
        working_memory=working_memory,
        long_term=long_term,
        long_term_budget=long_term_budget,
    )
    context_size = llm_config().model_info(request.model).context_window
    counter = counter_for_model(request.model)
    conversation = _conversation(agent)
    window = context_window(model=request.model, context_window=context_size, conversation=conversation)
    tiers = fixed_tiers(
        counter,
        window=window,
        request=request,
        instructions=instructions_render(template=agent.instructions, variables=agent.context_variables),
        pinned=selectors.message_pinned(agent=agent, through=agent.message_count),
    )
    budget = history_budget(
        window=window,
        strategy=request.strategy,
        others=tiers.others,
        summary_max_tokens=settings.MEMSITE_SUMMARY_MAX_TOKENS,
    )
    ranges = Ranges([message.position for message in tiers.pinned])
    reading = _Reading(agent, request, counter, tiers.pinned, budget, ranges)
    history = STRATEGIES[request.strategy](reading)
    assembly = Assembly(request, conversation, window, tiers, budget, history, ranges)
    return context_assembled(counter, assembly)
