"""Queued and injected messages of a live session: steer, follow-up, extension messages."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ...agent.agent import Agent
from ...agent.events import MessageEndEvent, MessageStartEvent
from ...agent.messages import CustomMessage, user_message
from ...ai.types import ImageContent, content_text
from ..events import QueueUpdateEvent
from ..handlers import hook_events
from .prompting import to_custom_message

if TYPE_CHECKING:
    from ...agent.messages import AgentMessage
    from ...session.manager import SessionManager
    from ..handlers.hook_events import InputSource, StreamingBehavior


class MessageQueue:
    """Part of :class:`~.live_session.LiveSession`: the members it reads are declared here."""

    agent: Agent
    session_manager: SessionManager
    _next_turn: list[CustomMessage]
    _queue_seen: tuple[list[str], list[str]]

    if TYPE_CHECKING:
        def is_idle(self) -> bool: ...
        def _check_open(self) -> None: ...
        def _deliver(self, event: object) -> None: ...
        async def emit(self, event: object) -> None: ...
        async def _on_agent_event(self, event: object) -> None: ...
        async def _run(self, start: Callable[[], Awaitable[None]]) -> None: ...
        async def prompt(
            self, text: str, images: list[ImageContent] | None = None, *,
            streaming_behavior: StreamingBehavior | None = None, source: InputSource = "interactive",
        ) -> str: ...

    def steer(self, text: str, images: list[ImageContent] | None = None) -> None:
        self.agent.steer(user_message(text, images))
        self._sync_queue()

    def follow_up(self, text: str, images: list[ImageContent] | None = None) -> None:
        self.agent.follow_up(user_message(text, images))
        self._sync_queue()

    def clear_queue(self) -> tuple[list[str], list[str]]:
        """Take every queued message back (Esc puts them into the editor); their texts."""
        steering, follow_ups = self.agent.clear_queues()
        self._sync_queue()
        return [_text_of(m) for m in steering], [_text_of(m) for m in follow_ups]

    def queued_texts(self) -> tuple[list[str], list[str]]:
        steering, follow_ups = self.agent.queued_messages()
        return [_text_of(m) for m in steering], [_text_of(m) for m in follow_ups]

    @property
    def pending_message_count(self) -> int:
        return self.agent.pending_message_count

    def _sync_queue(self) -> None:
        current = self.queued_texts()
        if current != self._queue_seen:
            self._queue_seen = current
            self._deliver(QueueUpdateEvent(list(current[0]), list(current[1])))

    async def send_message(self, message: CustomMessage | dict[str, Any], *, trigger_turn: bool = False, deliver_as: str = "steer") -> None:
        """An extension's custom message (shown when ``display``; sent to the model)."""
        self._check_open()
        custom = to_custom_message(message)
        if deliver_as == "next_turn":
            self._next_turn.append(custom)
            return
        if not self.is_idle():
            self.agent.follow_up(custom) if deliver_as == "follow_up" else self.agent.steer(custom)
            self._sync_queue()
            return
        if trigger_turn:
            await self._run(lambda: self.agent.prompt(custom))
            return
        await self.emit(MessageStartEvent(custom))
        self.agent.append_message(custom)
        end = MessageEndEvent(custom)
        await self._on_agent_event(end)

    async def send_user_message(self, content: object, *, deliver_as: str | None = None) -> str:
        """A user message as if typed (through ``input`` handlers, source ``extension``)."""
        text, images = _split_content(content)
        behavior = hook_events.streaming_behavior(deliver_as)
        if not self.is_idle() and behavior is None:
            raise RuntimeError("The agent is busy: pass deliver_as='steer' or 'follow_up' to queue the message.")
        return await self.prompt(text, images, streaming_behavior=behavior, source="extension")

    def append_entry(self, custom_type: str, data: object = None) -> str:
        """Extension state in the session tree; never sent to the model."""
        return self.session_manager.append_custom_entry(custom_type, data)


def _text_of(message: AgentMessage) -> str:
    return content_text(getattr(message, "content", ""))



def _split_content(content: Any) -> tuple[str, list[Any]]:
    if isinstance(content, str):
        return content, []
    texts, images = [], []
    for block in content or []:
        kind = block.get("type") if isinstance(block, dict) else getattr(block, "type", None)
        if kind == "text":
            texts.append(block["text"] if isinstance(block, dict) else block.text)
        elif kind == "image":
            images.append(ImageContent.model_validate(block) if isinstance(block, dict) else block)
    return "\n".join(texts), images
