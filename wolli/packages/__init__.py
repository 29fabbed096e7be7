"""Packages: extensions people share, installed into an environment Wolli manages per agent.

A *Wolli package* is a Python distribution that declares what it brings through entry
points (``wolli.extensions``, ``wolli.hooks``, ``wolli.tools``, ``wolli.resources``); a
*Claude Code plugin* is a folder with ``.claude-plugin/plugin.json``. Both are recorded in
the agent's settings (``packages``) with a lock of exact versions and hashes beside it
(``packages.lock.json``). This layer reads and writes those records and runs the installer;
the runtime turns what is installed into extensions, resources, MCP servers and hooks.
See docs/packages.md.
"""
