"""Every tool, grouped by room, in the order they are listed."""

from tools.definitions import brains, context, graphs, memory, questions, searches

TOOLS = [*memory.TOOLS, *searches.TOOLS, *context.TOOLS, *graphs.TOOLS, *brains.TOOLS, *questions.TOOLS]
