"""The agents app's data: agents and their conversations (seed 003), brains (seed 002)."""

from agents.models.agents import Agent, Checkpoint, Message, Role, Strategy, Summary, SummaryStatus
from agents.models.brains import Brain, Explored, Goal, Neuron, Record, RecordKind, Synapse, TickRun

__all__ = [
    "Agent",
    "Brain",
    "Checkpoint",
    "Explored",
    "Goal",
    "Message",
    "Neuron",
    "Record",
    "RecordKind",
    "Role",
    "Strategy",
    "Summary",
    "SummaryStatus",
    "Synapse",
    "TickRun",
]
