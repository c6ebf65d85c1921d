"""The front doors of scirag: a REST API under /v1, an MCP server (stdio and
streamable HTTP at /mcp) and a web page at /, all over one thin service layer that
calls the SQL API as the caller's database role. Retrieval, scope and answers live in
the database; nothing here decides what a caller may see.

  service.py   the one service contract: a psycopg pool, SET ROLE per request, the SQL calls
  keys.py      API keys (hashed in scirag.api_keys) -> database role, per-key rate limits
  events.py    an answer as typed events (SSE) and their aggregate (JSON)
  app.py       create_app(): FastAPI (REST, problem+json, request ids, access log), /mcp, /
  mcp_tools.py the MCP tool set (retrieve, answer, get_chunk, get_document, current_scope)
  cli.py       `scirag serve`, `scirag mcp`, `scirag keys add|list|revoke`
"""
