"""``ctx.ui.open_url`` and MCP logins: a browser when there is one to show a page, else
nothing (the caller then shows the URL).

``$BROWSER`` comes first, as everywhere on Unix: a ``:``-separated list of commands, each run
with the URL (in place of ``%s``, or as the last argument) until one starts, detached from
the terminal. Otherwise only graphical browsers are used: with no display (an SSH session, a
console) Python's ``webbrowser`` falls back to text browsers (lynx, w3m) that would take over
the terminal Wolli is drawing on.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys


def has_display() -> bool:
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def open_in_browser(url: str) -> bool:
    """True when a browser was asked to open ``url``: ``$BROWSER``, else a graphical one."""
    chosen = os.environ.get("BROWSER", "")
    if chosen.strip():
        return any(_run(entry, url) for entry in chosen.split(os.pathsep) if entry.strip())
    if not has_display():
        return False
    import webbrowser

    try:
        browser = webbrowser.get()
    except webbrowser.Error:
        return False
    if isinstance(browser, webbrowser.GenericBrowser) and not isinstance(browser, webbrowser.BackgroundBrowser):
        return False  # a text browser in this terminal
    try:
        return bool(browser.open(url))
    except Exception:
        return False


def _run(entry: str, url: str) -> bool:
    try:
        words = shlex.split(entry)
    except ValueError:
        return False
    if not words:
        return False
    argv = [w.replace("%s", url) for w in words] if "%s" in entry else [*words, url]
    try:  # the browser is the user's: not Wolli's child to end, and not on Wolli's terminal
        subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    except OSError:
        return False
    return True
