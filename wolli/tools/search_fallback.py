"""What grep and find share: locating rg/fd, running them, and the pure-Python walker.

The tools prefer ripgrep and fd (fast, parallel walkers) and fall back to walking the tree
through the :class:`Environment` when the binary is missing, so a machine without them,
or a sandboxed environment, still gets the same tool. The walker reproduces what the
binaries skip (see :mod:`wolli.tools.gitignore`): ignored paths, anything named ``.git``,
and symlinks are not descended into; hidden files are included. Siblings are visited in
byte order of their names, which is the order ``rg --sort path`` reports files in.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from ..ai.abort import AbortController, AbortError, AbortSignal
from .environment import DirEntry, Environment, ExecOptions, FileStat
from .gitignore import IgnoreFile, IgnoreGlobals, IgnoreLayer, is_ignored
from .truncate import DEFAULT_MAX_BYTES, format_size, truncate_head

# Tests (and users without trust in the binaries) force the Python walker with this switch.
FORCE_FALLBACK = False

# Exit statuses of a shell that could not find or run the command (a sandbox without it).
_NOT_FOUND = 127
_NOT_EXECUTABLE = 126


def find_ripgrep() -> str | None:
    """Path of ``rg`` on PATH (looked up on every call so PATH changes apply)."""
    return None if FORCE_FALLBACK else shutil.which("rg")


def find_fd() -> str | None:
    """Path of ``fd`` (``fdfind`` on Debian and Ubuntu) on PATH."""
    if FORCE_FALLBACK:
        return None
    return shutil.which("fd") or shutil.which("fdfind")


def check_abort(signal: AbortSignal | None) -> None:
    if signal is not None and getattr(signal, "aborted", False):
        raise AbortError(getattr(signal, "reason", None))


# --------------------------------------------------------------------------- roots


@dataclass(slots=True)
class SearchRoot:
    shown: str  # the path as the model gave it
    abs_path: str
    is_dir: bool
    stat: FileStat | None = None


async def resolve_root(env: Environment, path: str | None) -> SearchRoot:
    """The search root for a tool's ``path`` argument, or a clear error."""
    shown = path if path and path.strip() else "."
    abs_path = env.resolve_path(shown)
    try:
        st = await env.stat(abs_path)
    except (FileNotFoundError, NotADirectoryError):
        raise FileNotFoundError(
            f"Path not found: {shown} (resolved to {abs_path}). Check the spelling, or list "
            "the parent directory with ls."
        ) from None
    except PermissionError:
        raise PermissionError(f"Permission denied: cannot access {shown} ({abs_path}).") from None
    return SearchRoot(shown, abs_path, st.is_dir, st)


def display_path(path: str) -> str:
    """A path for output: undecodable bytes (kept as surrogates) become U+FFFD."""
    try:
        path.encode("utf-8")
        return path
    except UnicodeEncodeError:
        return path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def tree_sort_key(rel: str) -> tuple[bytes, ...]:
    """Sort key giving a directory's contents right after it, siblings in byte order."""
    return tuple(os.fsencode(part) for part in rel.split("/"))


# --------------------------------------------------------------------------- binaries


async def run_binary(
    env: Environment,
    command: str,
    cwd: str,
    signal: AbortSignal | None,
    separator: bytes,
    on_record: Callable[[bytes], bool],
) -> int | None:
    """Run ``command``, feeding each ``separator``-terminated record to ``on_record``.

    ``on_record`` returns True to stop early (the process tree is killed). Returns the
    exit code, ``-1`` when stopped early, or None when the shell could not find the binary
    (the caller falls back to Python). Raises AbortError when ``signal`` fired.
    """
    stop = AbortController()
    combined = AbortSignal.any(signal, stop.signal)
    pending = bytearray()
    stopped = False

    def feed(chunk: bytes) -> None:
        nonlocal stopped
        if stopped:
            return
        pending.extend(chunk)
        start = 0
        while True:
            end = pending.find(separator, start)
            if end < 0:
                break
            record = bytes(pending[start:end])
            start = end + 1
            if on_record(record):
                stopped = True
                stop.abort("enough results")
                break
        del pending[:start]

    try:
        result = await env.exec(command, cwd, ExecOptions(signal=combined, on_data=feed))
    except OSError:  # no shell, or the environment cannot run commands: use the walker
        check_abort(signal)
        return None
    check_abort(signal)
    if stopped:
        return -1
    if pending:
        on_record(bytes(pending))
    if result.exit_code in (_NOT_FOUND, _NOT_EXECUTABLE):
        return None
    return result.exit_code


# --------------------------------------------------------------------------- the walker


@dataclass(slots=True)
class WalkEntry:
    path: str  # relative to the root, '/'-separated
    abs_path: str
    is_dir: bool  # a real directory (a symlink to one is not descended into)
    is_file: bool  # a regular file, not a symlink
    is_symlink: bool


# Which per-directory ignore file each tool reads besides .gitignore and .ignore.
CUSTOM_IGNORE = {"rg": ".rgignore", "fd": ".fdignore"}


async def _read_text(env: Environment, path: str) -> str | None:
    try:
        data = await env.read_file(path)
    except Exception:  # an unreadable ignore file is skipped, as rg and fd do
        return None
    return data.decode("utf-8", "replace")


def _join(directory: str, name: str) -> str:
    return directory.rstrip("/") + "/" + name


