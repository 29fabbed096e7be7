"""What a child session is made of: its services, its UI, its model and permission mode.

A child is an ordinary :class:`~wolli.runtime.live.live_session.LiveSession`; what makes it
a child is the :class:`ChildServices` it is built with. They are the host's services with
four differences: the UI (a child asks the user nothing unless its definition allows it,
and then through the parent's UI under its own name), the handler context (``ctx.subagent``
says which child a handler runs for), no ``task`` tool (one level of delegation) and, for
the permission gate, a reason to give when it may not ask. Handlers, rules and modes are
the host's: an extension's ``tool_call`` rule and plan mode bind children like their parent.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from ...config.subagent_files import SubagentDefinition
from .info import SubagentInfo as SubagentInfo  # where it was defined first

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from ...agent.tool import ToolDefinition
    from ...ai.abort import AbortSignal
    from ...ai.models import ModelRegistry
    from ...ai.types import Model
    from ...config.settings import Settings
    from ...extensions.context import ExtensionUI
    from ...extensions.host import ContextView
    from ...permissions.modes import PermissionMode
    from ...permissions.prompt import PermissionAnswer, PermissionRequest
    from ..live.live_session import LiveSession
    from ..live.services import ToolOwner
    from ..resources.loading import ResourceSet
    from ..safety.checkpointing import TurnCheckpoints
    from .catalog import SubagentCatalog

# Strictest first: a child runs in its definition's mode only when that is no looser than
# its parent's (``bypassPermissions`` in a file cannot lift a parent out of plan mode).
STRICTNESS: tuple[str, ...] = ("plan", "default", "accept-edits", "yolo")
# Claude Code's model aliases -> a fragment of the model ids of that family.
MODEL_ALIASES = {"haiku": "haiku", "sonnet": "sonnet", "opus": "opus"}
T = TypeVar("T")


class SubagentHost(Protocol):
    """What running subagents needs of the host (``runtime.host.agent_host.AgentHost``,
    which this room may not import): its session services plus the subagent catalog."""

    @property
    def subagents(self) -> SubagentCatalog: ...

    @property
    def subagent_runs(self) -> dict[str, Any]: ...  # id -> runner.ChildProgress (runner imports this module)

    @property
    def settings(self) -> Settings: ...

    @property
    def ui(self) -> ExtensionUI: ...

    @property
    def model_registry(self) -> ModelRegistry: ...

    def resources(self, cwd: str) -> ResourceSet: ...

    def create_tools(self, cwd: str, session: ToolOwner | None = None) -> list[ToolDefinition]: ...

    # The session is a LiveSession; the host's own signature names it.
    def handler_context(self, session: Any) -> ContextView: ...

    def release_handle(self, session: LiveSession) -> None: ...


def child_mode(parent_mode: str, requested: str | None) -> PermissionMode:
    """The child's permission mode: the stricter of its parent's and its definition's."""
    from ...permissions.modes import ModeError, parse_mode

    parent = parse_mode(parent_mode)
    if not requested or requested.strip().lower() in ("inherit", "dontask"):
        return parent
    try:
        wanted = parse_mode(requested)
    except ModeError:
        return parent
    return wanted if STRICTNESS.index(wanted) < STRICTNESS.index(parent) else parent


def may_ask(definition: SubagentDefinition) -> bool:
    if definition.background:
        return False
    if (definition.permission_mode or "").strip().lower() == "dontask":
        return False
    return definition.ask_user


def resolve_model(requested: str | None, parent_model: Model | None, registry: ModelRegistry) -> tuple[Model | None, str | None]:
    """The child's model and, when the definition's could not be used, why (the parent's
    model is used then: a Claude Code file saying ``model: haiku`` still runs on a machine
    with only a local model)."""
    wanted = (requested or "").strip()
    if not wanted or wanted.lower() == "inherit":
        return parent_model, None
    family = MODEL_ALIASES.get(wanted.lower())
    if family is not None:
        candidates = [m for m in registry.available() if family in m.id.lower()]
        same_provider = [m for m in candidates if parent_model is not None and m.provider == parent_model.provider]
        pick = (same_provider or candidates)
        if pick:
            return max(pick, key=lambda m: m.id), None
        return parent_model, f"no available model matches {wanted!r}; the parent's model is used"
    try:
        return registry.resolve(wanted)[0], None
    except ValueError:
        return parent_model, f"model {wanted!r} is not available; the parent's model is used"


