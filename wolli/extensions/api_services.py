"""Small services on ``wolli``: the event bus, ``exec``, helpers, settings, the logger.

Each is independent of the extension machinery, so it is written (and tested) on its own.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..config.settings import Settings, Target

# --------------------------------------------------------------------------- event bus


class EventBus:
    """Named events between extensions. ``emit`` calls every listener in subscription order;
    a listener that raises is reported through ``on_error`` and the others still run. Async
    listeners are scheduled on the running loop (``emit`` itself never blocks)."""

    def __init__(self, on_error: Callable[[str, BaseException], None] | None = None) -> None:
        self._listeners: dict[str, list[Callable[[Any], Any]]] = {}
        self.on_error = on_error

    def on(self, name: str, listener: Callable[[Any], Any]) -> Callable[[], None]:
        self._listeners.setdefault(name, []).append(listener)

        def off() -> None:
            listeners = self._listeners.get(name, [])
            if listener in listeners:
                listeners.remove(listener)

        return off

    def emit(self, name: str, data: object = None) -> None:
        for listener in list(self._listeners.get(name, [])):
            try:
                result = listener(data)
                if inspect.isawaitable(result):
                    task = asyncio.ensure_future(result)
                    task.add_done_callback(functools.partial(self._task_done, name))
            except Exception as exc:
                self._report(name, exc)

    def clear(self) -> None:
        self._listeners.clear()

    def _task_done(self, name: str, task: asyncio.Future[Any]) -> None:
        if not task.cancelled() and task.exception() is not None:
            self._report(name, task.exception())  # type: ignore[arg-type]

    def _report(self, name: str, exc: BaseException) -> None:
        if self.on_error is not None:
            self.on_error(name, exc)


# --------------------------------------------------------------------------- helpers

_SHELL_TOOLS = ("bash", "shell", "sh")
_MODIFYING = {"write": ("path",), "edit": ("path",)}


class Helpers:
    """Reading tool calls without knowing each tool's argument names."""

    @staticmethod
    def shell_command_from_tool_call(tool_call: object) -> str | None:
        """The shell command a ``bash`` tool call runs, else None."""
        name, arguments = _call_parts(tool_call)
        if name in _SHELL_TOOLS and isinstance(arguments.get("command"), str):
            return str(arguments["command"])
        return None

    @staticmethod
    def files_modified_by_tool_call(tool_call: object) -> list[str]:
        """Paths a ``write``/``edit`` call changes; for ``bash``, redirect targets it names."""
        name, arguments = _call_parts(tool_call)
        if name in _MODIFYING:
            return [str(arguments[k]) for k in _MODIFYING[name] if isinstance(arguments.get(k), str)]
        command = Helpers.shell_command_from_tool_call(tool_call)
        if command is None:
            return []
        try:
            words = shlex.split(command)
        except ValueError:
            return []
        return [words[i + 1] for i, w in enumerate(words[:-1]) if w in (">", ">>", "tee")]

    @staticmethod
    def tool_calls_in_messages(messages: list[Any]) -> list[dict[str, Any]]:
        """Every tool call in ``messages`` with its result (None while it has none)."""
        results = {getattr(m, "tool_call_id", None): m for m in messages if getattr(m, "role", None) == "toolResult"}
        out = []
        for message in messages:
            if getattr(message, "role", None) != "assistant":
                continue
            for block in getattr(message, "content", []):
                if getattr(block, "type", None) == "toolCall":
                    out.append({"tool_call": block, "result": results.get(block.id)})
        return out


def _call_parts(tool_call: object) -> tuple[str | None, dict[str, Any]]:
    if isinstance(tool_call, dict):
        name = tool_call.get("name") or tool_call.get("tool_name")
        arguments = tool_call.get("arguments") or tool_call.get("input") or {}
    else:
        name = getattr(tool_call, "name", None) or getattr(tool_call, "tool_name", None)
        arguments = getattr(tool_call, "arguments", None) or getattr(tool_call, "input", None) or {}
    return name, arguments if isinstance(arguments, dict) else {}


# --------------------------------------------------------------------------- settings


class SettingsHandle:
    """``wolli.settings``: read merged values, write to the agent (default) or global file."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings

    def get(self, key: str, default: object = None) -> Any:
        return self._settings.get(key, default)

    def update(self, partial: dict[str, Any], target: Target = "agent") -> None:
        self._settings.update(partial, target)

    def delete(self, key: str, target: Target = "agent") -> None:
        self._settings.delete(key, target)

    def subscribe(self, listener: Callable[[dict[str, Any]], Any]) -> Callable[[], None]:
        return self._settings.subscribe(listener)


# --------------------------------------------------------------------------- logger


def make_logger(name: str, agent_home: Path) -> logging.Logger:
    """A logger writing to ``<agent home>/logs/extensions.log`` and never to the terminal."""
    logger = logging.getLogger(f"wolli.extension.{name}")
    logger.propagate = False  # the root logger may print to stderr; extensions must not
    logger.setLevel(logging.DEBUG)
    target = agent_home / "logs" / "extensions.log"
    if not any(getattr(h, "baseFilename", None) == str(target) for h in logger.handlers):
        for old in list(logger.handlers):
            logger.removeHandler(old)
            old.close()
        logger.addHandler(_LazyFileHandler(target))
    return logger


class _LazyFileHandler(logging.Handler):
    """Opens (and creates the folder of) its file at the first record, not before."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.baseFilename = str(path)
        self.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        self._inner: logging.FileHandler | None = None

    def emit(self, record: logging.LogRecord) -> None:
        try:
            if self._inner is None:
                from ..config.paths import ensure_private_dir

                ensure_private_dir(Path(self.baseFilename).parent)
                self._inner = logging.FileHandler(self.baseFilename, encoding="utf-8")
                self._inner.setFormatter(self.formatter)
            self._inner.emit(record)
        except Exception:  # a full disk must not reach the terminal (or the extension)
            pass

    def close(self) -> None:
        if self._inner is not None:
            self._inner.close()
        super().close()
