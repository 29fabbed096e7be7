"""Testing extensions: load them into a headless host, script the model and the user.

```python
from wolli.testing import ExtensionHarness, tool_call

async def test_the_gate_blocks_rm(tmp_path):
    async with ExtensionHarness(["extensions/permission_gate.py"], cwd=tmp_path) as h:
        h.ui.answer("confirm", False)                       # the user says no
        h.reply(tool_call("bash", {"command": "rm -rf build"}), "ok, I won't")
        await h.prompt("clean the build")
        assert h.tool_results[-1].is_error
```

The harness gives the extensions a real host and session (the real loader, handlers, tools
and session file) on the scripted ``faux`` model, in a temporary agent home: nothing
touches the network or your real ``~/.wolli``. ``reply()`` queues the model's answers (text,
:func:`tool_call` blocks, or a list of blocks for one answer); ``ui`` answers dialogs from a
script and records notices. Afterwards read ``events``, ``messages``, ``tool_calls``,
``tool_results``, ``entries``, ``notifications``, ``errors`` and ``requests`` (what the model
was sent).
"""

from __future__ import annotations

import os
import tempfile
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from .ai.providers.faux import FauxProvider, faux_error, faux_text, faux_thinking, faux_tool_call
from .extensions.ui import NullUI

if TYPE_CHECKING:
    from types import ModuleType

    from .ai.providers.faux import ResponseFactory, ResponseLike
    from .extensions.context import ExtensionMode
    from .permissions.prompt import PermissionAnswer, PermissionRequest
    from .runtime.host.agent_host import AgentHost
    from .runtime.host.handler_context import HandlerContext
    from .runtime.live.live_session import LiveSession

__all__ = ["ExtensionHarness", "ScriptedUI", "tool_call", "text", "thinking", "error"]

tool_call = faux_tool_call
text = faux_text
thinking = faux_thinking
error = faux_error


T = TypeVar("T")

class ScriptedUI(NullUI):
    """``ctx.ui`` answering from a script: ``answer(method, value)`` queues one answer for
    ``select``/``confirm``/``input``/``editor``; without one, the headless default comes back.
    Every call is recorded in ``calls`` as ``(method, args)``; notices in ``notifications``."""

    has_ui = True

    def __init__(self) -> None:
        self._answers: dict[str, deque[Any]] = {}
        self.calls: list[tuple[str, tuple[Any, ...]]] = []
        self.notifications: list[tuple[str, str]] = []
        self.statuses: dict[str, str | None] = {}
        self.widgets: dict[str, Any] = {}
        self.permission_requests: list[Any] = []

    def answer(self, method: str, *values: object) -> ScriptedUI:
        """``answer("permission", "allow_once")``: permission questions take an option id
        (``allow_once``, ``allow_always``, ``reject_once``, ``reject_with_message``,
        ``reject_always``) or a ``PermissionAnswer``; the others their dialog's value."""
        if method not in ("select", "confirm", "input", "editor", "permission"):
            raise ValueError(f"answer(): {method!r} is not a dialog (select, confirm, input, editor, permission)")
        self._answers.setdefault(method, deque()).extend(values)
        return self

    def _next(self, method: str, args: tuple[Any, ...], default: object) -> object:
        self.calls.append((method, args))
        queue = self._answers.get(method)
        return queue.popleft() if queue else default

    async def select(self, title: str, options: Sequence[T], **_: object) -> T | None:
        return cast("T | None", self._next("select", (title, options), None))

    async def confirm(self, title: str, message: str = "", **_: object) -> bool:
        return bool(self._next("confirm", (title, message), False))

    async def input(self, title: str, placeholder: str | None = None, **_: object) -> str | None:
        return cast("str | None", self._next("input", (title, placeholder), None))

    async def editor(self, title: str, prefill: str | None = None, **_: object) -> str | None:
        return cast("str | None", self._next("editor", (title, prefill), None))

    async def ask_permission(self, request: PermissionRequest, **_: object) -> PermissionAnswer:
        """A scripted answer (an option id or a ``PermissionAnswer``); unscripted: cancelled."""
        from .permissions.prompt import PermissionAnswer

        self.permission_requests.append(request)
        value = self._next("permission", (request.tool_call.title,), None)
        if value is None:
            return PermissionAnswer.cancelled()
        if isinstance(value, PermissionAnswer):
            return value
        option = request.option(str(value))
        if option is None:
            raise ValueError(f"answer('permission', {value!r}): not an option ({[o.option_id for o in request.options]})")
        rules = request.suggested_rules if option.kind in ("allow_always", "reject_always") else ()
        return PermissionAnswer(option.option_id, option.kind, tuple(rules))

    def notify(self, message: str, level: str = "info") -> None:
        self.calls.append(("notify", (message, level)))
        self.notifications.append((message, level))

    def set_status(self, key: str, text: str | None) -> None:
        self.calls.append(("set_status", (key, text)))
        self.statuses[key] = text

    def set_widget(self, key: str, content: object, *, placement: str = "above_editor") -> None:
        self.calls.append(("set_widget", (key, placement)))
        self.widgets[key] = content


