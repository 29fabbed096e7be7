"""Session file IO: whole-line appends that never interleave, and loading that loses nothing.

A session file is append-only JSONL. Two processes (a TUI and a background ``wolli -p``)
may append to one file, so every append is a single ``os.write`` of complete lines on an
``O_APPEND`` descriptor held under an exclusive ``flock``. A crash can still leave a torn
last line; loading reports and skips it, and the next append starts on a fresh line rather
than gluing onto the fragment. Files are created ``0600`` (they hold prompts, tool output
and sometimes secrets) inside ``0700`` folders.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from .entries import SessionEntry, SessionHeader, parse_entry

try:  # POSIX only; on other platforms appends rely on O_APPEND alone.
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

FILE_MODE = 0o600
DIR_MODE = 0o700

_ENTRY_LIST: TypeAdapter[list[Any]] = TypeAdapter(list[SessionEntry])


class SessionFileError(Exception):
    """A file that cannot be used as a session (no valid header, unreadable)."""


@dataclass
class LoadedSession:
    header: SessionHeader | None
    entries: list[Any] = field(default_factory=list)
    # "line N: what was wrong" for every skipped line.
    errors: list[str] = field(default_factory=list)
    empty: bool = False


def ensure_dir(path: Path) -> None:
    """Create a sessions folder (and parents) private to the user."""
    path.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)


def _lock(fd: int) -> None:
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_EX)


def _unlock(fd: int) -> None:
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_UN)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _encode(lines: list[str]) -> bytes:
    return "".join(line + "\n" for line in lines).encode("utf-8")


def append_lines(path: str | os.PathLike[str], lines: list[str], *, header: str | None = None) -> None:
    """Append complete lines atomically with respect to other appenders of the same file.

    If the file ends in a torn line (no trailing newline) a newline goes first, so the new
    lines stay parseable and the fragment stays a separate, skippable line. ``header`` is
    written first when the file is empty (deleted or truncated behind our back).
    """
    if not lines:
        return
    data = _encode(lines)
    fd = os.open(os.fspath(path), os.O_RDWR | os.O_APPEND | os.O_CREAT, FILE_MODE)
    try:
        _lock(fd)
        try:
            size = os.fstat(fd).st_size
            if size == 0 and header is not None:
                data = _encode([header]) + data
            elif size and os.pread(fd, 1, size - 1) != b"\n":
                data = b"\n" + data
            _write_all(fd, data)
        finally:
            _unlock(fd)
    finally:
        os.close(fd)


def write_new(path: str | os.PathLike[str], lines: list[str]) -> None:
    """Create a session file with its first lines; refuses to clobber an existing file."""
    target = Path(path)
    ensure_dir(target.parent)
    fd = os.open(os.fspath(target), os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL, FILE_MODE)
    try:
        _lock(fd)
        try:
            _write_all(fd, _encode(lines))
        finally:
            _unlock(fd)
    finally:
        os.close(fd)


def _describe(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "entry"
        return f"invalid entry ({where}: {first.get('msg', 'invalid')})"
    if isinstance(exc, json.JSONDecodeError):
        return f"not valid JSON ({exc.msg} at column {exc.colno})"
    return f"{type(exc).__name__}: {exc}"


def parse_header(line: bytes | str) -> SessionHeader:
    """Validate a first line as a session header or raise ``SessionFileError``."""
    try:
        data = json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SessionFileError(f"the first line is not valid JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("type") != "session":
        raise SessionFileError('the first line is not a session header ({"type":"session",...})')
    try:
        return SessionHeader.model_validate(data)
    except ValidationError as exc:
        raise SessionFileError(f"the session header is invalid: {_describe(exc)}") from None


def load(path: str | os.PathLike[str]) -> LoadedSession:
    """Read a session file, keeping every good line and reporting every bad one.

    An empty file yields ``LoadedSession(header=None, empty=True)``: nothing to lose, the
    caller may start a session in it. A missing or invalid header raises
    ``SessionFileError`` with the reason, since nothing else in the file can be trusted.
    """
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise SessionFileError(f"cannot read session file {os.fspath(path)}: {exc.strerror or exc}") from None
    if not raw.strip():
        return LoadedSession(header=None, empty=True)
    lines = raw.split(b"\n")
    # A trailing newline leaves one empty segment; anything else there is an unterminated line.
    torn = lines.pop() if lines else b""
    first_index = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first_index is None:
        # Only an unterminated line: a header torn while being written.
        first_index, lines, torn = 0, [torn], b""
    try:
        header = parse_header(lines[first_index])
    except SessionFileError as exc:
        raise SessionFileError(f"{os.fspath(path)} is not a usable session file: {exc}") from None

    result = LoadedSession(header=header)
    body = lines[first_index + 1 :]
    numbered = [(first_index + 2 + i, line) for i, line in enumerate(body) if line.strip()]
    if torn.strip():
        numbered.append((len(lines) + 1, torn))
    torn_number = len(lines) + 1 if torn.strip() else None
    _parse_entries(numbered, result, torn_number)
    return result


def _parse_entries(numbered: list[tuple[int, bytes]], result: LoadedSession, torn_number: int | None) -> None:
    # Fast path: a healthy file validates in one call; fall back line by line on any error.
    try:
        entries = _ENTRY_LIST.validate_json(b"[" + b",".join(line for _, line in numbered) + b"]")
    except (ValidationError, ValueError):
        entries = None
    if entries is not None and len(entries) == len(numbered):
        _add_unique(entries, [n for n, _ in numbered], result)
        return
    good: list[Any] = []
    numbers: list[int] = []
    for number, line in numbered:
        try:
            data = json.loads(line)
            if not isinstance(data, dict):
                raise ValueError("not a JSON object")
            entry = parse_entry(data)
        except Exception as exc:
            reason = _describe(exc)
            if number == torn_number:
                reason = f"torn last line ignored: {reason}"
            result.errors.append(f"line {number}: {reason}")
            continue
        good.append(entry)
        numbers.append(number)
    _add_unique(good, numbers, result)


def _add_unique(entries: list[Any], numbers: list[int], result: LoadedSession) -> None:
    seen: set[str] = set()
    for number, entry in zip(numbers, entries, strict=True):
        if entry.id in seen:
            result.errors.append(f"line {number}: duplicate entry id {entry.id} skipped")
            continue
        seen.add(entry.id)
        result.entries.append(entry)
