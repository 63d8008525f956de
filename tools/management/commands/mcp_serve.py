"""`manage.py mcp_serve`: the MCP server (tools/mcp/) under uvicorn, a process of its own beside
gunicorn's, at http://<host>:<port>/mcp. Explained in docs/mcp.md."""

import gc
import logging

import uvicorn
from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from tools.mcp.app import PATH, application

# How long a worker thread keeps its database connection where the settings keep none (SQLite).
KEEP_CONNECTIONS_S = 600


def keep_connections() -> None:
    """Connections outlive a call, as on PostgreSQL (DATABASE_URL keeps them 60 s): the server's
    threads are few and long-lived (MEMSITE_MCP_THREADS), and opening SQLite's for each call
    (its PRAGMAs) would cost more than most calls. Set before any connection is opened."""
    for database in settings.DATABASES.values():
        if not database.get("CONN_MAX_AGE"):
            database["CONN_MAX_AGE"] = KEEP_CONNECTIONS_S


class Command(BaseCommand):
    help = "Serve the MCP server (streamable HTTP, stateless) at /mcp with uvicorn."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1)")
        parser.add_argument("--port", type=int, default=None, help="the port (default MEMSITE_MCP_PORT, 8001)")
        parser.add_argument(
            "--keep-alive", type=int, default=5, help="seconds an idle connection is kept (default 5, as gunicorn's)"
        )

    def handle(self, *args: object, host: str, port: int | None, keep_alive: int, **options: object) -> None:
        port = port or settings.MEMSITE_MCP_PORT
        keep_connections()
        # The SDK logs each request at INFO, as uvicorn's access log does already.
        logging.getLogger("mcp").setLevel(logging.WARNING)
        app = application()
        self.stdout.write(f"MCP server at http://{host}:{port}{PATH}")
        # What is loaded by now lives as long as the process: frozen, it is left out of the
        # collector's full passes, as in gunicorn's processes (memsite/wsgi.py).
        gc.freeze()
        # The proxy's X-Forwarded-* are believed from FORWARDED_ALLOW_IPS, which uvicorn reads
        # as gunicorn does.
        uvicorn.run(
            app,
            host=host,
            port=port,
            lifespan="on",
            # The settings' level (MEMSITE_LOG_LEVEL), for uvicorn's own logs and its access log.
            log_level=logging.getLevelName(logging.getLogger().getEffectiveLevel()).lower(),
            timeout_keep_alive=keep_alive,
            timeout_graceful_shutdown=30,
            server_header=False,
        )
