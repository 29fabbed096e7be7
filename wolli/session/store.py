"""Session file IO: whole-line appends that never interleave, and loading that loses nothing.

A session file is append-only JSONL. Two processes (a TUI and a background ``wolli -p``)
may append to one file, so every append is a single ``os.write`` of complete lines on an
``O_APPEND`` descriptor held under an exclusive ``flock``. A crash can still leave a torn
last line; loading reports and skips it, and the next append starts on a fresh line rather
than gluing onto the fragment. Files are created ``0600`` (they hold prompts, tool output
and sometimes secrets) inside ``0700`` folders.

An ``os.write`` lands in the kernel before it returns, so a killed process loses nothing it
wrote. Only an operating-system crash or power loss can drop writes that were not yet
synced to the disk; ``sync=True`` pays for that (an ``fdatasync``, plus the folder when a
file is created) where the manager decides it is worth it (docs/sessions.md, "Crashes").
"""

from __future__ import annotations

import gc
import json
import json.scanner
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ..base.durable import sync_folder
from ..base.records import record
from ..base.safe_files import FileTooLargeError, read_capped
from ..base.text_safety import without_surrogates
from ..base.wire import WireError
from ..config.paths import ensure_private_dir
from .entries import KNOWN_ENTRY_TYPES, SESSION_VERSION, SessionHeader, parse_entry
from .migrate import header_version, migrate

if TYPE_CHECKING:
    from .entries import SessionEntry

try:  # POSIX only; on other platforms appends rely on O_APPEND alone.
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

FILE_MODE = 0o600
DIR_MODE = 0o700
# The largest session file that is loaded (its entries take a few times this in memory).
SESSION_FILE_LIMIT = 512 * 1024 * 1024


class EntryRef:
    """An entry not built yet: what the tree needs of it, and where its line is.

    ``start``/``end`` are byte offsets of the line in the file (newline excluded),
    ``number`` its 1-based line number (for the report if the line turns out damaged).
    """

    __slots__ = ("id", "parent_id", "type", "start", "end", "number")

    def __init__(self, entry_id: str, parent_id: str | None, kind: str, start: int, end: int, number: int) -> None:
        self.id = entry_id
        self.parent_id = parent_id
        self.type = kind
        self.start = start
        self.end = end
        self.number = number

    def __repr__(self) -> str:
        return f"EntryRef({self.id!r}, {self.type!r}, line {self.number})"


class SessionFileError(Exception):
    """A file that cannot be used as a session (no valid header, unreadable)."""


@record
class LoadedSession:
    header: SessionHeader | None
    entries: list[Any] = field(default_factory=list)
    # "line N: what was wrong" for every skipped line, and the numbers of those lines.
    errors: list[str] = field(default_factory=list)
    bad_lines: list[int] = field(default_factory=list)
    empty: bool = False
    # id -> parent id of skipped lines whose ids could be read: their children hang on the
    # skipped line's parent instead, so one unknown entry does not cut the branch below it.
    skipped_parents: dict[str, str | None] = field(default_factory=dict)
    # The format version the file was in when it had to be upgraded (pi's v1/v2), else None.
    migrated_from: int | None = None
    # The header line was missing or unreadable and a new one was made (the manager saves
    # the file with it, keeping the original beside it).
    header_rebuilt: bool = False
    # Ids of entries whose parent was nowhere in the file, now hung on the entry before them
    # (an export marks the gap there).
    dangling: set[str] = field(default_factory=set)
    # The file's bytes, for a lazy load (``load(..., lazy=True)``) whose entries include
    # ``EntryRef``s: the manager builds what it needs from them, then lets them go.
    raw: bytes = b""


def ensure_dir(path: Path) -> None:
    """Create a sessions folder (and every missing parent) private to the user."""
    ensure_private_dir(path)


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


def _sync(fd: int) -> None:
    """Data (and the size it needs) to the disk; macOS's plain fsync is the closest it offers."""
    if hasattr(os, "fdatasync"):
        os.fdatasync(fd)
    else:  # pragma: no cover - macOS, Windows
        os.fsync(fd)


def _encode(lines: list[str]) -> bytes:
    text = "".join(line + "\n" for line in lines)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (undecodable input): the file stays UTF-8
        return without_surrogates(text).encode("utf-8")


