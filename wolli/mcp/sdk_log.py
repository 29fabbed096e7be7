"""The SDK's own log records go to a file, never to the terminal.

The ``mcp`` SDK logs through :mod:`logging` (``logger.exception("OAuth flow error")`` with a
traceback, "Token refresh failed", transport warnings). Wolli configures no root handler, so
Python's last-resort handler would print them on stderr: a traceback in ``-p`` output, text
over the TUI. Wolli reports each problem itself, as one line; the SDK's records are kept in
``<agent home>/logs/mcp-sdk.log`` (warnings and worse, one line each, the exception's type
and first line but no traceback), cut like the servers' stderr logs.
"""

from __future__ import annotations

import logging
from pathlib import Path

from .stdio import StderrLog

LOGGERS = ("mcp", "mcp_types")


class _OneLine(logging.Handler):
    def __init__(self, path: Path | None) -> None:
        super().__init__(logging.WARNING)
        self.sink = StderrLog(path)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = " ".join(record.getMessage().split())[:500]
            if record.exc_info and record.exc_info[1] is not None:
                exc = record.exc_info[1]
                first = str(exc).splitlines()[0][:300] if str(exc) else ""
                text += f" ({type(exc).__name__}: {first})" if first else f" ({type(exc).__name__})"
            self.sink.write(f"{record.levelname.lower()} {record.name}: {text}\n".encode())
        except Exception:  # logging must never break a connection
            pass


def route_sdk_logs(path: Path | None) -> None:
    """Send the SDK's warnings and errors to ``path`` (dropped when None), not to stderr."""
    for name in LOGGERS:
        logger = logging.getLogger(name)
        for old in [h for h in logger.handlers if isinstance(h, _OneLine)]:
            logger.removeHandler(old)
        logger.addHandler(_OneLine(path))
        logger.propagate = False
        if logger.level == logging.NOTSET or logger.level < logging.WARNING:
            logger.setLevel(logging.WARNING)
