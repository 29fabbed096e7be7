"""The built-in ``bash`` tool: run a command on the Environment, show the model its tail.

Output can be arbitrarily large, so nothing here holds all of it: a :class:`BashOutput`
keeps a rolling tail for the model and the live view, and once the output passes the
truncation limits the complete raw bytes go to a temp file the model is pointed at.
:func:`run_bash` is the reusable part (the ``!cmd`` user shell wants the same handling);
:func:`create_bash_tool` wraps it as a tool whose failures raise with the output attached.
"""

from __future__ import annotations

import asyncio
import codecs
import dataclasses
import os
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any, Literal

from ..agent.tool import OnUpdate, ToolDefinition, ToolResult, call_maybe_async
from ..ai.abort import AbortSignal
from ..ai.types import TextContent
from ..base.wire import WireModel
from .builtin_parameters import builtin_parameters
from .cards import CARDS
from .environment import Environment, ExecOptions
from .shell import shell_env
from .truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, TruncationResult, format_size, truncate_tail

if TYPE_CHECKING:  # the models load with pydantic on the tool's first call (.params)
    from .params import BashParams


UPDATE_INTERVAL = 0.1  # seconds between live output updates
# The full-output file keeps at most this much (a command printing for ever must not fill
# the disk); the rest is counted, and the notice says where the file stops.
FULL_OUTPUT_LIMIT = 100 * 1024 * 1024


@dataclasses.dataclass(slots=True, kw_only=True)
class TruncationInfo(WireModel):
    """How the output shown to the model was cut (a :class:`TruncationResult` minus text)."""

    truncated: bool
    truncated_by: Literal["lines", "bytes"] | None = None
    total_lines: int
    total_bytes: int
    output_lines: int
    output_bytes: int
    last_line_partial: bool = False
    first_line_exceeds_limit: bool = False
    max_lines: int
    max_bytes: int

    @classmethod
    def of(cls, result: TruncationResult) -> TruncationInfo:
        fields = dataclasses.asdict(result)
        fields.pop("content")
        return cls(**fields)


@dataclasses.dataclass(slots=True, kw_only=True)
class BashToolDetails(WireModel):
    exit_code: int | None = None
    truncation: TruncationInfo | None = None  # only when the output was truncated
    full_output_path: str | None = None  # the complete output, when truncated


class BashToolError(RuntimeError):
    """A failed command; the message carries the output so the model still sees it."""

    def __init__(self, message: str, details: BashToolDetails) -> None:
        super().__init__(message)
        self.details = details


@dataclass
class BashSpawnContext:
    """What a spawn hook may rewrite before the command runs. ``env`` is the full env."""

    command: str
    cwd: str
    env: dict[str, str]


SpawnHook = Callable[[BashSpawnContext], "BashSpawnContext | dict[str, Any] | None | Awaitable[Any]"]


# ---------------------------------------------------------------------------- output


