"""The memory tools swarm nodes call: one registry, served as OpenAI function definitions, a
call endpoint and the MCP server. Explained in docs/tools.md."""
