"""``ctx.ui.open_url``: a browser when there is one to show a page, else nothing (the caller
then shows the URL).

Only graphical browsers are used: with no display (an SSH session, a console) Python's
``webbrowser`` falls back to text browsers (lynx, w3m) that would take over the terminal Wolli
is drawing on.
"""

from __future__ import annotations

import os
import sys


def has_display() -> bool:
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def open_in_browser(url: str) -> bool:
    """True when a graphical browser was asked to open ``url``."""
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