class ChildUI:
    """The parent's UI as a child sees it."""

    def __init__(self, parent_ui: ExtensionUI, name: str, allowed: bool) -> None:
        self._parent = parent_ui
        self._name = name
        self.allowed = allowed and bool(getattr(parent_ui, "has_ui", False))
        self.has_ui = self.allowed
        self.can_ask_permission = self.allowed and getattr(parent_ui, "can_ask_permission", True)
        # The permission gate's refusal when the child may not ask (docs/subagents.md).
        self.cannot_ask_reason = (
            f"Not run: this call needs the user's approval, and the subagent {name!r} may not ask the user. "
            "Do the rest of the task without it, and report what needs approval in your answer."
        )

    def _title(self, title: str) -> str:
        return f"[{self._name}] {title}"

    async def ask_permission(self, request: PermissionRequest, *, signal: AbortSignal | None = None) -> PermissionAnswer:
        from ...permissions.prompt import PermissionAnswer

        if not self.can_ask_permission:
            return PermissionAnswer.cancelled()
        named = dataclasses.replace(request, reason=f"subagent {self._name}: {request.reason}")
        return await self._parent.ask_permission(named, signal=signal)

    async def select(self, title: str, options: Sequence[T], *, timeout: float | None = None,
                     signal: AbortSignal | None = None) -> T | None:
        if not self.allowed:
            return None
        return await self._parent.select(self._title(title), options, timeout=timeout, signal=signal)

    async def confirm(self, title: str, message: str = "", *, timeout: float | None = None,
                      signal: AbortSignal | None = None) -> bool:
        if not self.allowed:
            return False
        return bool(await self._parent.confirm(self._title(title), message, timeout=timeout, signal=signal))

    async def input(self, title: str, placeholder: str | None = None, *, timeout: float | None = None,
                    signal: AbortSignal | None = None) -> str | None:
        if not self.allowed:
            return None
        return await self._parent.input(self._title(title), placeholder, timeout=timeout, signal=signal)

    async def editor(self, title: str, prefill: str | None = None, *, timeout: float | None = None,
                     signal: AbortSignal | None = None) -> str | None:
        if not self.allowed:
            return None
        return await self._parent.editor(self._title(title), prefill, timeout=timeout, signal=signal)

    # Answers what the author's component hands back (as ``ExtensionUI.custom``).
    async def custom(self, factory: Callable[..., Any], *, overlay: bool = False) -> Any:
        return await self._parent.custom(factory, overlay=overlay) if self.allowed else None

    def notify(self, message: str, level: str = "info") -> None:
        self._parent.notify(f"[{self._name}] {message}", level)

    def __getattr__(self, name: str) -> object:
        if name in _SCREEN_SETTERS:
            # A child has no screen of its own: an extension setting up its status, widgets
            # or editor on a child's session_start must not take over the parent's.
            return _ignore
        return getattr(self._parent, name)  # getters and the theme: the parent's, as they are


_SCREEN_SETTERS = frozenset({
    "set_status", "set_widget", "set_footer", "set_title", "set_editor_text", "paste_to_editor",
    "set_editor_component", "set_working_message", "set_working_visible", "set_working_indicator",
    "set_tools_expanded", "add_autocomplete_provider", "set_header",
})


def _ignore(*args: object, **kwargs: object) -> None:
    return None


class ChildServices:
    """The host's services for one child session (see the module docstring)."""

    def __init__(self, host: SubagentHost, ui: ChildUI, info_ref: list[SubagentInfo],
                 parent_checkpoints: TurnCheckpoints | None = None) -> None:
        self._host = host
        self.ui = ui
        self._parent_checkpoints = parent_checkpoints
        # Filled once the child's session id is known (the session is built with these).
        self._info_ref = info_ref

    # Everything else is the host's, as it is (a proxy: its members are SessionServices').
    def __getattr__(self, name: str) -> Any:
        return getattr(self._host, name)

    @property
    def info(self) -> SubagentInfo | None:
        return self._info_ref[0] if self._info_ref else None

    def create_tools(self, cwd: str, session: ToolOwner | None = None) -> list[ToolDefinition]:
        from .tool_selection import NEVER_FOR_CHILDREN

        return [t for t in self._host.create_tools(cwd, session) if t.name not in NEVER_FOR_CHILDREN]

    def handler_context(self, session: LiveSession) -> ContextView:
        base = self._host.handler_context(session)
        # The host's ctx is its HandlerContext dataclass (a room above this one).
        return dataclasses.replace(base, ui=self.ui, subagent=self.info)  # type: ignore[type-var]

    def make_checkpoints(self, session: LiveSession) -> TurnCheckpoints | ChildCheckpoints:
        """The child's file checkpoints go into its parent's turn (see :class:`ChildCheckpoints`)."""
        if self._parent_checkpoints is None:
            from ..safety.checkpointing import TurnCheckpoints

            return TurnCheckpoints(session)
        return ChildCheckpoints(self._parent_checkpoints, self._info_ref)


class ChildCheckpoints:
    """A child's view of its parent's :class:`~..safety.checkpointing.TurnCheckpoints`.

    What a child edits, writes or changes with a command is recorded in the parent's
    session, in the parent's turn, so ``/rewind`` to before the user's message that led to
    the ``task`` call restores the children's changes too (docs/checkpoints.md). Tool call
    ids are prefixed with the child's id (two children may both have a ``call_1``); the
    parent settles files changed more than once when its own run ends, and keeps its store.
    """

    def __init__(self, parent: TurnCheckpoints, info_ref: list[SubagentInfo]) -> None:
        self._parent = parent
        self._info_ref = info_ref

    def _id(self, tool_call_id: str) -> str:
        return f"{self._info_ref[0].id if self._info_ref else 'subagent'}:{tool_call_id}"

    async def before(self, tool_call_id: str, name: str, arguments: dict[str, Any]) -> None:
        await self._parent.before(self._id(tool_call_id), name, arguments)

    async def after(self, tool_call_id: str, name: str, arguments: dict[str, Any]) -> None:
        await self._parent.after(self._id(tool_call_id), name, arguments)

    def forget_files(self, paths: list[str]) -> None:
        self._parent.forget_files(paths)

    def settle(self) -> None:
        pass  # the parent's run is still going: it settles at its end

    def close(self) -> None:
        pass  # the store is the parent's
