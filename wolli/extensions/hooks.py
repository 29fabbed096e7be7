"""Hooks: one file under ``<agent home>/hooks/`` that decides at one ``before:`` event.

``hook = define_hook(before="tool_call", run=fn)`` at module level. The eight ``before:``
names map onto the handler events of the runtime, so a hook folds exactly like an extension
handler of that event (see :mod:`wolli.runtime.handlers.channel`), with one difference the hook
text asks for: a hook that raises *fails open*. The error is reported like any handler
error (an ``extension_error`` naming the hook's file) and the chain goes on with the event
as the hook left it, also for ``tool_call``, where an extension handler that raises blocks
the call.

Chains run in load order: the agent's ``hooks/*.py`` by file name, then hooks of installed
packages (entry-point group ``wolli.hooks``, by name). Hooks load after extensions, so at
one event the extension handlers of equal priority run first.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..base.entry_points import entry_points_of
from ..base.records import record

# before: name -> the runtime event it binds
BEFORE_EVENTS = {
    "tool_call": "tool_call",
    "tool_result": "tool_result",
    "input": "input",
    "context": "context",
    "provider_request": "before_provider_request",
    "agent_start": "before_agent_start",
    "compact": "session_before_compact",
    "message_end": "message_end",
}
HOOK_ENTRY_POINT_GROUP = "wolli.hooks"


@record(frozen=True)
class HookDefinition:
    before: str
    run: Callable[..., Any]

    @property
    def event(self) -> str:
        return BEFORE_EVENTS[self.before]


def define_hook(*, before: str, run: Callable[..., Any]) -> HookDefinition:
    """A hook at ``before`` (one of the eight names); ``run(event, ctx)`` may be async."""
    if before not in BEFORE_EVENTS:
        near = difflib.get_close_matches(str(before), BEFORE_EVENTS, n=1)
        hint = f"; did you mean {near[0]!r}?" if near else f" (one of {', '.join(BEFORE_EVENTS)})"
        raise ValueError(f"define_hook: no before: event {before!r}{hint}")
    if not callable(run):
        raise TypeError("define_hook: run must be a function run(event, ctx)")
    return HookDefinition(before, run)


def discover_hooks(agent_home: Path, *, packages: bool = True,
                   skip: Callable[[Any], bool] | None = None) -> list[tuple[str, Path | Any]]:
    """(name, file or entry point) of every hook, in chain order."""
    found: list[tuple[str, Path | Any]] = []
    folder = agent_home / "hooks"
    if folder.is_dir():
        for path in sorted(folder.glob("*.py"), key=lambda p: p.name):
            if not path.name.startswith(("_", ".")):
                found.append((path.stem, path))
    if packages:
        for ep in sorted(entry_points_of(HOOK_ENTRY_POINT_GROUP), key=lambda e: e.name):
            if skip is None or not skip(ep):
                found.append((ep.name, ep))
    return found
