"""Copying text for ``/copy``: the system's clipboard tool when there is one, else OSC 52.

A clipboard tool (pbcopy, wl-copy, xclip, xsel, clip.exe) puts the text where every
program finds it; OSC 52 asks the terminal to do it, which also works over SSH but only
where the terminal allows it (most do; tmux needs ``set -g set-clipboard on``).
"""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
import sys

TOOL_TIMEOUT_S = 3.0


def clipboard_tool() -> list[str] | None:
    if sys.platform == "darwin" and shutil.which("pbcopy"):
        return ["pbcopy"]
    if os.environ.get("WAYLAND_DISPLAY") and shutil.which("wl-copy"):
        return ["wl-copy"]
    if os.environ.get("DISPLAY"):
        if shutil.which("xclip"):
            return ["xclip", "-selection", "clipboard"]
        if shutil.which("xsel"):
            return ["xsel", "--clipboard", "--input"]
    if shutil.which("clip.exe"):  # WSL
        return ["clip.exe"]
    return None


def copy_with_tool(text: str) -> str | None:
    """The tool's name when it took the text; None when there is no tool or it failed."""
    tool = clipboard_tool()
    if tool is None:
        return None
    try:
        done = subprocess.run(tool, input=text.encode(), timeout=TOOL_TIMEOUT_S, check=False,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    return tool[0] if done.returncode == 0 else None


def osc52(text: str) -> str:
    """The escape sequence that asks the terminal to put ``text`` on the clipboard."""
    return "\x1b]52;c;" + base64.b64encode(text.encode()).decode("ascii") + "\x07"