def append_lines(
    path: str | os.PathLike[str], lines: list[str], *, header: str | None = None, sync: bool = False
) -> None:
    """Append complete lines atomically with respect to other appenders of the same file.

    If the file ends in a torn line (no trailing newline) a newline goes first, so the new
    lines stay parseable and the fragment stays a separate, skippable line. ``header`` is
    written first when the file is empty (deleted or truncated behind our back). ``sync``
    waits until the disk has the lines.
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
            if sync:
                _sync(fd)
        finally:
            _unlock(fd)
    finally:
        os.close(fd)


def write_new(path: str | os.PathLike[str], lines: list[str], *, sync: bool = False) -> None:
    """Create a session file with its first lines; refuses to clobber an existing file.

    The lines go in one write, so a crash leaves no file, an empty one (loaded as a fresh
    session), or the header with a possibly torn last line. ``sync`` also makes the new
    name durable.
    """
    target = Path(path)
    new_folder = not target.parent.is_dir()
    ensure_dir(target.parent)
    fd = os.open(os.fspath(target), os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL, FILE_MODE)
    try:
        _lock(fd)
        try:
            _write_all(fd, _encode(lines))
            if sync:
                _sync(fd)
        finally:
            _unlock(fd)
    finally:
        os.close(fd)
    if sync:
        sync_folder(target.parent)
        if new_folder:  # the first session of this working directory: its folder is new too
            sync_folder(target.parent.parent)


def rewrite(path: str | os.PathLike[str], lines: list[str], *, keep_original_as: str) -> None:
    """Replace a session file's contents (a format upgrade), keeping the original beside it.

    The original is hard-linked (copied where links fail) to ``keep_original_as`` first, then
    the new lines go to a temporary file in the same folder that is renamed over the
    original, so a crash leaves either the old file or the new one, never half of each.
    """
    target = Path(path)
    backup = Path(keep_original_as)
    if not backup.exists():
        try:
            os.link(target, backup)
        except OSError:
            backup.write_bytes(read_capped(target, SESSION_FILE_LIMIT))
            os.chmod(backup, FILE_MODE)
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    fd = os.open(os.fspath(temporary), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    try:
        _write_all(fd, _encode(lines))
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(temporary, target)


def _describe(exc: Exception) -> str:
    if isinstance(exc, WireError):
        return f"invalid entry ({exc})"
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
    except WireError as exc:
        raise SessionFileError(f"the session header is invalid: {_describe(exc)}") from None


@contextmanager
def gc_paused() -> Iterator[None]:
    """Hold the cyclic garbage collector off while a session's entries are built.

    Loading allocates tens of thousands of container objects (models, their field sets,
    lists) that all stay alive. With the collector on, the collections those allocations
    trigger walk the growing heap again and again (about 45 % of the time to open a
    2,000-pair session, 60 % for 5,000 pairs). Entries hold no reference cycles, so there is
    nothing to collect. On the way out the new objects join the oldest generation (freeze,
    then unfreeze) instead of waiting in the youngest, whose first collection would walk
    all of them at once (15 ms for 2,000 pairs, 60 ms for 5,000); other young objects move
    along with them and are looked at by the next full collection, as usual. When the
    program has frozen objects of its own (``gc.freeze``) that step is skipped, so they stay
    frozen. Nested or concurrent pauses are harmless: only the outermost one, which found
    the collector on, turns it back on.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        if gc.get_freeze_count() == 0:
            gc.freeze()
            gc.unfreeze()
        gc.enable()


