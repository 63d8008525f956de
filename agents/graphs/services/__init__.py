from agents.graphs.services.graphs import (
    graph_create,
    graph_memorize,
    graph_recall,
    graph_snapshot_import,
    graph_work,
    graphs_sweep_stale,
)

__all__ = [
    "graph_create",
    "graph_memorize",
    "graph_recall",
    "graph_snapshot_import",
    "graph_work",
    "graphs_sweep_stale",
]
