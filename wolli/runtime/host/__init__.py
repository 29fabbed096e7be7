"""The agent host: everything one agent name owns (settings, models, extensions, MCP servers,
the permission rules) and the lifecycle of its live sessions."""
