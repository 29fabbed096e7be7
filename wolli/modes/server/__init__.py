"""``wolli serve``: one resident process hosting the runtime for several clients (docs/server.md)."""
