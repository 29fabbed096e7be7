"""The session object code outside the runtime holds: ``ctx.session`` and friends.

A :class:`SessionHandle` forwards to one live :class:`~.session.LiveSession` under the
method names docs/extensions.md lists under ``ctx.session`` and raises :class:`StaleSessionError`
once that session was replaced or closed, so an extension that kept an old session around
fails loudly instead of writing into a file nobody sees. After ``reload()`` the session is
the same, so the handle stays usable.

Methods that start a turn (``send_message(..., trigger_turn=True)``, ``send_user_message``,
``compact``) return an :class:`asyncio.Task`: the caller may await it or let it run (a
``tool_call`` handler must not wait for a turn that waits for it). Called from a worker
thread (a sync tool), they are handed to the event loop safely.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Awaitable, Callable, Coroutine, Generator
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from ...base.records import record
from ..handlers.hook_events import streaming_behavior
from .live_session import LiveSession

if TYPE_CHECKING:
    from ...agent.messages import CustomMessage
    from ...ai.abort import AbortSignal
    from ...ai.types import Model
    from ...session.compaction import CompactionResult
    from ...session.entries import SessionEntry, SubagentOrigin
    from ...session.manager import SessionManager
    from ..resources.system_prompt import BuildSystemPromptOptions
    from ..safety.rewind import RewindResult
    from .prompting import SlashCommandInfo

T = TypeVar("T")


class HandleHost(Protocol):
    """What a handle asks of its host (``runtime.host.agent_host.AgentHost``, a room above)."""

    @property
    def mode(self) -> str: ...

    def slash_commands(self, session: LiveSession) -> list[SlashCommandInfo]: ...

    async def replace_with_new(
        self, old: LiveSession, *, setup: Callable[[Any], Any] | None = None,
        with_session: Callable[[SessionHandle], Any] | None = None,
    ) -> NewSessionResult: ...

    async def reload(self, session: LiveSession | None = None) -> None: ...


class StaleSessionError(RuntimeError):
    """A session handle was used after its session was replaced or closed."""


@record(frozen=True)
class ToolInfo:
    """What ``get_all_tools()`` reports for one tool (also readable as a mapping)."""

    name: str
    description: str
    parameters: dict[str, Any]  # JSON schema
    prompt_guidelines: list[str]
    source_info: dict[str, Any]

    def __getitem__(self, key: str) -> object:
        return getattr(self, key)


@record(frozen=True)
class NewSessionResult:
    cancelled: bool
    session: SessionHandle | None = None

    def __getitem__(self, key: str) -> object:
        return getattr(self, key)


class SessionManagerView:
    """Read-only access to a session's entries (``ctx.session.session_manager``)."""

    def __init__(self, handle: SessionHandle) -> None:
        self._handle = handle

    def _manager(self) -> SessionManager:
        return self._handle._live().session_manager

    def get_entries(self) -> list[Any]:
        return self._manager().get_entries()

    def get_entry(self, entry_id: str) -> SessionEntry | None:
        return self._manager().get_entry(entry_id)

    def get_branch(self, from_id: str | None = None) -> list[Any]:
        return self._manager().get_branch(from_id)

    def get_leaf_id(self) -> str | None:
        return self._manager().get_leaf_id()

    def get_label(self, entry_id: str) -> str | None:
        return self._manager().get_label(entry_id)

    def get_session_file(self) -> str | None:
        return self._manager().get_session_file()

    def get_session_id(self) -> str:
        return self._manager().get_session_id()

    def get_tree(self) -> list[Any]:
        return self._manager().get_tree()

    def get_session_name(self) -> str | None:
        return self._manager().get_session_name()

    def get_tags(self) -> dict[str, str]:
        return self._manager().get_tags()

    def get_cwd(self) -> str:
        return self._manager().get_cwd()

    def get_subagent_sessions(self, entry_id: str | None = None) -> list[Any]:
        """The subagents' sessions this session started (all, or those of one entry: a
        ``task`` result or the answer that called them): ``name``, ``session_id``,
        ``session_file``, ``status``, ``tool_call_id``, ``entry_id`` (docs/subagents.md)."""
        from ...session.subagent_links import subagent_links

        return subagent_links(self._manager(), entry_id)

    def get_subagent_origin(self) -> SubagentOrigin | None:
        """In a subagent's session: its ``name``, ``parent_session_id`` and ``tool_call_id``
        (the header's ``subagent``); None in a top-level session."""
        return self._manager().get_header().subagent


