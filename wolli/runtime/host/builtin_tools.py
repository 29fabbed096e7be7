"""The built-in tool set for one working directory."""

from __future__ import annotations

from collections.abc import Callable

from ...agent.tool import ToolDefinition
from ...tools.environment import Environment

BUILTIN_TOOL_NAMES = ("read", "bash", "edit", "write", "grep", "find", "ls")
DEFAULT_ACTIVE_TOOLS = BUILTIN_TOOL_NAMES


def _factories() -> dict[str, Callable[[Environment], ToolDefinition]]:
    from ...tools.bash import create_bash_tool
    from ...tools.edit import create_edit_tool
    from ...tools.find import create_find_tool
    from ...tools.grep import create_grep_tool
    from ...tools.ls import create_ls_tool
    from ...tools.read import create_read_tool
    from ...tools.write import create_write_tool

    return {
        "read": create_read_tool,
        "bash": create_bash_tool,
        "edit": create_edit_tool,
        "write": create_write_tool,
        "grep": create_grep_tool,
        "find": create_find_tool,
        "ls": create_ls_tool,
    }


def create_builtin_tools(env: Environment, shell_env: Environment | None = None) -> list[ToolDefinition]:
    """The built-ins over ``env``; ``bash`` over ``shell_env`` when given (a client terminal)."""
    factories = _factories()
    return [factories[name](shell_env if name == "bash" and shell_env is not None else env)
            for name in BUILTIN_TOOL_NAMES]


def parse_tool_list(value: str) -> list[str]:
    """``--tools read,bash`` -> names (validated later against the tools that exist)."""
    return [part.strip() for part in value.split(",") if part.strip()]
