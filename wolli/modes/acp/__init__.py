"""``--mode acp``: Wolli as an agent of the Agent Client Protocol (editors: Zed, Toad, ...).

The fifth client of the runtime beside the TUI, line, json and RPC modes. JSON-RPC over
stdio; each ACP session is a live session of the host. docs/acp.md describes what is
offered and how editors are set up.
"""
