"""The ``task`` tool: the model hands a piece of work to a named subagent.

Arguments are Claude Code's (``subagent_type``, ``description``, ``prompt``), so prompts and
habits written for its Task tool carry over. The description lists every subagent there is
for the session's folder, with its own description, so the model can choose. Several calls
in one answer run at once (the agent loop runs tool calls in parallel), at most settings
``subagents.maxParallel`` per session at a time; the others wait their turn.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from ...agent.tool import LazyParameters, OnUpdate, ToolDefinition, ToolResult
from .catalog import GENERAL_PURPOSE

if TYPE_CHECKING:
    from ...ai.abort import AbortSignal
    from ...config.settings import Settings
    from ...config.subagent_files import SubagentDefinition
    from ..live.live_session import LiveSession
    from .child import SubagentHost
    from .task_params import TaskParams

TASK_TOOL = "task"
DEFAULT_MAX_PARALLEL = 4
_MAX_LISTED = 100
_MAX_DESCRIPTION = 400


# Written out so the first request needs neither pydantic nor the class (``task_params``);
# tests/unit/test_tool_schemas.py keeps it equal to what TaskParams generates.
TASK_SCHEMA: dict[str, Any] = {
    "properties": {
        "subagent_type": {
            "default": GENERAL_PURPOSE.name,
            "description": "The name of the subagent to hand the task to (one of those listed in this tool's description).",
            "type": "string",
        },
        "description": {
            "description": "A short (3-5 word) label for the task, shown to the user.",
            "type": "string",
        },
        "prompt": {
            "description": "The task for the subagent, complete and self-contained: it sees nothing of this "
                           "conversation, only this text.",
            "type": "string",
        },
    },
    "required": ["description", "prompt"],
    "type": "object",
}


def _task_params() -> type[TaskParams]:
    from .task_params import TaskParams

    return TaskParams


def describe(definitions: list[SubagentDefinition]) -> str:
    listed = "\n".join(f"- {d.name}: {_short(d.description)}" for d in definitions[:_MAX_LISTED])
    more = f"\n- ... and {len(definitions) - _MAX_LISTED} more" if len(definitions) > _MAX_LISTED else ""
    return (
        "Hand a self-contained piece of work to a subagent: a fresh agent with its own context, instructions "
        "and tools, which works on its own and returns only its final answer (and the files it changed). "
        "Use it for searches and multi-step work whose intermediate output you do not need, and call it several "
        "times in one answer to run independent tasks in parallel. The subagent sees only your prompt: include "
        "every detail it needs, and say what its answer should contain. Its answer is not shown to the user: "
        "tell the user what matters.\n\n"
        f"Available subagents (subagent_type):\n{listed}{more}"
    )


def _short(text: str) -> str:
    return text if len(text) <= _MAX_DESCRIPTION else text[: _MAX_DESCRIPTION - 1] + "…"


class ParallelLimit:
    """At most ``subagents.maxParallel`` children of one session at a time."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._semaphore: asyncio.Semaphore | None = None
        self._size = 0

    def get(self) -> asyncio.Semaphore:
        value = (self._settings.get("subagents") or {}).get("maxParallel")
        size = value if isinstance(value, int) and value > 0 else DEFAULT_MAX_PARALLEL
        if self._semaphore is None or size != self._size:
            self._semaphore, self._size = asyncio.Semaphore(size), size
        return self._semaphore


def create_task_tool(host: SubagentHost, session: LiveSession) -> ToolDefinition:
    """The ``task`` tool of one (top-level) session."""
    definitions = list(host.subagents.definitions(session.cwd).values())
    limit = ParallelLimit(host.settings)

    async def execute(tool_call_id: str, params: TaskParams, signal: AbortSignal | None, on_update: OnUpdate,
                      ctx: object) -> ToolResult:
        from .runner import run_child

        definition = host.subagents.find(session.cwd, params.subagent_type)
        if definition is None:
            names = ", ".join(sorted(host.subagents.definitions(session.cwd))) or "none"
            raise ValueError(f"no subagent named {params.subagent_type!r}; available: {names}")
        if not params.prompt.strip():
            raise ValueError("the prompt is empty: give the subagent its whole task")
        async with limit.get():
            if signal is not None and signal.aborted:
                raise RuntimeError("aborted before the subagent started")
            return await run_child(host, session, definition, prompt=params.prompt, description=params.description,
                                   tool_call_id=tool_call_id, signal=signal, on_update=on_update)

    return ToolDefinition(
        name=TASK_TOOL,
        label="Task",
        description=describe(definitions),
        parameters=LazyParameters(TASK_SCHEMA, _task_params),
        execute=execute,
        prompt_snippet="hand a self-contained task to a subagent (several calls run in parallel)",
        source="builtin",
        # The call itself changes nothing: every call of the child passes the child's own
        # gate, in a mode no looser than the parent's (so it runs in plan mode too).
        read_only=True,
    )