def load(path: str | os.PathLike[str], *, require_header: bool = True, lazy: bool = False) -> LoadedSession:
    """Read a session file, keeping every good line and reporting every bad one.

    An empty file yields ``LoadedSession(header=None, empty=True)``: nothing to lose, the
    caller may start a session in it. A missing or invalid header raises
    ``SessionFileError`` with the reason, since appending to such a file is unsafe; readers
    that only show a file (the HTML export) pass ``require_header=False`` and get the
    entries anyway, with the header line reported like any other bad line.

    ``lazy`` indexes the lines instead of building them (``_index_entries``): the entries
    are then ``EntryRef``s wherever a line's id, parent and type could be read at a glance,
    and ``raw`` holds the file's bytes. A file that must be upgraded is built whole as before.
    """
    try:
        raw = read_capped(path, SESSION_FILE_LIMIT)
    except FileTooLargeError as exc:
        raise SessionFileError(
            f"session file {os.fspath(path)} is {exc.strerror}, too large to load; start a new session "
            "(its entries stay readable in the file)"
        ) from None
    except OSError as exc:
        raise SessionFileError(f"cannot read session file {os.fspath(path)}: {exc.strerror or exc}") from None
    if not raw.strip():
        return LoadedSession(header=None, empty=True)
    header_line, pos, number = _header_line(raw)
    try:
        header = parse_header(header_line)
    except SessionFileError as exc:
        result = LoadedSession(header=None)
        with gc_paused():
            _load_entries(raw, 0, 1, result)  # the "header" line is reported as a bad entry
        if not require_header:
            return result
        if not result.entries:  # no entry either: this is not a session file at all
            raise SessionFileError(f"{os.fspath(path)} is not a usable session file: {exc}") from None
        # Entries without their header (the first line lost or damaged): keep them all
        # under a new header rather than refusing the conversation.
        result.header = _rebuilt_header(path, result.entries)
        result.header_rebuilt = True
        result.errors.insert(0, f"line {number - 1}: no session header ({exc}); made a new one")
        return result
    result = LoadedSession(header=header)
    with gc_paused():
        raw_header = json.loads(header_line)
        version = header_version(raw_header)
        if version > SESSION_VERSION and require_header:
            # Entries of this format appended to a newer one could spoil it for the Wolli
            # (or pi) that wrote it; readers that only show a file still read what they can.
            raise SessionFileError(
                f"{os.fspath(path)} was written in session format {version}, newer than this Wolli's "
                f"({SESSION_VERSION}); open it with the newer version, or start a new session")
        if version < SESSION_VERSION:  # pi's v1/v2: upgraded here, rewritten by the manager
            raw, pos = _migrated(raw, pos, raw_header), 0
            result.header = SessionHeader.model_validate(raw_header)
            result.migrated_from = version
            _load_entries(raw, pos, number, result)
        elif lazy:
            _index_entries(raw, pos, number, result)
            result.raw = raw
        else:
            _load_entries(raw, pos, number, result)
    return result


def _rebuilt_header(path: str | os.PathLike[str], entries: list[Any]) -> SessionHeader:
    """A header for entries whose own was lost: the id from the file name when it has one
    (``<time>_<uuid>.jsonl``), the time of the first entry, the current folder."""
    import uuid

    stem = Path(path).name.removesuffix(".jsonl")
    _, _, tail = stem.partition("_")
    try:
        session_id = str(uuid.UUID(tail))
    except ValueError:
        session_id = str(uuid.uuid4())
    return SessionHeader(id=session_id, cwd=os.getcwd(), timestamp=entries[0].timestamp)


def _header_line(raw: bytes) -> tuple[bytes, int, int]:
    """The first non-blank line, the offset after it and the number of the line after it.

    When no terminated line holds anything, the unterminated rest is the header (torn while
    being written) and nothing follows it.
    """
    pos, number, size = 0, 1, len(raw)
    while pos < size:
        end = raw.find(b"\n", pos)
        if end < 0:
            break
        line = raw[pos:end]
        pos, number = end + 1, number + 1
        if line.strip():
            return line, pos, number
    return raw[pos:], size, number


def _load_entries(raw: bytes, pos: int, number: int, result: LoadedSession) -> None:
    """Validate the entry lines from ``pos`` on (``number``: the 1-based line number there).

    Each line goes straight from its JSON bytes to its entry class, which is as fast as one
    call over the whole file joined into a JSON array, and needs no copy of the file: lines
    are sliced one at a time, each held only while it is validated. Only a line the
    validator refuses gets the careful look that keeps what it can and says what was wrong,
    so one damaged line no longer sends the whole file down the slow path. Duplicate ids
    are reported after every unreadable line, as before.
    """
    entries, seen, duplicates = result.entries, set(), []
    loads = json.loads
    size = len(raw)
    while pos < size:
        end = raw.find(b"\n", pos)
        torn = end < 0  # the last line has no newline: possibly cut off mid-write
        if torn:
            end = size
        line = raw[pos:end]
        if line.strip():
            try:
                entry = parse_entry(loads(line))
            except Exception:
                entry = parse_line_carefully(line, number, torn, result)
            if entry is not None:
                if entry.id in seen:
                    duplicates.append(f"line {number}: duplicate entry id {entry.id} skipped")
                    result.bad_lines.append(number)
                else:
                    parent = entry.parent_id
                    if parent is not None and parent not in seen and parent not in result.skipped_parents:
                        _attach_dangling(entry, entries, number, result)
                    seen.add(entry.id)
                    entries.append(entry)
        pos, number = end + 1, number + 1
    result.errors.extend(duplicates)
    if result.skipped_parents:
        _reattach_orphans(result)


