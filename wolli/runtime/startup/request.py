"""What a front end asks the runtime for, and how start-up says no.

Kept apart from :mod:`.startup` and free of heavy imports, so the command line and the TUI
can build a request (and paint a first frame) before the runtime is imported.
"""

from __future__ import annotations

import os
from dataclasses import field
from typing import TYPE_CHECKING

from ...base.records import record

if TYPE_CHECKING:
    from ...ai.types import ThinkingLevel
    from ...extensions.context import ExtensionMode

USAGE = 2  # exit code for a mistake on the command line
FAILURE = 1
# Prompt text from outside a keyboard (piped stdin, a line of it, the external editor's file)
# is taken up to this size; the rest is left out, with a note.
PROMPT_INPUT_LIMIT = 8 * 1024 * 1024


class StartupError(Exception):
    """Start-up cannot go on. ``warnings`` are the configuration problems found before it,
    shown first: they often explain the failure (a broken models.json, then "no model")."""

    def __init__(self, message: str, exit_code: int = FAILURE) -> None:
        super().__init__(message)
        self.exit_code = exit_code
        self.warnings: list[str] = []


@record
class StartupRequest:
    """What the user asked for, as parsed from the command line (or given by a program)."""

    mode: ExtensionMode
    cwd: str = field(default_factory=os.getcwd)
    agent: str | None = None
    model: str | None = None  # provider/id[:thinking], or part of an id
    provider: str | None = None
    api_key: str | None = None
    thinking: ThinkingLevel | None = None
    tools: list[str] | None = None  # None: every tool; []: none
    session: str | None = None
    continue_recent: bool = False
    no_session: bool = False
    system_prompt: str | None = None
    append_system_prompt: str | None = None
    files: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    stdin_text: str = ""
    # ``--name[=value]`` options the command line did not know: extension flags, or typos.
    unknown_options: dict[str, str | bool] = field(default_factory=dict)
    # A bare ``--name`` followed by a word: that word's place ("messages"/"files", index); it is
    # the value of ``--name`` when an extension registered it as a string flag.
    option_followers: dict[str, tuple[str, int]] = field(default_factory=dict)
    # Every option the command line knows, for "did you mean" suggestions.
    known_options: list[str] = field(default_factory=list)
    # ``-e/--extension PATH`` (repeatable) and ``--no-extensions``.
    extension_paths: list[str] = field(default_factory=list)
    no_extensions: bool = False
    # ``--tool PATH`` (repeatable): tool factories for this run.
    tool_paths: list[str] = field(default_factory=list)
    # Headless modes cannot run without a model and key, nor without a message; the TUI
    # shows how to add a model and waits for input.
    require_model: bool = True
    require_prompt: bool = False
    # ``wolli -r`` in the TUI: open the session picker once the app is up.
    pick_session: bool = False
    # MCP: ``--mcp-config`` (repeatable), ``--strict-mcp-config`` (only those), and
    # ``--approve-project-mcp`` (run the project's .mcp.json servers without asking).
    mcp_configs: list[str] = field(default_factory=list)
    # Claude Code settings files whose ``hooks`` run in this process (docs/packages.md).
    claude_settings: list[str] = field(default_factory=list)
    strict_mcp_config: bool = False
    approve_project_mcp: bool = False
    # ``--permission-mode`` and the rules of ``--allowed-tools`` / ``--disallowed-tools``
    # (each value may hold several rules, comma- or space-separated).
    permission_mode: str | None = None
    allowed_tools: list[str] = field(default_factory=list)
    disallowed_tools: list[str] = field(default_factory=list)
