"""Wolli: a terminal coding agent with a Python extension API.

Public names resolve lazily (module ``__getattr__``) so ``import wolli`` costs almost
nothing: extensions import from here in every mode, including the headless ones.
"""

from __future__ import annotations

from .__about__ import __version__

# Neither ``typing`` nor ``importlib`` here: the command line imports this package before the
# module bundle (base/module_bundle.py) is in place, and what is imported then is not served.
TYPE_CHECKING = False
if TYPE_CHECKING:  # what editors and the type checker see behind the lazy names below
    from .agent.tool import ToolDefinition as ToolDefinition
    from .agent.tool import ToolResult as ToolResult
    from .config.keybindings import key_hint as key_hint
    from .config.keybindings import key_text as key_text
    from .config.keybindings import raw_key_hint as raw_key_hint
    from .extensions.api import ExtensionAPI as ExtensionAPI
    from .extensions.context import ExtensionUI as ExtensionUI
    from .extensions.hooks import define_hook as define_hook
    from .modes.interactive.highlighting import get_language_from_path as get_language_from_path
    from .modes.interactive.highlighting import highlight_code as highlight_code
    from .modes.tui.custom_editor import CustomEditor as CustomEditor
    from .runtime.handlers.hook_events import is_bash_tool_result as is_bash_tool_result
    from .runtime.handlers.hook_events import is_tool_call_event_type as is_tool_call_event_type
    from .runtime.host.handler_context import ExtensionContext as ExtensionContext
    from .tools.bash import create_bash_tool as create_bash_tool
    from .tools.edit import create_edit_tool as create_edit_tool
    from .tools.environment import Environment as Environment
    from .tools.environment import ExecOptions as ExecOptions
    from .tools.environment import ExecResult as ExecResult
    from .tools.environment import create_host_environment as create_host_environment
    from .tools.find import create_find_tool as create_find_tool
    from .tools.grep import create_grep_tool as create_grep_tool
    from .tools.ls import create_ls_tool as create_ls_tool
    from .tools.mutation_queue import with_file_mutation_queue as with_file_mutation_queue
    from .tools.read import create_read_tool as create_read_tool
    from .tools.truncate import DEFAULT_MAX_BYTES as DEFAULT_MAX_BYTES
    from .tools.truncate import DEFAULT_MAX_LINES as DEFAULT_MAX_LINES
    from .tools.truncate import TruncationResult as TruncationResult
    from .tools.truncate import format_size as format_size
    from .tools.truncate import truncate_head as truncate_head
    from .tools.truncate import truncate_line as truncate_line
    from .tools.truncate import truncate_tail as truncate_tail
    from .tools.write import create_write_tool as create_write_tool

# The extension author's surface (docs/extensions.md, "What `wolli` offers"), plus the types a
# custom tool is written with. Runtime internals (Agent, AgentHost, LiveSession,
# SessionManager) are imported from their own modules, not from here.
_EXPORTS: dict[str, str] = {
    "define_hook": "wolli.extensions.hooks",
    "ExtensionAPI": "wolli.extensions.api",
    "ExtensionContext": "wolli.runtime.host.handler_context",
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


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'wolli' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


__all__ = ["__version__", *_EXPORTS]