async def _load_layer(
    env: Environment,
    directory: str,
    names: dict[str, DirEntry] | None,
    parent: IgnoreLayer | None,
    custom_name: str,
) -> IgnoreLayer | None:
    """The ignore layer of ``directory``; ``names`` is its listing (None: probe with exists)."""

    async def present(name: str) -> bool:
        if names is not None:
            return name in names
        return await env.exists(_join(directory, name))

    async def load(name: str) -> IgnoreFile | None:
        if not await present(name):
            return None
        text = await _read_text(env, _join(directory, name))
        if text is None:
            return None
        parsed = IgnoreFile.parse(directory, text)
        return parsed if parsed.rules else None

    has_git = await present(".git")
    custom = await load(custom_name)
    dot = await load(".ignore")
    git = await load(".gitignore")
    exclude = None
    if has_git:
        text = await _read_text(env, _join(directory, ".git/info/exclude"))
        parsed = IgnoreFile.parse(directory, text) if text else None
        exclude = parsed if parsed is not None and parsed.rules else None
    if not (has_git or custom or dot or git or exclude):
        return parent  # nothing here: keep the chain short
    return IgnoreLayer(directory, parent, custom, dot, git, exclude, has_git)


def _home_path(*parts: str) -> str:
    return os.path.join(os.path.expanduser("~"), *parts)


def _config_home() -> str:
    return os.environ.get("XDG_CONFIG_HOME") or _home_path(".config")


_EXCLUDES_FILE = re.compile(r'(?im)^\s*excludesfile\s*=\s*"?\s*(\S+?)\s*"?\s*$')


async def _git_global_excludes(env: Environment) -> str:
    """Where git's global excludes file is, the way the ``ignore`` crate looks it up."""
    for config in (_home_path(".gitconfig"), os.path.join(_config_home(), "git", "config")):
        text = await _read_text(env, config) if await env.exists(config) else None
        found = _EXCLUDES_FILE.search(text) if text else None
        if found:
            value = found.group(1)
            return os.path.expanduser(value) if value.startswith("~") else value
    return os.path.join(_config_home(), "git", "ignore")


async def load_globals(env: Environment, root: str, tool: str) -> IgnoreGlobals:
    """Ignore files outside the tree: git's global excludes; for fd also its own file."""
    result = IgnoreGlobals()
    path = await _git_global_excludes(env)
    if await env.exists(path):
        text = await _read_text(env, path)
        if text:
            parsed = IgnoreFile.parse(root, text)
            result.git_global = parsed if parsed.rules else None
    if tool == "fd":
        fd_ignore = os.path.join(_config_home(), "fd", "ignore")
        if await env.exists(fd_ignore):
            text = await _read_text(env, fd_ignore)
            if text:
                parsed = IgnoreFile.parse(root, text)
                if parsed.rules:
                    result.explicit.append(parsed)
    return result


async def _parent_layers(env: Environment, root: str, custom_name: str) -> IgnoreLayer | None:
    """Layers of the root's ancestors, outermost first, so their rules reach into the tree."""
    ancestors: list[str] = []
    current = root
    while True:
        parent = os.path.dirname(current)
        if parent == current:
            break
        ancestors.append(parent)
        current = parent
    layer: IgnoreLayer | None = None
    for directory in reversed(ancestors):
        layer = await _load_layer(env, directory, None, layer, custom_name)
    return layer


async def walk_tree(
    env: Environment, root: str, tool: str, signal: AbortSignal | None = None
) -> AsyncIterator[WalkEntry]:
    """Every entry below ``root`` that ``tool`` ("rg" or "fd") would see, in tree order."""
    root = os.path.normpath(root)
    custom_name = CUSTOM_IGNORE[tool]
    loaded = await load_globals(env, root, tool)
    globals_ = None if loaded.git_global is None and not loaded.explicit else loaded
    parents = await _parent_layers(env, root, custom_name)

    async def visit(directory: str, prefix: str, parent: IgnoreLayer | None) -> AsyncIterator[WalkEntry]:
        check_abort(signal)
        try:
            entries = await env.readdir(directory)
        except OSError:  # unreadable directories are skipped silently, like rg --no-messages
            return
        names = {entry.name: entry for entry in entries}
        layer = await _load_layer(env, directory, names, parent, custom_name)
        matcher = layer if layer is not None else IgnoreLayer(directory) if globals_ is not None else None
        for name in sorted(names, key=os.fsencode):
            if name == ".git":
                continue
            entry = names[name]
            abs_path = _join(directory, name)
            real_dir = entry.is_dir and not entry.is_symlink
            if matcher is not None and is_ignored(matcher, abs_path, real_dir, globals_):
                continue
            rel = prefix + name
            yield WalkEntry(rel, abs_path, real_dir, entry.is_file and not entry.is_symlink, entry.is_symlink)
            if real_dir:
                async for child in visit(abs_path, rel + "/", layer):
                    yield child

    async for item in visit(root, "", parents):
        yield item


# --------------------------------------------------------------------------- output


def finish_output(lines: list[str], notices: list[str]) -> tuple[str, bool]:
    """Join result lines, cap them at 50KB (whole lines) and append the notices."""
    body = "\n".join(lines)
    cut = truncate_head(body, max_lines=len(lines) + 1, max_bytes=DEFAULT_MAX_BYTES)
    notes = list(notices)
    if cut.truncated:
        notes.insert(
            0,
            f"[Output truncated at {format_size(DEFAULT_MAX_BYTES)}: showing {cut.output_lines} of "
            f"{cut.total_lines} lines. Narrow the path or refine the pattern]",
        )
    text = cut.content
    if notes:
        text = text + "\n\n" + "\n".join(notes)
    return text, cut.truncated
