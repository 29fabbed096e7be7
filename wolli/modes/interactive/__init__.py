"""What the interactive clients share: the built-in slash commands and what they need.

The full-screen TUI and line mode are two faces of the same product (RPC mode reuses the
model and thinking-level cycling). The commands
(``/model``, ``/resume``, ``/tree``, ...) are written once here against :class:`~.front.Front`,
the small set of things a client must be able to do (tell the user something, ask a
question, pick from a list, pick a session or a tree entry); each client implements it in
its own toolkit. Nothing here imports Textual or prompt_toolkit.
"""