def entry_from_line(line: bytes) -> Any:
    """One entry line's entry object (raises on anything invalid): how every line is built."""
    return parse_entry(json.loads(line))


# json.loads's own C scanner (typeshed types make_scanner's argument oddly)
_scan_value: Callable[[str, int], tuple[Any, int]] = json.scanner.make_scanner(cast(Any, json.JSONDecoder()))


def entry_from_span(raw: bytes, start: int, end: int) -> Any:
    """``entry_from_line(raw[start:end])`` for an indexed line (it starts with ``{"type":``),
    without ``json.loads``'s per-call detours (encoding sniffing, two whitespace matches,
    the decoder's Python layers): ~1/3 less time per line when the context is built on open.
    The line is decoded as ``json.loads`` decodes it and scanned as one value; anything but
    exactly one value filling the line goes through ``entry_from_line`` for its verdict.
    """
    text = raw[start:end].decode("utf-8", "surrogatepass")
    try:
        data, stop = _scan_value(text, 0)
    except (StopIteration, ValueError, RecursionError):
        stop = -1
    if stop != len(text):
        return entry_from_line(raw[start:end])
    return parse_entry(data)


# The start of an entry line as Wolli (and pi) write it: type, id and parent first, no
# escapes in any of them. A line that starts otherwise is validated at once instead.
_ENTRY_START = re.compile(rb'\{"type":"([a-z_]+)","id":"([^"\\]+)","parentId":(?:null|"([^"\\]*)")[,}]')
_KNOWN_TYPES_BYTES: dict[bytes, str] = {str(kind).encode(): str(kind) for kind in KNOWN_ENTRY_TYPES}


def _index_entries(raw: bytes, pos: int, number: int, result: LoadedSession) -> None:
    """``_load_entries`` without building the entries: the tree, errors and order it gives.

    A complete line that starts like an entry (``_ENTRY_START``, a known type) becomes an
    ``EntryRef``: its id, parent, type and offsets, nothing validated yet (``EntryStore``
    validates it when it is built). Every other line, and the last line when it has no
    newline (possibly torn), goes through the validator at once, exactly as in
    ``_load_entries``. A duplicate id whose first line was only indexed has that line
    validated on the spot: a damaged first line is skipped and the second one kept, as the
    eager loader does.
    """
    entries, duplicates = result.entries, []
    seen: dict[str, Any] = {}
    validate = entry_from_line
    match = _ENTRY_START.match
    known = _KNOWN_TYPES_BYTES
    size = len(raw)
    while pos < size:
        end = raw.find(b"\n", pos)
        torn = end < 0
        if torn:
            end = size
        found = None if torn else match(raw, pos, end)
        entry: Any = None
        kind = known.get(found[1]) if found is not None else None
        if kind is not None:
            assert found is not None
            parent = found[3]
            entry = EntryRef(found[2].decode(), parent.decode() if parent is not None else None, kind, pos, end, number)
        else:
            line = raw[pos:end]
            if line.strip():
                try:
                    entry = validate(line)
                except Exception:
                    entry = parse_line_carefully(line, number, torn, result)
        if entry is not None and entry.id in seen and type(entry) is EntryRef and not _checks_out(raw, entry, result):
            entry = None  # a damaged line under a known id: reported as damaged, not as a duplicate
        if entry is not None:
            earlier = seen.get(entry.id)
            if earlier is not None and type(earlier) is EntryRef and not _checks_out(raw, earlier, result):
                entries.remove(earlier)
                del seen[entry.id]
                earlier = None
            if earlier is not None:
                duplicates.append(f"line {number}: duplicate entry id {entry.id} skipped")
                result.bad_lines.append(number)
            else:
                parent_id = entry.parent_id
                if parent_id is not None and parent_id not in seen and parent_id not in result.skipped_parents:
                    # The entry before it must be a good one: check an indexed one now.
                    while entries and type(entries[-1]) is EntryRef and not _checks_out(raw, entries[-1], result):
                        del seen[entries.pop().id]
                    _attach_dangling(entry, entries, number, result)
                seen[entry.id] = entry
                entries.append(entry)
        pos, number = end + 1, number + 1
    result.errors.extend(duplicates)
    if result.skipped_parents:
        _reattach_orphans(result)


