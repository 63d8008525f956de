"""The MCP server, a process of its own (`manage.py mcp_serve`, docs/mcp.md)."""

from memsite.settings.env import env_int

# The port it listens on, beside the web server's PORT.
MEMSITE_MCP_PORT = env_int("MEMSITE_MCP_PORT", 8001, minimum=1)
# Threads that run its tools and token checks (the ORM is synchronous): at most this many
# database connections, and tool calls at once; further calls wait for a thread.
MEMSITE_MCP_THREADS = env_int("MEMSITE_MCP_THREADS", 8, minimum=1)
# Bodies over 1 MiB (writes' content) it holds at once (read, parsed, answered), in bytes: this
# many of the largest a call may send (a memory_write at MEMSITE_MAX_CONTENT_BYTES, as POST
# /api/tools/call/ takes it), or their bytes in smaller ones. Handling one costs three to four
# times its bytes, so 1 keeps a process within about 200 MiB of them; past it, 429 with
# Retry-After. Smaller calls have 16 MiB of their own (tools/mcp/app.py).
MEMSITE_MCP_LARGE_BODIES = env_int("MEMSITE_MCP_LARGE_BODIES", 1, minimum=1)
