"""``import wolli`` offers the extension author's surface and nothing internal."""

from __future__ import annotations

import importlib

import pytest

import wolli

# The module-level names docs/extensions.md documents ("What `wolli` offers"), and the types
# a custom tool is written with.
AUTHOR_SURFACE = {
    "is_tool_call_event_type", "is_bash_tool_result", "with_file_mutation_queue", "truncate_head",
    "truncate_tail", "truncate_line", "format_size", "DEFAULT_MAX_BYTES", "DEFAULT_MAX_LINES",
    "create_host_environment", "create_read_tool", "create_write_tool", "create_edit_tool",
    "create_bash_tool", "create_grep_tool", "create_find_tool", "create_ls_tool",
    "ExtensionAPI", "ExtensionContext", "define_hook", "key_hint", "key_text", "raw_key_hint",
    "highlight_code", "get_language_from_path", "CustomEditor", "ExtensionUI",
}
TOOL_TYPES = {"ToolDefinition", "ToolResult", "TruncationResult", "Environment", "ExecOptions", "ExecResult"}


def test_every_exported_name_resolves_and_belongs_to_the_author_surface():
    exported = set(wolli.__all__) - {"__version__"}
    assert exported <= AUTHOR_SURFACE | TOOL_TYPES
    for name in exported:
        assert getattr(wolli, name) is not None


@pytest.mark.parametrize(
    ("name", "module"),
    [
        ("Agent", "wolli.agent.agent"),
        ("AgentHost", "wolli.runtime.host.agent_host"),
        ("LiveSession", "wolli.runtime.live.live_session"),
        ("SessionManager", "wolli.session.manager"),
    ],
)
def test_internals_live_in_their_own_modules_only(name, module):
    with pytest.raises(AttributeError):
        getattr(wolli, name)
    assert getattr(importlib.import_module(module), name).__name__ == name


def test_event_type_guards():
    from wolli.runtime.handlers.hook_events import ToolCallEvent, ToolResultEvent

    call = ToolCallEvent("bash", "c1", {"command": "ls"})
    assert wolli.is_tool_call_event_type("bash", call)
    assert not wolli.is_tool_call_event_type("read", call)
    result = ToolResultEvent("bash", "c1", {}, [], None, False)
    assert wolli.is_bash_tool_result(result) and not wolli.is_bash_tool_result(call)


def test_the_extension_context_is_typed():
    from typing import get_args, get_type_hints

    from wolli.runtime.live.handle import SessionHandle

    hints = get_type_hints(wolli.ExtensionContext)
    assert hints["session"] is SessionHandle and hints["ui"] is wolli.ExtensionUI
    assert set(get_args(hints["mode"])) == {"tui", "plain", "rpc", "json", "print"}


def test_every_ui_offers_the_documented_surface():
    """``ExtensionUI`` lists what docs/extensions.md documents; each mode's ``ctx.ui`` has it."""
    from wolli.extensions.ui import NullUI
    from wolli.modes.line.ui import LineUI
    from wolli.modes.rpc.ui import RpcUI
    from wolli.modes.tui.ui_bridge import TuiUI
    from wolli.testing import ScriptedUI

    members = {name for name in dir(wolli.ExtensionUI) if not name.startswith("_")}
    assert {"select", "confirm", "input", "editor", "notify", "set_widget", "set_footer", "theme"} <= members
    for ui in (NullUI, LineUI, RpcUI, TuiUI, ScriptedUI):
        assert members <= set(dir(ui)), (ui.__name__, members - set(dir(ui)))


def test_front_end_uis_name_every_member_themselves():
    """A front end's ``ctx.ui`` inherits nothing: a member it forgot is a type error (mypy
    holds each class to ``ExtensionUI``), never a silent fallback to the headless answers."""
    from wolli.extensions.ui import NullUI
    from wolli.modes.line.ui import LineUI
    from wolli.modes.rpc.ui import RpcUI
    from wolli.modes.tui.ui_bridge import TuiUI

    members = {name for name in dir(wolli.ExtensionUI) if not name.startswith("_")}
    for ui in (LineUI, RpcUI, TuiUI):
        assert not issubclass(ui, NullUI), ui.__name__
        assert members <= set(vars(ui)), (ui.__name__, members - set(vars(ui)))


def test_type_checkers_see_every_public_name():
    """``wolli/__init__.py`` resolves names lazily; its ``TYPE_CHECKING`` block imports each
    one from the module the lazy lookup uses, so editors and mypy see real types, not Any.
    ``py.typed`` marks the package as typed for the checkers of extension authors."""
    import ast
    from pathlib import Path

    init = Path(wolli.__file__)
    tree = ast.parse(init.read_text())
    guarded = next(node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING")
    seen = {alias.name: f"wolli.{node.module}" for node in guarded.body if isinstance(node, ast.ImportFrom)
            for alias in node.names}
    assert seen == wolli._EXPORTS
    assert (init.parent / "py.typed").is_file()
