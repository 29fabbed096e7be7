"""The built-in slash commands every interactive client offers (TUI, line mode; RPC runs a
few): the table, what a command is, the face a client shows them, one module per topic."""