class SessionHandle:
    def __init__(self, session: LiveSession, host: HandleHost) -> None:
        self._session = session
        self._host = host
        self._loop: asyncio.AbstractEventLoop | None = None
        try:
            self._loop = asyncio.get_running_loop()
        except RuntimeError:
            pass
        self.session_manager = SessionManagerView(self)

    def _live(self) -> LiveSession:
        session = self._session
        if session.closed:
            raise StaleSessionError(
                f"session {session.session_id} was replaced or closed; use the session passed to "
                "with_session (or ctx.session in a new handler) instead of one kept from before"
            )
        return session

    def _schedule(self, make: Callable[[], Coroutine[Any, Any, T]]) -> Awaitable[T]:
        """Run a coroutine on the session's loop, from the loop or from a worker thread."""
        loop = self._loop
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is not None and (loop is None or running is loop):
            return running.create_task(make())
        if loop is None:
            raise RuntimeError("this session has no event loop to run on")
        future: concurrent.futures.Future[T] = asyncio.run_coroutine_threadsafe(make(), loop)
        return asyncio.wrap_future(future) if running is not None else _ThreadFuture(future)

    # ------------------------------------------------------------------ identity

    @property
    def id(self) -> str:
        return self._live().session_id

    @property
    def model(self) -> Model | None:
        return self._live().model

    @property
    def signal(self) -> AbortSignal | None:
        return self._live().signal

    @property
    def mode(self) -> str:
        return self._host.mode

    def is_stale(self) -> bool:
        return self._session.closed

    # ------------------------------------------------------------------ running

    async def prompt(self, text: str, options: dict[str, Any] | None = None, **kwargs: object) -> str:
        opts = {**(options or {}), **kwargs}
        behavior = streaming_behavior(opts.get("streaming_behavior", opts.get("streamingBehavior")))
        return await self._live().prompt(text, opts.get("images"), streaming_behavior=behavior, source="extension")

    def is_idle(self) -> bool:
        return self._live().is_idle()

    def abort(self) -> None:
        self._live().abort()

    async def wait_for_idle(self) -> None:
        await self._live().wait_for_idle()

    def get_pending_message_count(self) -> int:
        return self._live().pending_message_count

    def has_pending_messages(self) -> bool:
        return self._live().pending_message_count > 0

    def get_context_usage(self) -> dict[str, Any]:
        return self._live().context_usage()

    def compact(
        self,
        custom_instructions: str | None = None,
        on_complete: Callable[[Any], Any] | None = None,
        on_error: Callable[[BaseException], Any] | None = None,
    ) -> Awaitable[CompactionResult | None]:
        """Start a compaction (after the current run) without waiting for it."""
        session = self._live()

        async def run() -> CompactionResult | None:
            try:
                result = await session.compact(custom_instructions)
            except Exception as exc:
                if on_error is not None:
                    on_error(exc)
                return None
            if result is None and on_error is not None:
                on_error(RuntimeError("compaction did not produce a summary"))
            elif result is not None and on_complete is not None:
                on_complete(result)
            return result

        return self._schedule(run)

    def get_system_prompt(self) -> str:
        return self._live().system_prompt

    def get_system_prompt_options(self) -> BuildSystemPromptOptions:
        return self._live().system_prompt_options()

    def send_message(self, message: CustomMessage | dict[str, Any], *, trigger_turn: bool = False, deliver_as: str = "steer") -> Awaitable[Any]:
        session = self._live()
        deliver = {"followUp": "follow_up", "nextTurn": "next_turn"}.get(deliver_as, deliver_as)
        if deliver not in ("steer", "follow_up", "next_turn"):
            raise ValueError(f"deliver_as must be 'steer', 'follow_up' or 'next_turn', not {deliver_as!r}")
        return self._schedule(lambda: session.send_message(message, trigger_turn=trigger_turn, deliver_as=deliver))

    def send_user_message(self, content: object, *, deliver_as: str | None = None) -> Awaitable[Any]:
        session = self._live()
        if deliver_as is None and not session.is_idle():
            raise RuntimeError("The agent is busy: pass deliver_as='steer' or 'follow_up' to queue the message.")
        return self._schedule(lambda: session.send_user_message(content, deliver_as=deliver_as))

    # ------------------------------------------------------------------ the session file

    def append_entry(self, custom_type: str, data: object = None) -> str:
        return self._live().append_entry(custom_type, data)

    def get_session_name(self) -> str | None:
        return self._live().session_manager.get_session_name()

    def set_session_name(self, name: str | None) -> None:
        self._live().session_manager.append_session_info(name)

    def set_label(self, entry_id: str, label: str | None) -> None:
        self._live().session_manager.append_label(entry_id, label)

    def get_tags(self) -> dict[str, str]:
        return self._live().session_manager.get_tags()

    def set_tags(self, tags: dict[str, str]) -> None:
        """Merge ``tags`` into the session's tags (other keys stay)."""
        self._live().session_manager.append_tags(dict(tags))

    def get_commands(self) -> list[Any]:
        return self._host.slash_commands(self._live())

    # ------------------------------------------------------------------ checkpoints

    def rewind_points(self) -> list[Any]:
        """Where ``rewind`` can go: the user's messages on this branch (and earlier rewinds),
        newest first, each with ``entry_id``, ``kind``, ``text``, ``timestamp``, ``files``."""
        from ..safety.rewind import points

        return points(self._live())

    async def rewind(self, entry_id: str | None = None, *, scope: str = "both", on_conflict: str = "skip") -> RewindResult:
        """Back to before the message ``entry_id`` (default: the last one): ``code``,
        ``conversation`` or ``both``. Files changed outside Wolli since are kept
        (``on_conflict="skip"``), overwritten (``"overwrite"``) or stop the rewind
        (``"cancel"``: raises). Returns what was restored; the rewind can be undone."""
        return await self._live().rewind(entry_id, scope=scope, on_conflict=on_conflict)

    # ------------------------------------------------------------------ tools

    def get_active_tools(self) -> list[str]:
        return list(self._live().active_tool_names)

    def get_all_tools(self) -> list[ToolInfo]:
        return [
            ToolInfo(
                name=t.name,
                description=t.description,
                parameters=t.json_schema(),
                prompt_guidelines=list(t.prompt_guidelines),
                source_info={"path": t.source if t.source != "builtin" else f"<builtin:{t.name}>",
                             "source": "builtin" if t.source == "builtin" else "extension"},
            )
            for t in self._live().all_tools
        ]

    def set_active_tools(self, names: list[str]) -> list[str]:
        return self._live().set_active_tools(list(names))

    def refresh_tools(self) -> None:
        self._live().refresh_tools()

    # ------------------------------------------------------------------ model

    async def set_model(self, model: Model) -> bool:
        return await self._live().set_model(model)

    async def set_model_by_id(self, provider: str, model_id: str) -> None:
        session = self._live()
        model = session.services.model_registry.find(provider, model_id)
        if model is None:
            raise ValueError(f"unknown model {provider}/{model_id} (see wolli --list-models)")
        if not await session.set_model(model):
            raise ValueError(f"no API key for provider {provider!r}: set one before choosing {provider}/{model_id}")

    def get_thinking_level(self) -> str:
        return self._live().thinking_level

    async def set_thinking_level(self, level: str) -> str:
        return await self._live().set_thinking_level(level)

    # ------------------------------------------------------------------ lifecycle

    async def new_session(
        self,
        setup: Callable[[Any], Any] | None = None,
        with_session: Callable[[SessionHandle], Any] | None = None,
    ) -> NewSessionResult:
        """Replace this session with a new one (this handle goes stale)."""
        return await self._host.replace_with_new(self._live(), setup=setup, with_session=with_session)

    async def reload(self) -> None:
        await self._host.reload(self._live())


class _ThreadFuture(Generic[T]):
    """What a worker thread gets back: ``result()`` blocks the thread, never the loop."""

    def __init__(self, future: concurrent.futures.Future[T]) -> None:
        self._future = future

    def result(self, timeout: float | None = None) -> T:
        return self._future.result(timeout)

    def done(self) -> bool:
        return self._future.done()

    def __await__(self) -> Generator[Any, None, T]:
        return asyncio.wrap_future(self._future).__await__()
