"""Subagents: the ``task`` tool hands work to children, each its own live session.

``catalog`` finds the definitions, ``task_tool`` is what the model calls, ``child`` builds a
child session (its services, UI, tools, model and permission mode), ``runner`` runs one and
turns it into a tool result. docs/subagents.md describes the whole feature.
"""