class BashOutput:
    """Collects a command's output in bounded memory.

    Keeps the exact totals, a tail of at least ``max_bytes`` characters (enough for
    :func:`truncate_tail` to decide exactly), and every raw byte in a temp file once the
    output no longer fits the limits.
    """

    def __init__(self, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.max_lines = max_lines
        self.max_bytes = max_bytes
        self.total_bytes = 0
        self.newlines = 0
        self.ends_with_newline = False
        self.full_output_path: str | None = None
        self.save_error: str | None = None  # why the full output could not be saved
        self.saved_cut = False  # the full-output file reached FULL_OUTPUT_LIMIT and stops there
        self._saved = 0
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._tail: list[str] = []
        self._tail_chars = 0
        self._trimmed = False  # the tail no longer starts at the first byte
        self._head: list[bytes] | None = []  # raw bytes until the temp file exists
        self._file: IO[bytes] | None = None
        # Sizes of the line in progress and of the last completed line, in bytes.
        self._current_line = 0
        self._previous_line = 0

    @property
    def total_lines(self) -> int:
        """Line count as :func:`truncate_tail` counts it (a final newline ends a line)."""
        lines = self.newlines + 1
        if self.newlines and self.ends_with_newline:
            lines -= 1
        return lines

    @property
    def last_line_bytes(self) -> int:
        return self._current_line if self._current_line or not self.newlines else self._previous_line

    @property
    def exceeds_limits(self) -> bool:
        return self.total_bytes > self.max_bytes or self.total_lines > self.max_lines

    def feed(self, data: bytes) -> None:
        if not data:
            return
        self.total_bytes += len(data)
        count = data.count(b"\n")
        if count:
            last = data.rfind(b"\n")
            before = data.rfind(b"\n", 0, last)
            self._previous_line = last - before - 1 if before >= 0 else self._current_line + last
            self._current_line = len(data) - last - 1
            self.newlines += count
        else:
            self._current_line += len(data)
        self.ends_with_newline = data.endswith(b"\n")
        self._store_raw(data)
        self._add_text(self._decoder.decode(data))

    def finish(self) -> None:
        """Flush a trailing partial character and close the temp file."""
        self._add_text(self._decoder.decode(b"", final=True))
        if self._file is not None:
            self._file.close()
            self._file = None

    def _store_raw(self, data: bytes) -> None:
        if self._file is not None:
            room = FULL_OUTPUT_LIMIT - self._saved
            try:
                self._file.write(data[:room])
            except OSError as exc:  # disk full: keep the command running, say so later
                self._give_up_saving(exc)
                return
            self._saved += min(room, len(data))
            if len(data) >= room:
                self.saved_cut = True
                self._file.close()
                self._file = None
            return
        if self.saved_cut:
            return
        if self._head is None:  # saving failed earlier
            return
        self._head.append(data)
        if self.exceeds_limits:
            self._save_head()

    def _save_head(self) -> None:
        try:
            fd, path = tempfile.mkstemp(prefix="wolli-bash-", suffix=".log")
            self._file = os.fdopen(fd, "wb")
            self.full_output_path = path
            self._file.writelines(self._head or [])
            self._saved = sum(len(piece) for piece in self._head or [])
        except OSError as exc:
            self._give_up_saving(exc)
        self._head = None

    def _give_up_saving(self, exc: OSError) -> None:
        self.save_error = f"{exc.strerror or exc}"
        if self._file is not None:
            try:
                self._file.close()
            except OSError:
                pass
            self._file = None
        if self.full_output_path is not None:
            _remove_quietly(self.full_output_path)
            self.full_output_path = None

    def _add_text(self, text: str) -> None:
        if not text:
            return
        self._tail.append(text)
        self._tail_chars += len(text)
        if self._tail_chars > 4 * self.max_bytes:
            # Every character is at least one byte, so 2 * max_bytes characters always hold
            # more than the byte limit: the cut line at the front can never be shown whole.
            joined = "".join(self._tail)[-2 * self.max_bytes :]
            self._tail = [joined]
            self._tail_chars = len(joined)
            self._trimmed = True

    def truncation(self) -> TruncationResult:
        """The tail to show, with totals for the whole output."""
        text = "".join(self._tail)
        self._tail = [text]
        result = truncate_tail(text, self.max_lines, self.max_bytes)
        return dataclasses.replace(
            result,
            truncated=result.truncated or self._trimmed,
            total_lines=self.total_lines,
            total_bytes=self.total_bytes,
        )

    def render(self) -> tuple[str, TruncationResult]:
        """Text for the model: the tail plus a notice naming the full output file."""
        result = self.truncation()
        text = result.content
        if not result.truncated:
            if self.full_output_path is not None:  # saved early; everything fitted after all
                _remove_quietly(self.full_output_path)
                self.full_output_path = None
            return (text if text.strip() else "(no output)"), result
        if self.full_output_path is None and self._head is not None:
            # Replacement characters made the decoded text longer than the raw bytes.
            self._save_head()
            self.finish()
        end = result.total_lines
        start = end - result.output_lines + 1
        if self.full_output_path and self.saved_cut:
            where = (f"Full output, its first {format_size(FULL_OUTPUT_LIMIT)} only (the file stops at that "
                     f"limit): {self.full_output_path}")
        elif self.full_output_path:
            where = f"Full output: {self.full_output_path}"
        else:
            where = f"Full output could not be saved: {self.save_error or 'unknown error'}"
        if result.last_line_partial:
            notice = (
                f"[Showing last {format_size(result.output_bytes)} of line {end} "
                f"(line is {format_size(self.last_line_bytes)}). {where}]"
            )
        elif result.truncated_by == "lines":
            notice = f"[Showing lines {start}-{end} of {end}. {where}]"
        else:
            notice = f"[Showing lines {start}-{end} of {end} ({format_size(self.max_bytes)} limit). {where}]"
        separator = "\n" if text.endswith("\n") else "\n\n"
        return f"{text}{separator}{notice}", result


def _remove_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


@dataclass
class BashRun:
    """The outcome of :func:`run_bash`."""

    text: str  # tail (+ truncation notice) or "(no output)"
    exit_code: int | None
    timed_out: bool
    aborted: bool
    truncation: TruncationResult
    full_output_path: str | None

    @property
    def truncated(self) -> bool:
        return self.truncation.truncated

    def details(self) -> BashToolDetails:
        return _details(self.exit_code, self.truncation, self.full_output_path)


def _details(exit_code: int | None, truncation: TruncationResult, path: str | None) -> BashToolDetails:
    return BashToolDetails(
        exit_code=exit_code,
        truncation=TruncationInfo.of(truncation) if truncation.truncated else None,
        full_output_path=path,
    )


async def run_bash(
    env: Environment,
    command: str,
    *,
    cwd: str | None = None,
    timeout: float | None = None,
    signal: AbortSignal | None = None,
    extra_env: dict[str, str] | None = None,
    on_update: Callable[[str, BashToolDetails], None] | None = None,
    max_lines: int = DEFAULT_MAX_LINES,
    max_bytes: int = DEFAULT_MAX_BYTES,
    on_chunk: Callable[[bytes], None] | None = None,
) -> BashRun:
    """Run ``command`` through ``env.exec`` with bounded memory and throttled live updates.

    ``on_update(tail_text, details)`` gets the current tail at most every
    ``UPDATE_INTERVAL`` seconds; ``on_chunk(data)`` gets every piece of output as it comes
    (all of it, even what the tail later drops). Both are display-only: errors are ignored.
    """
    loop = asyncio.get_running_loop()
    output = BashOutput(max_lines, max_bytes)
    last_emit = 0.0
    pending: asyncio.TimerHandle | None = None

    def emit() -> None:
        nonlocal last_emit, pending
        pending = None
        last_emit = time.monotonic()
        if on_update is None:
            return
        truncation = output.truncation()
        try:
            on_update(truncation.content, _details(None, truncation, output.full_output_path))
        except Exception:  # a broken display must not break the command
            pass

    def on_data(data: bytes) -> None:
        nonlocal pending
        output.feed(data)
        if on_chunk is not None:
            try:
                on_chunk(data)
            except Exception:  # a broken display must not break the command
                pass
        if on_update is None or pending is not None:
            return
        wait = last_emit + UPDATE_INTERVAL - time.monotonic()
        if wait <= 0:
            emit()
        else:
            pending = loop.call_later(wait, emit)

    options = ExecOptions(timeout=timeout, signal=signal, on_data=on_data, env=extra_env)
    try:
        result = await env.exec(command, cwd or env.cwd, options)
    except BaseException:
        output.finish()
        if output.full_output_path is not None:  # nobody will ever be told about it
            _remove_quietly(output.full_output_path)
        raise
    finally:
        if pending is not None:
            pending.cancel()
    output.finish()
    text, truncation = output.render()
    return BashRun(
        text=text,
        exit_code=result.exit_code,
        timed_out=result.timed_out,
        aborted=result.aborted,
        truncation=truncation,
        full_output_path=output.full_output_path,
    )


# ---------------------------------------------------------------------------- the tool


def _format_seconds(seconds: float) -> str:
    return f"{seconds:g}"


def _apply_hook_result(context: BashSpawnContext, returned: object) -> BashSpawnContext:
    if returned is None:
        return context
    if isinstance(returned, BashSpawnContext):
        return returned
    if isinstance(returned, dict):
        unknown = set(returned) - {"command", "cwd", "env"}
        if unknown:
            raise TypeError(f"spawn_hook returned unknown keys {sorted(unknown)}; allowed: command, cwd, env")
        merged = {"command": context.command, "cwd": context.cwd, "env": context.env, **returned}
        return BashSpawnContext(**merged)
    raise TypeError(
        f"spawn_hook returned {type(returned).__name__}; expected a BashSpawnContext, a dict or None"
    )


def create_bash_tool(env: Environment, spawn_hook: SpawnHook | None = None) -> ToolDefinition:
    """The ``bash`` tool bound to ``env``; ``spawn_hook`` may rewrite command, cwd and env."""

    async def execute(
        tool_call_id: str, params: BashParams, signal: AbortSignal | None = None, on_update: OnUpdate | None = None,
        ctx: object = None,
    ) -> ToolResult:
        command, cwd, extra_env = params.command, env.cwd, None
        if spawn_hook is not None:
            base = shell_env()
            context = BashSpawnContext(command=command, cwd=cwd, env=dict(base))
            context = _apply_hook_result(context, await call_maybe_async(spawn_hook, context))
            command, cwd = str(context.command), str(context.cwd)
            # Exec takes extra variables on top of the shell env: pass what the hook changed.
            extra_env = {k: str(v) for k, v in context.env.items() if base.get(k) != v}
        timeout = params.timeout if params.timeout is not None and params.timeout > 0 else None

        def live(text: str, details: BashToolDetails) -> None:
            if on_update is not None:
                on_update(ToolResult(content=[TextContent(text=text)], details=details))

        run = await run_bash(
            env, command, cwd=cwd, timeout=timeout, signal=signal, extra_env=extra_env,
            on_update=live if on_update is not None else None,
        )
        details = run.details()
        shown = "" if run.text == "(no output)" else run.text.rstrip("\n")
        prefix = f"{shown}\n\n" if shown else ""
        if run.aborted:
            raise BashToolError(f"{prefix}Command aborted", details)
        if run.timed_out:
            raise BashToolError(
                f"{prefix}Command timed out after {_format_seconds(timeout or 0)} seconds", details
            )
        if run.exit_code is not None and run.exit_code != 0:
            raise BashToolError(f"{prefix}Command exited with code {run.exit_code}", details)
        return ToolResult(content=[TextContent(text=run.text)], details=details)

    return ToolDefinition(
        name="bash",
        label=CARDS['bash'].label,
        description=CARDS['bash'].description,
        parameters=builtin_parameters("bash"),
        execute=execute,
        prompt_snippet=CARDS['bash'].snippet,
        prompt_guidelines=list(CARDS['bash'].guidelines),
    )
