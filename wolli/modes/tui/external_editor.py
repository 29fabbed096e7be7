"""Ctrl+G: edit the prompt in ``$VISUAL`` / ``$EDITOR`` (the app suspends while it runs)."""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .app_view import TuiApp


def editor_command() -> list[str] | None:
    value = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    return shlex.split(value) if value else None


async def edit_in_external_editor(app: TuiApp, text: str) -> str | None:
    """The edited text, or None when no editor is set or it failed (a notice says why)."""
    command = editor_command()
    if command is None:
        app.notify("Set $VISUAL or $EDITOR to edit the prompt in your editor", severity="warning")
        return None
    fd, path = tempfile.mkstemp(prefix="wolli-prompt-", suffix=".md")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        failed: Exception | None = None
        try:
            with app.suspend():
                # Caught in here: Textual's suspend() resumes the app only when its block ends
                # normally; an editor that cannot start left a blank terminal the app no
                # longer read.
                try:
                    code = subprocess.call([*command, path])
                except OSError as exc:
                    failed = exc
        except Exception as exc:  # no terminal to hand over (tests, some drivers)
            failed = exc
        if failed is not None:
            app.notify(f"cannot start the editor: {failed}", severity="error")
            return None
        if code != 0:
            app.notify(f"the editor exited with code {code}; the prompt is unchanged", severity="warning")
            return None
        from ...base.safe_files import read_head
        from ...runtime.startup.request import PROMPT_INPUT_LIMIT as STDIN_LIMIT

        data, cut = read_head(path, STDIN_LIMIT)  # what was typed, at most what a pipe may send
        if cut:
            app.notify(f"the prompt is over {STDIN_LIMIT // (1024 * 1024)} MB: only its start was kept",
                       severity="warning")
        return data.decode("utf-8", "replace").rstrip("\n")
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass
