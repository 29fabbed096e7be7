"""The built-in tool set for one working directory.

A session offers every built-in from the first request, but a tool's module loads with its
first call: the definitions handed out carry the tool's words (``tools/cards.py``) and its
written-out schema, and their ``execute`` builds the real tool then. A run that calls no
tool never imports the seven modules (~15-30 ms of each start).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...agent.tool import ToolDefinition, call_maybe_async
from ...tools.builtin_parameters import builtin_parameters
from ...tools.cards import CARDS
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
    return [_deferred(name, shell_env if name == "bash" and shell_env is not None else env)
            for name in BUILTIN_TOOL_NAMES]


def _deferred(name: str, env: Environment) -> ToolDefinition:
    """The ``name`` tool over ``env``, its module imported on the first call."""
    built: list[ToolDefinition] = []

    def real() -> ToolDefinition:
        if not built:
            built.append(_factories()[name](env))
        return built[0]

    async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any, ctx: Any = None) -> object:
        return await call_maybe_async(real().execute, tool_call_id, params, signal, on_update, ctx)

    card = CARDS[name]
    return ToolDefinition(
        name=name,
        label=card.label,
        description=card.description,
        parameters=builtin_parameters(name),
        execute=execute,
        prompt_snippet=card.snippet,
        prompt_guidelines=list(card.guidelines),
        # edit accepts older argument shapes (tools/edit.py); the others take them as sent
        prepare_arguments=(lambda args: _prepare(real(), args)) if name == "edit" else None,
    )


def _prepare(tool: ToolDefinition, args: object) -> object:
    return tool.prepare_arguments(args) if tool.prepare_arguments is not None else args


def parse_tool_list(value: str) -> list[str]:
    """``--tools read,bash`` -> names (validated later against the tools that exist)."""
    return [part.strip() for part in value.split(",") if part.strip()]
