from memory.services.archives import project_export, project_import
from memory.services.documents import document_write, folder_make
from memory.services.nodes import (
    Keep,
    NodeSpec,
    node_bulk_create,
    node_content_set,
    node_create,
    node_delete,
    node_move,
    node_restore,
    node_update,
)
from memory.services.searches import (
    search_advance,
    search_cancel,
    search_question_answer,
    search_run,
    search_start,
    searches_sweep_stale,
)

__all__ = [
    "Keep",
    "NodeSpec",
    "document_write",
    "folder_make",
    "node_bulk_create",
    "node_content_set",
    "node_create",
    "node_delete",
    "node_move",
    "node_restore",
    "node_update",
    "project_export",
    "project_import",
    "search_advance",
    "search_cancel",
    "search_question_answer",
    "search_run",
    "search_start",
    "searches_sweep_stale",
]
