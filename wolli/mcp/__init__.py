"""MCP: the servers a user already runs, as Wolli tools, ``@`` resources and ``/`` prompts.

Only :mod:`.sdk` imports the MCP SDK; the rest talks to the small interface of
:mod:`.types`. Configuration and behaviour: docs/mcp.md.
"""
