"""The clients of the runtime: ``tui/``, ``line/``, ``rpc/``, ``headless/``.

What the interactive clients share is in ``interactive/``, what every client shares in
``common/``; a client never imports another (docs/architecture.md §2).
"""
