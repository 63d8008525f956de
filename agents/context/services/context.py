"""Context assembly as the API and the dashboard ask for it:
`agents.context.selectors.assembly.context_assemble`, which writes nothing, and the summary its
cut wants queued to be written."""

import logging
from typing import Any

from agents.context.models import Agent
from agents.context.selectors.assembly import AssembledContext, context_assemble
from agents.context.services.summaries import summary_request
from memsite.errors import ServiceUnavailable

logger = logging.getLogger(__name__)


def context_build(*, agent: Agent, **options: Any) -> AssembledContext:
    """The messages for the agent's next model call and their report (options as
    `context_assemble` takes them)."""
    assembled = context_assemble(agent=agent, **options)
    if assembled.report.summary_wanted:
        try:
            summary_request(agent=agent, through=assembled.report.summary_wanted)
        except ServiceUnavailable:
            # A read: the cut is dropped, as until any summary is written, and the next
            # assembly asks again.
            logger.warning("Summary of agent %s not queued: the task queue is unavailable.", agent.pk)
    return assembled
