"""Opening a URL (an OAuth login) in the user's browser without stalling Wolli or taking
over its terminal.

``$BROWSER`` comes first, as everywhere on Unix: a ``:``-separated list of commands, each
run with the URL (in place of ``%s``, or as the last argument) until one starts. Without it,
:mod:`webbrowser` finds a graphical browser where there is a display (macOS and Windows
always have one), in a thread, since it may wait for the browser program to exit; where it
would pick a console browser (lynx, w3m on a server over SSH) Wolli does not start it, since
it would draw over the TUI. The URL is always shown too, to open wherever the user is.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import threading

CONSOLE_BROWSERS = frozenset({"www-browser", "links", "elinks", "lynx", "w3m"})


def open_in_browser(url: str) -> bool:
    """Start opening ``url``; False when there is no browser to try here."""
    chosen = os.environ.get("BROWSER", "")
    if chosen.strip():
        return any(_run(entry, url) for entry in chosen.split(os.pathsep) if entry.strip())
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY") or sys.platform in ("darwin", "win32")):
        return False
    threading.Thread(target=_system_browser, args=(url,), name="wolli-browser", daemon=True).start()
    return True


def _run(entry: str, url: str) -> bool:
    try:
        words = shlex.split(entry)
    except ValueError:
        return False
    argv = [w.replace("%s", url) for w in words] if "%s" in entry else [*words, url]
    try:  # the browser is the user's: not Wolli's child to end, and not on Wolli's terminal
        subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    except OSError:
        return False
    return True


def _system_browser(url: str) -> None:
    import webbrowser

    try:
        browser = webbrowser.get()
        if getattr(browser, "name", "") not in CONSOLE_BROWSERS:
            browser.open(url)
    except Exception:  # no browser after all: the URL is on screen
        pass
