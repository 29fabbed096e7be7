"""Wolli: a terminal coding agent with a Python extension API.

Public names resolve lazily (module ``__getattr__``) so ``import wolli`` costs almost
nothing: extensions import from here in every mode, including the headless ones.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .__about__ import __version__

if TYPE_CHECKING:  # what the type checker sees behind the lazy names below
    from .extensions.api import ExtensionAPI as ExtensionAPI
    from .extensions.context import ExtensionUI as ExtensionUI
    from .runtime.host.agent_host import ExtensionContext as ExtensionContext

# The extension author's surface (docs/extensions.md, "What `wolli` offers"), plus the types a
# custom tool is written with. Runtime internals (Agent, AgentHost, LiveSession,
# SessionManager) are imported from their own modules, not from here.
_EXPORTS: dict[str, str] = {
    "define_hook": "wolli.extensions.hooks",
    "ExtensionAPI": "wolli.extensions.api",
    "ExtensionContext": "wolli.runtime.host.agent_host",
    "ExtensionUI": "wolli.extensions.context",
    "is_tool_call_event_type": "wolli.runtime.handlers.hook_events",
    "is_bash_tool_result": "wolli.runtime.handlers.hook_events",
    "with_file_mutation_queue": "wolli.tools.mutation_queue",
    "truncate_head": "wolli.tools.truncate",
    "truncate_tail": "wolli.tools.truncate",
    "truncate_line": "wolli.tools.truncate",
    "format_size": "wolli.tools.truncate",
    "DEFAULT_MAX_BYTES": "wolli.tools.truncate",
    "DEFAULT_MAX_LINES": "wolli.tools.truncate",
    "TruncationResult": "wolli.tools.truncate",
    "create_host_environment": "wolli.tools.environment",
    "Environment": "wolli.tools.environment",
    "ExecOptions": "wolli.tools.environment",
    "ExecResult": "wolli.tools.environment",
    "create_read_tool": "wolli.tools.read",
    "create_write_tool": "wolli.tools.write",
    "create_edit_tool": "wolli.tools.edit",
    "create_bash_tool": "wolli.tools.bash",
    "create_grep_tool": "wolli.tools.grep",
    "create_find_tool": "wolli.tools.find",
    "create_ls_tool": "wolli.tools.ls",
    "ToolDefinition": "wolli.agent.tool",
    "key_hint": "wolli.config.keybindings",
    "key_text": "wolli.config.keybindings",
    "raw_key_hint": "wolli.config.keybindings",
    "highlight_code": "wolli.modes.interactive.highlighting",
    "get_language_from_path": "wolli.modes.interactive.highlighting",
    "CustomEditor": "wolli.modes.tui.custom_editor",
    "ToolResult": "wolli.agent.tool",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'wolli' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


__all__ = ["__version__", *_EXPORTS]