class ExtensionHarness:
    """A headless Wolli with ``paths`` (extension files or folders) loaded.

    ``hooks`` and ``tools`` are hook files and tool-factory folders to load as well;
    ``flags`` are command-line flag values (``{"plan": True}``); ``settings`` overrides
    settings for the run; ``mode`` is what ``ctx.mode`` says (default ``"print"``, whose
    permission mode is ``yolo``); ``permission_mode`` starts the session in another one
    (``"default"`` asks through ``ui.answer("permission", ...)``).
    """

    def __init__(
        self,
        paths: list[str | os.PathLike[str]] | None = None,
        *,
        cwd: str | os.PathLike[str] | None = None,
        hooks: list[str | os.PathLike[str]] | None = None,
        tools: list[str | os.PathLike[str]] | None = None,
        flags: dict[str, Any] | None = None,
        settings: dict[str, Any] | None = None,
        mode: ExtensionMode = "print",
        persist: bool = True,
        permission_mode: str | None = None,
    ) -> None:
        self._paths = [str(Path(p).resolve()) for p in paths or []]
        self._hooks = [Path(p).resolve() for p in hooks or []]
        self._tools = [str(Path(p).resolve()) for p in tools or []]
        self._flags = dict(flags or {})
        self._settings = dict(settings or {})
        self._cwd = cwd
        self._mode = mode
        self._persist = persist
        self._permission_mode = permission_mode
        self.ui = ScriptedUI()
        self.faux = FauxProvider(provider="harness", model_id="scripted")
        self.events: list[Any] = []
        self._host: AgentHost | None = None
        self.load_errors: list[str] = []
        self._home: tempfile.TemporaryDirectory[str] | None = None
        self._saved_home: str | None = None

    # ------------------------------------------------------------------ lifecycle

    async def __aenter__(self) -> ExtensionHarness:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def start(self) -> None:
        from .runtime.host.agent_host import AgentHost
        from .runtime.live.options import SessionOptions

        self._home = tempfile.TemporaryDirectory(prefix="wolli-harness-")
        self._saved_home = os.environ.get("WOLLI_HOME")
        os.environ["WOLLI_HOME"] = self._home.name
        cwd = str(self._cwd) if self._cwd is not None else self._home.name
        host = AgentHost(mode=self._mode, ui=self.ui)
        host.cwd = cwd
        host.permissions.configure(mode=self._permission_mode)
        self._host = host
        model = self.faux.model
        host.model_registry.register_provider(model.provider, {
            "api": "faux", "baseUrl": "http://faux.invalid",
            "models": [{"id": model.id, "reasoning": True, "input": ["text", "image"]}],
        })
        host.settings.override({"retry": {"baseDelayMs": 1, "maxDelayMs": 10}, **self._settings})
        if self._hooks:
            folder = host.home / "hooks"
            folder.mkdir(parents=True, exist_ok=True)
            for hook in self._hooks:
                (folder / hook.name).write_bytes(hook.read_bytes())
        host.extensions.configure(cli_paths=self._paths, tool_cli_paths=self._tools, packages=False)
        self.load_errors = await host.extensions.load(cwd)
        host.extensions.set_flag_values(self._flags)
        session, _ = host.session_from_options(SessionOptions(cwd=cwd, model=model, persist=self._persist))
        # The active session is observed, and every session that replaces it (new, resume, fork).
        observed: set[int] = set()

        def follow(new: LiveSession | None, old: LiveSession | None) -> None:
            if new is not None and id(new) not in observed:
                observed.add(id(new))
                new.observe(self.events.append)

        host.on_active_session(follow)
        host.set_active(session)
        await session.start("startup")

    async def close(self) -> None:
        if self._host is not None:
            await self._host.shutdown()
        self.faux.unregister()
        if self._saved_home is None:
            os.environ.pop("WOLLI_HOME", None)
        else:
            os.environ["WOLLI_HOME"] = self._saved_home
        if self._home is not None:
            from .session.checkpoints.sweep import wait_for_sweeps

            wait_for_sweeps(30.0)  # a sweep finishing would write into the folder being removed
            self._home.cleanup()

    # ------------------------------------------------------------------ driving

    def reply(self, *answers: ResponseLike | ResponseFactory) -> ExtensionHarness:
        """Queue the model's next answers: a string, a block, or a list of blocks each."""
        self.faux.push(*answers)
        return self

    async def prompt(self, text: str) -> str:
        """Submit ``text`` as the user would and wait until the agent is idle."""
        outcome = await self.session.prompt(text)
        await self.session.wait_for_idle()
        return str(outcome)

    async def command(self, name: str, args: str = "") -> str:
        return await self.prompt(f"/{name} {args}".rstrip())

    async def reload(self) -> list[str]:
        await self.host.reload()
        self.load_errors = list(self.host.extensions.errors)
        return self.load_errors

    # ------------------------------------------------------------------ reading

    @property
    def host(self) -> AgentHost:
        """The host (once started: ``async with ExtensionHarness(...)``)."""
        if self._host is None:
            raise RuntimeError("the harness has not started: use `async with ExtensionHarness(...) as h`")
        return self._host

    @property
    def session(self) -> LiveSession:
        """The active live session (follows new/resume/fork)."""
        active = self.host.active
        if active is None:
            raise RuntimeError("the harness has no active session")
        return active

    @property
    def ctx(self) -> HandlerContext:
        """The ``ctx`` handlers of the session receive."""
        # The live session sees its ctx through a narrow Protocol; the host made a HandlerContext.
        return cast("HandlerContext", self.session.handler_context())

    @property
    def messages(self) -> list[Any]:
        return list(self.session.messages)

    @property
    def tool_calls(self) -> list[Any]:
        return [b for m in self.messages if getattr(m, "role", None) == "assistant" for b in m.tool_calls()]

    @property
    def tool_results(self) -> list[Any]:
        return [m for m in self.messages if getattr(m, "role", None) == "toolResult"]

    @property
    def entries(self) -> list[Any]:
        return list(self.session.session_manager.get_entries())

    @property
    def notifications(self) -> list[tuple[str, str]]:
        return list(self.ui.notifications)

    @property
    def errors(self) -> list[str]:
        """Load problems, then every handler error of the run (``extension_error``)."""
        return [*self.load_errors, *(f"{e.extension_path}: {e.event}: {e.error}" for e in self.events
                                     if e.type == "extension_error")]

    @property
    def requests(self) -> list[Any]:
        """What the model was sent, one ``Context`` per call (system prompt, messages, tools)."""
        return list(self.faux.contexts)

    def events_of(self, kind: str) -> list[Any]:
        return [e for e in self.events if e.type == kind]

    def extension(self, name: str) -> ModuleType:
        """The loaded module of the extension called ``name`` (to read its state)."""
        import sys

        for record in self.host.extensions.registry.records:
            if record.name == name and record.module_name:
                return sys.modules[record.module_name]
        raise LookupError(f"no loaded extension named {name!r}")
