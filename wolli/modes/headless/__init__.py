"""The headless modes: ``-p`` (print the final answer), ``--mode json`` (every event as a
JSON line), and the one-shot commands that need no session (``--list-models``, ``--export``)."""
