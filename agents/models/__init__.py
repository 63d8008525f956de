"""The agents app's data: agents and their conversations (seed 003), brains (seed 002),
reasoning graphs (seed 004)."""

from agents.models.agents import (
    RESULT_ROLES,
    Agent,
    Checkpoint,
    Message,
    Role,
    Strategy,
    Summary,
    SummaryStatus,
)
from agents.models.brains import (
    Brain,
    BrainExtra,
    Explored,
    Goal,
    Neuron,
    Record,
    RecordKind,
    Synapse,
    TickRun,
)
from agents.models.graphs import Graph, GraphEdge, GraphNode, GraphOp, NodeKind, NodeState, Turn

__all__ = [
    "RESULT_ROLES",
    "Agent",
    "Brain",
    "BrainExtra",
    "Checkpoint",
    "Explored",
    "Goal",
    "Graph",
    "GraphEdge",
    "GraphNode",
    "GraphOp",
    "Message",
    "Neuron",
    "NodeKind",
    "NodeState",
    "Record",
    "RecordKind",
    "Role",
    "Strategy",
    "Summary",
    "SummaryStatus",
    "Synapse",
    "TickRun",
    "Turn",
]
