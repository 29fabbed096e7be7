"""The agent loop: a prompt, then LLM turns and tool calls until the model stops.

Knows tools only as definitions (:mod:`.tool`), never the built-in ones; steering and
follow-up queues and abort live here. Emits the agent events of :mod:`.events`.
See docs/architecture.md §1 and §3.
"""
