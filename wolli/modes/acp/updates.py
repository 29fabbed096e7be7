"""Session events as ACP ``session/update`` notifications, in order, text batched.

:class:`UpdateStream` is one session's outbox: the runtime's observers call it
synchronously (once per streamed token), it queues the update and one writer task sends
them in order. Consecutive text chunks of one kind that piled up while a send was under
way go out as one chunk, so a fast stream costs a notification per write the client can
take, not per token (the batching the RPC and TUI clients do in their own way).

Tool calls: ``describe_call`` (the permission layer's description, already in ACP's kinds)
gives the kind, title and paths; edits and writes carry a ``diff`` from what the session's
file environment saw (:class:`~.environment.FileLog`); results carry their text and
``rawOutput``. A todo list (the ``todo`` tool's ``details.items``) and a presented plan
(``present_plan``) become a ``plan``.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

from ...permissions.prompt import describe_call
from .sdk import SessionUpdate, ToolCallContent, schema

log = logging.getLogger("wolli.acp")

Send = Callable[[SessionUpdate], Awaitable[None]]
_TEXT_KINDS = ("agent_message_chunk", "agent_thought_chunk", "user_message_chunk")
_CHUNK_TYPES = {
    "agent_message_chunk": schema.AgentMessageChunk,
    "agent_thought_chunk": schema.AgentThoughtChunk,
    "user_message_chunk": schema.UserMessageChunk,
}


class UpdateStream:
    """One session's updates to the client, in order, text chunks merged while waiting."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self._items: deque[list[Any] | SessionUpdate] = deque()  # [kind, [pieces]] of text, or an update model
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._task: asyncio.Task[None] | None = None
        self.closed = False

    def text(self, kind: str, text: str) -> None:
        if not text or self.closed:
            return
        last = self._items[-1] if self._items else None
        if isinstance(last, list) and last[0] == kind:
            last[1].append(text)
        else:
            self._items.append([kind, [text]])
        self._kick()

    def update(self, update: SessionUpdate) -> None:
        if not self.closed:
            self._items.append(update)
            self._kick()

    async def drained(self) -> None:
        """Until everything queued so far was sent."""
        while self._items or not self._idle.is_set():
            await self._idle.wait()
            if self._items:
                await asyncio.sleep(0)

    def close(self) -> None:
        self.closed = True
        self._items.clear()
        if self._task is not None:
            self._task.cancel()

    def _kick(self) -> None:
        self._idle.clear()
        self._wake.set()
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._writer())

    async def _writer(self) -> None:
        while True:
            if not self._items:
                self._idle.set()
                self._wake.clear()
                await self._wake.wait()
                continue
            item = self._items.popleft()
            if isinstance(item, list):
                kind, pieces = item
                item = _CHUNK_TYPES[kind](session_update=kind, content=schema.TextContentBlock(
                    type="text", text="".join(pieces)))
            try:
                await self._send(item)
            except Exception as exc:  # the client went away: nothing more to say
                log.debug("session/update not sent: %s", exc)
                self._items.clear()


# ---------------------------------------------------------------------- tool calls


def tool_start(tool_call_id: str, name: str, args: object, cwd: str,
               diff: schema.FileEditToolCallContent | None = None) -> schema.ToolCallStart:
    described = describe_call(tool_call_id, name, args if isinstance(args, dict) else {}, cwd)
    return schema.ToolCallStart(
        session_update="tool_call", tool_call_id=tool_call_id, title=described.title, kind=described.kind,
        status="pending", locations=_locations(described.locations, args), raw_input=args,
        content=[diff] if diff is not None else None,
    )


def tool_progress(tool_call_id: str, text: str) -> schema.ToolCallProgress:
    return schema.ToolCallProgress(session_update="tool_call_update", tool_call_id=tool_call_id, status="in_progress",
                                   content=[text_content(text)] if text else None)


def tool_end(tool_call_id: str, result: object, is_error: bool, diff: schema.FileEditToolCallContent | None = None,
             line: int | None = None, path: str | None = None) -> schema.ToolCallProgress:
    text = result_text(result)
    content: list[ToolCallContent] = []
    if diff is not None and not is_error:
        content.append(diff)
    if text:
        content.append(text_content(text))
    raw: dict[str, Any] = {"content": text}
    details = getattr(result, "details", None)
    if isinstance(details, dict | list | str | int | float | bool):
        raw["details"] = details
    locations = [schema.ToolCallLocation(path=path, line=line)] if path and line else None
    return schema.ToolCallProgress(session_update="tool_call_update", tool_call_id=tool_call_id,
                                   status="failed" if is_error else "completed", content=content or None,
                                   raw_output=raw, locations=locations)


def diff_content(path: str, old_text: str | None, new_text: str) -> schema.FileEditToolCallContent:
    return schema.FileEditToolCallContent(type="diff", path=path, old_text=old_text, new_text=new_text)


def text_content(text: str) -> schema.ContentToolCallContent:
    return schema.ContentToolCallContent(type="content", content=schema.TextContentBlock(type="text", text=text))


def result_text(result: object) -> str:
    if result is None:
        return ""
    content = getattr(result, "content", None)
    if isinstance(content, list):
        return "\n".join(getattr(block, "text", "") for block in content if getattr(block, "type", "") == "text")
    return str(content or "")


def _locations(paths: tuple[str, ...], args: object) -> list[schema.ToolCallLocation] | None:
    if not paths:
        return None
    line = None
    if isinstance(args, dict) and isinstance(args.get("offset"), int) and args["offset"] > 0:
        line = args["offset"]
    return [schema.ToolCallLocation(path=p, line=line) for p in paths]


# ---------------------------------------------------------------------- plans

_STEP = re.compile(r"^\s*(?:\d+[.)]|[-*])\s+(.*\S)")


def plan_from_tool(name: str, args: object, result: object) -> schema.AgentPlanUpdate | None:
    """A ``plan`` update from a tool that published one, or None."""
    entries: list[schema.PlanEntry] = []
    details = getattr(result, "details", None)
    if name == "todo" and isinstance(details, dict) and isinstance(details.get("items"), list):
        for item in details["items"]:
            if isinstance(item, dict) and isinstance(item.get("text"), str):
                entries.append(schema.PlanEntry(content=item["text"], priority="medium",
                                                status="completed" if item.get("done") else "pending"))
        return schema.AgentPlanUpdate(session_update="plan", entries=entries)
    if name == "present_plan" and isinstance(args, dict) and isinstance(args.get("plan"), str):
        steps = [m.group(1) for m in map(_STEP.match, args["plan"].splitlines()) if m]
        entries = [schema.PlanEntry(content=step, priority="medium", status="pending") for step in steps]
        return schema.AgentPlanUpdate(session_update="plan", entries=entries) if entries else None
    return None
