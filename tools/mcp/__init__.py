"""The MCP server: the registry's tools and memory's nodes over MCP's streamable HTTP, served by
uvicorn in a process of its own (`manage.py mcp_serve`). Explained in docs/mcp.md."""
