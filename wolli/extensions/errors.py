"""When extension code fails: one line for the user, the traceback for the extension's author.

Every failure of extension code that Wolli catches (a command, a shortcut, an event handler,
a renderer, a widget or footer factory) is shown as one line naming the extension, what failed
and the exception (``plan_mode: /plan failed: ValueError: no plan yet``), and its traceback is
appended to ``<agent home>/logs/extensions.log`` (the file ``wolli.logger`` writes to), where
the author can read where it happened. Nothing of it ever reaches the terminal directly.
"""

from __future__ import annotations

import logging
from pathlib import Path

from .api_services import make_logger

LOG_NAME = "extensions.log"


def log_path(agent_home: Path) -> Path:
    return agent_home / "logs" / LOG_NAME


def describe(exc: BaseException) -> str:
    """``ValueError: the message`` (just the type when the message is empty)."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def failure_line(owner: str, what: str, exc: BaseException) -> str:
    """The one line the user sees: ``<extension>: <what> failed: <Type>: <message>``."""
    return f"{owner}: {what} failed: {describe(exc)}"


def log_failure(agent_home: Path | None, owner: str, what: str, exc: BaseException) -> None:
    """Append ``exc``'s traceback to the extension log (never raises: logging must not fail
    the thing that reports the failure)."""
    if agent_home is None:
        return
    try:
        logger = make_logger(owner or "extension", agent_home)
        logger.log(logging.ERROR, "%s failed", what, exc_info=(type(exc), exc, exc.__traceback__))
    except Exception:
        pass


class ExtensionCommandError(RuntimeError):
    """An extension's command raised; the message is the one line to show (the traceback is
    in the extension log). The text typed stays out of the editor: running it again would
    only fail again."""

    def __init__(self, line: str, owner: str, command: str) -> None:
        super().__init__(line)
        self.owner = owner
        self.command = command


class CommandUnavailable(RuntimeError):
    """A command registered as disabled was run; the message says why."""
