"""The MCP server, a process of its own (`manage.py mcp_serve`, docs/mcp.md)."""

from memsite.settings.env import env_int

# The port it listens on, beside the web server's PORT.
MEMSITE_MCP_PORT = env_int("MEMSITE_MCP_PORT", 8001, minimum=1)
# Threads that run its tools and token checks (the ORM is synchronous): at most this many
# database connections, and tool calls at once; further calls wait for a thread.
MEMSITE_MCP_THREADS = env_int("MEMSITE_MCP_THREADS", 8, minimum=1)
# Request bodies it holds at once (read, parsed, answered), in bytes: this many of the largest a
# call may send (a memory_write at MEMSITE_MAX_CONTENT_BYTES, as POST /api/tools/call/ takes it),
# or their bytes in smaller ones, each counted as at least 64 KiB. Past it, 429 with Retry-After.
MEMSITE_MCP_LARGE_BODIES = env_int("MEMSITE_MCP_LARGE_BODIES", 2, minimum=1)
