"""Shared helpers for the agent loop tests: a faux model, tools, an event recorder."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from tests.support.waiting import wait_until  # noqa: F401 (re-exported for the loop tests)
from wolli.agent.agent import Agent
from wolli.agent.tool import ToolDefinition, ToolResult
from wolli.ai.providers.faux import FauxProvider
from wolli.ai.types import Context, TextContent, ToolResultMessage, UserMessage, content_text

DEADLINE = 5.0


class Recorder:
    """Collects every agent event in emission order."""

    def __init__(self, agent: Agent) -> None:
        self.events: list[Any] = []
        agent.subscribe(self.events.append)

    def types(self) -> list[str]:
        return [e.type for e in self.events]

    def of(self, kind: str) -> list[Any]:
        return [e for e in self.events if e.type == kind]

    def index(self, kind: str, predicate: Callable[[Any], bool] = lambda e: True) -> int:
        for i, event in enumerate(self.events):
            if event.type == kind and predicate(event):
                return i
        raise AssertionError(f"no {kind} event matching")


def make_agent(faux: FauxProvider, tools: list[ToolDefinition] | None = None, **kwargs: Any) -> Agent:
    return Agent(model=faux.model, tools=tools or [], **kwargs)


def make_tool(
    name: str,
    execute: Callable[..., Any],
    parameters: type[BaseModel] | dict[str, Any] | None = None,
    **kwargs: Any,
) -> ToolDefinition:
    return ToolDefinition(
        name=name,
        description=f"The {name} tool.",
        parameters=parameters or {"type": "object", "properties": {}},
        execute=execute,
        **kwargs,
    )


def text_result(text: str, **kwargs: Any) -> ToolResult:
    return ToolResult(content=[TextContent(text=text)], **kwargs)



async def run(coro: Any, timeout: float = DEADLINE) -> Any:
    """Await with a deadline, so a broken loop fails instead of hanging the suite."""
    return await asyncio.wait_for(coro, timeout)


def texts(context: Context) -> list[tuple[str, str]]:
    """(role, text) of every message a model call was sent."""
    out = []
    for message in context.messages:
        if isinstance(message, UserMessage | ToolResultMessage):
            out.append((message.role, content_text(message.content)))
        else:
            out.append((message.role, message.text()))
    return out


def tool_results(context: Context) -> list[ToolResultMessage]:
    return [m for m in context.messages if isinstance(m, ToolResultMessage)]
