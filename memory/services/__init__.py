from memory.services.archives import project_export, project_import
from memory.services.nodes import (
    NodeSpec,
    node_bulk_create,
    node_content_set,
    node_create,
    node_delete,
    node_move,
    node_update,
)

__all__ = [
    "NodeSpec",
    "node_bulk_create",
    "node_content_set",
    "node_create",
    "node_delete",
    "node_move",
    "node_update",
    "project_export",
    "project_import",
]
