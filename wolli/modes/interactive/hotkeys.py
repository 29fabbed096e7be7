"""Keys people press: what ``/hotkeys`` lists, and what is wrong with an extension's shortcut.

Every key is read with :mod:`wolli.config.keys` (one key language), so a shortcut written
``ctrl+alt+p`` is compared with the active keybindings and the terminal's key events in one
spelling. A shortcut is reported when a built-in key already has it (the built-in wins) and,
in a terminal without the kitty keyboard protocol, when the terminal cannot send it as itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...config.keys import KeySpecError, event_key, legacy_problem, parse_key

if TYPE_CHECKING:
    from pathlib import Path

    from ...extensions.host import ContextView
    from ...extensions.registry import Shortcut

# What each key id does, for /hotkeys (ids as in keybindings.json; docs/tui.md lists them too).
KEY_HELP: dict[str, str] = {
    "tui.input.submit": "send (steer while the agent works)",
    "tui.input.newLine": "new line",
    "app.message.followUp": "queue a follow-up while the agent works",
    "app.interrupt": "stop the agent (queued messages return to the editor)",
    "app.clear": "clear the editor; twice: quit",
    "app.exit": "quit (empty editor)",
    "app.thinking.cycle": "next thinking level",
    "app.model.cycleForward": "next model in scope (enabledModels)",
    "app.model.cycleBackward": "previous model in scope",
    "app.model.select": "choose the model",
    "app.tools.expand": "expand or collapse tool output",
    "app.thinking.toggle": "show or hide thinking",
    "app.editor.external": "edit the message in $VISUAL / $EDITOR",
    "app.transcript.pageUp": "scroll the transcript up a page",
    "app.transcript.pageDown": "scroll the transcript down a page",
    "app.transcript.earlier": "scroll to the top of the transcript (earlier messages)",
    "app.transcript.end": "scroll to the end of the transcript",
    "app.commandPalette": "command palette",
    "app.permissions.cycle": "next permission mode (default, accept-edits, plan)",
    "app.clipboard.pasteImage": "paste an image from the clipboard",
    "app.session.new": "new session",
    "app.session.tree": "session tree",
    "app.session.fork": "fork",
    "app.session.resume": "resume a session",
}
# Keys the editor itself uses (not in keybindings.json).
EDITOR_KEYS = {"tab": "complete", "up": "previous prompt", "down": "next prompt"}


_builtin: tuple[dict[str, tuple[str, ...]], dict[str, str]] | None = None


def builtin_keys() -> dict[str, str]:
    """Every key the app uses, in canonical spelling -> the action id (or what it does).
    Asked at each key press while shortcuts exist: built once per keybindings.json version."""
    global _builtin
    from ...config.keybindings import current_keys

    active = current_keys()  # the same object until keybindings.json changes
    if _builtin is not None and _builtin[0] is active:
        return _builtin[1]
    taken: dict[str, str] = {}
    for action, keys in active.items():
        if action.startswith("tui.select."):
            continue  # dialogs' keys: not the main screen's
        for spec in keys:
            try:
                taken.setdefault(str(parse_key(spec)), action)
            except KeySpecError:
                continue  # reported when keybindings.json is read
    for key, what in EDITOR_KEYS.items():
        taken.setdefault(key, what)
    _builtin = (active, taken)
    return taken


def shortcut_problems(shortcuts: dict[str, Any], *, kitty: bool) -> list[str]:
    """One line per extension shortcut that will not fire as its author expects."""
    taken = builtin_keys()
    out = []
    for key, shortcut in shortcuts.items():
        parsed = event_key(key)
        shown = parsed.shown() if parsed is not None else key
        if key in taken:
            out.append(f"{shortcut.owner}: shortcut {shown} is already {taken[key]}; the built-in key wins "
                       "(choose another key, or move the built-in one in keybindings.json)")
            continue
        problem = legacy_problem(parsed) if parsed is not None and not kitty else None
        if problem is not None:
            out.append(f"{shortcut.owner}: shortcut {shown} will not work in this terminal: {problem}")
    return out


def _shown_keys(keys: tuple[str, ...]) -> str:
    shown = []
    for spec in keys:
        try:
            shown.append(parse_key(spec).shown())
        except KeySpecError:
            shown.append(spec)
    return " / ".join(shown)


def hotkeys_report(shortcuts: dict[str, Any] | None = None) -> str:
    """``/hotkeys``: the built-in keys (marked when keybindings.json changed them), then every
    extension shortcut with its extension and description."""
    from ...config.keybindings import DEFAULT_KEYS, current_keys

    keys = current_keys()
    lines = []
    for action, what in KEY_HELP.items():
        bound = keys.get(action, ())
        if bound:
            mark = "  (keybindings.json)" if tuple(bound) != DEFAULT_KEYS.get(action, ()) else ""
            lines.append(f"{_shown_keys(tuple(bound)):<24} {what}{mark}")
    lines.append(f"{'Esc Esc':<24} rewind (empty editor, agent idle)")
    if shortcuts:
        lines += ["", "Extension shortcuts:"]
        taken = builtin_keys()
        for key, shortcut in sorted(shortcuts.items(), key=lambda item: (item[1].owner, item[0])):
            parsed = event_key(key)
            shown = parsed.shown() if parsed is not None else key
            note = "  (taken by a built-in key)" if key in taken else ""
            lines.append(f"{shown:<24} {shortcut.description or '(no description)'}  [{shortcut.owner}]{note}")
    lines += ["", "/ commands · @ files · Tab paths · !cmd runs a shell command (!!cmd keeps it out of context)",
              "Change keys in keybindings.json (docs/tui.md)."]
    return "\n".join(lines)


async def run_shortcut(shortcut: Shortcut, ctx: ContextView, agent_home: Path | None) -> str | None:
    """Run an extension shortcut; when it raises, the traceback goes to the extension log and
    the one line to show is returned (None when it worked)."""
    from ...extensions.errors import failure_line, log_failure

    try:
        await shortcut.run(ctx)
    except Exception as exc:  # a broken shortcut is reported, never the end of the front end
        key = event_key(shortcut.key)
        what = f"shortcut {key.shown() if key is not None else shortcut.key}"
        log_failure(agent_home, shortcut.owner, what, exc)
        return failure_line(shortcut.owner, what, exc)
    return None