def _checks_out(raw: bytes, ref: Any, result: LoadedSession) -> bool:
    """Validate an indexed line now; a damaged one is reported as skipped (False)."""
    line = raw[ref.start : ref.end]
    try:
        entry_from_line(line)
        return True
    except Exception:
        return parse_line_carefully(line, ref.number, False, result) is not None


def _migrated(raw: bytes, pos: int, raw_header: dict[str, Any]) -> bytes:
    """The entry lines of a pi v1/v2 file upgraded to v3 (see ``migrate``), line for line.

    Lines that are not JSON objects stay as they are, so the ordinary loader reports them
    under their own line numbers.
    """
    lines = raw[pos:].split(b"\n")
    objects: list[tuple[int, dict[str, Any]]] = []
    for index, line in enumerate(lines):
        try:
            data = json.loads(line) if line.strip() else None
        except ValueError:
            continue
        if isinstance(data, dict):
            objects.append((index, data))
    migrate(raw_header, [data for _, data in objects])
    for index, data in objects:
        lines[index] = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return b"\n".join(lines)


def _attach_dangling(entry: SessionEntry, before: list[Any], number: int, result: LoadedSession) -> None:
    """An entry whose parent is nowhere in the file (lost with a damaged part, or written by
    a tool that got it wrong) hangs on the entry before it: the history up to it stays one
    branch instead of being cut off there."""
    previous = before[-1].id if before else None
    result.errors.append(
        f"line {number}: entry {entry.id} names a parent {entry.parent_id} that is not in the file; "
        + (f"attached it to the entry before it ({previous})" if previous else "made it the first entry")
    )
    result.dangling.add(entry.id)
    entry.parent_id = previous


def _reattach_orphans(result: LoadedSession) -> None:
    """Children of skipped lines take the nearest surviving ancestor as their parent."""
    skipped = result.skipped_parents
    for entry in result.entries:
        parent, hops = entry.parent_id, 0
        while parent in skipped and hops <= len(skipped):
            parent, hops = skipped[parent], hops + 1
        if parent != entry.parent_id:
            entry.parent_id = parent


def parse_line_carefully(line: bytes, number: int, torn: bool, result: LoadedSession) -> object:
    """A line the fast validator refused: parse it step by step, to keep it or say why not."""
    try:
        data = json.loads(line)
    except Exception as exc:
        _report(None, exc, number, torn, result)
        return None
    return _entry_or_report(data, number, torn, result)


def _entry_or_report(data: object, number: int, torn: bool, result: LoadedSession) -> object:
    """Validate one parsed line into its entry, or record why it was skipped."""
    try:
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        return parse_entry(data)
    except Exception as exc:
        _report(data, exc, number, torn, result)
        return None


def _report(data: object, exc: Exception, number: int, torn: bool, result: LoadedSession) -> None:
    """Record a skipped line: its number, why, and (if its id survives) its place in the tree."""
    reason = _describe(exc)
    if isinstance(data, dict) and isinstance(data.get("id"), str):
        parent = data.get("parentId")
        result.skipped_parents[data["id"]] = parent if isinstance(parent, str) else None
        if data.get("type") not in KNOWN_ENTRY_TYPES:
            reason = f"unknown entry type {data.get('type')!r} skipped (written by a newer Wolli?)"
    if torn:
        reason = f"torn last line ignored: {reason}"
    result.errors.append(f"line {number}: {reason}")
    result.bad_lines.append(number)
