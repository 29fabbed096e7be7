"""Path patterns (``Edit(src/**)``, ``Read(~/.ssh/**)``) and the paths tool calls touch.

Patterns follow gitignore, anchored the way Claude Code anchors them:

==============  ==========================================  ======================
pattern         means                                       example
==============  ==========================================  ======================
``//path``      an absolute path                            ``Read(//etc/**)``
``~/path``      a path in your home folder                  ``Read(~/.ssh/**)``
``/path``       a path from the project's root              ``Edit(/src/**)``
``./path``      a path from the working directory           ``Edit(./docs/*.md)``
``dir/name``    from the working directory (has a ``/``)    ``Edit(src/**)``
``name``        that name at any depth below it             ``Read(.env)``
==============  ==========================================  ======================

``*`` and ``?`` stay inside one path component, ``**`` spans folders, ``[...]`` and
``{a,b}`` work, ``\\`` escapes. As in gitignore, a pattern that matches a folder matches
everything inside it (``Read(secrets)`` covers ``secrets/key.pem``).

Tool paths are made absolute the way the tools do it (``~`` expanded, relative to the
working directory, ``..`` folded). A deny or ask rule hits when the path as written *or*
the path with symbolic links resolved matches; an allow rule looks at the resolved path
only (what is really read or written), so a link inside the project cannot carry an
allowed edit outside it. Anchors (the working directory, the root, the home folder) count
both as written and resolved.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import lru_cache

from ..tools.gitignore import translate_glob

_GLOB_CHARS = frozenset("*?[{")


@dataclass(frozen=True)
class Where:
    """The folders patterns are read against."""

    cwd: str  # the session's working directory
    root: str  # the project's root (``/path`` patterns)
    home: str

    @classmethod
    def here(cls, cwd: str, root: str | None = None) -> Where:
        return cls(os.path.abspath(cwd), os.path.abspath(root or cwd), os.path.expanduser("~"))

    def resolved(self) -> Where:
        """The same folders with links resolved (macOS's /tmp is /private/tmp)."""
        return Where(_resolved(self.cwd), _resolved(self.root), _resolved(self.home))


@dataclass(frozen=True)
class PathPattern:
    source: str
    regex: re.Pattern[str]
    # The folder every match lies in (the literal part before the first wildcard), and
    # whether the pattern can match at any depth below it (``name`` patterns).
    base: str
    any_depth: bool

    def matches(self, path: str) -> bool:
        return self.regex.fullmatch(path) is not None


def absolute_glob(specifier: str, where: Where) -> tuple[str, bool]:
    """The pattern as an absolute glob, and whether it matches at any depth."""
    text = specifier.strip()
    if text.startswith("//") and not text.strip("/"):
        return "/", False  # the root folder itself
    directory = text.endswith("/") and len(text) > 1
    text = text.rstrip("/") if directory else text
    if text in (".", "./", ""):
        glob, any_depth = where.cwd, False
    elif text.startswith("//"):
        glob, any_depth = "/" + text.lstrip("/"), False
    elif text == "~" or text.startswith("~/"):
        glob, any_depth = where.home.rstrip("/") + text[1:], False
    elif text.startswith("/"):
        glob, any_depth = where.root.rstrip("/") + text, False
    elif text.startswith("./"):
        glob, any_depth = where.cwd.rstrip("/") + text[1:], False
    elif "/" in text:
        glob, any_depth = where.cwd.rstrip("/") + "/" + text, False
    else:
        glob, any_depth = where.cwd.rstrip("/") + "/**/" + text, True
    return (_fold_dots(glob) or "/"), any_depth


def _fold_dots(glob: str) -> str:
    """``.`` and ``..`` folded in the literal part of a glob, as tool paths are folded
    (``Read(../secrets/**)`` must meet ``/work/secrets/key``); after a wildcard they stay."""
    folded: list[str] = []
    parts = glob.split("/")
    for index, part in enumerate(parts):
        if any(c in _GLOB_CHARS or c == "\\" for c in part):
            return "/".join(folded + parts[index:])
        if part == "." and index:
            continue
        if part == ".." and index:
            if len(folded) > 1:
                folded.pop()
            continue
        folded.append(part)
    return "/".join(folded)


@lru_cache(maxsize=2048)
def compile_path_pattern(specifier: str, where: Where) -> PathPattern:
    glob, any_depth = absolute_glob(specifier, where)
    parts = glob.split("/")
    fixed: list[str] = []
    for part in parts:
        if any(c in _GLOB_CHARS or c == "\\" for c in part):
            break
        fixed.append(part)
    base = "/".join(fixed[:len(parts) - 1] if len(fixed) == len(parts) else fixed) or "/"
    # The glob, or anything inside what it matches (gitignore: a matched folder takes its contents).
    source = translate_glob(glob.lstrip("/"))
    regex = re.compile("/" + source + r"(?:/.*)?" if source else "/.*", re.DOTALL)
    return PathPattern(specifier, regex, os.path.normpath(base), any_depth)


def absolute(path: str, cwd: str) -> str:
    """A tool's path argument as the tool reads it (``@`` and ``~`` handled, ``..`` folded)."""
    text = path.strip()
    if text.startswith("@"):
        text = text[1:]
    if text == "~" or text.startswith("~/"):
        text = os.path.expanduser(text)
    return os.path.normpath(os.path.join(cwd, text))


def _resolved(path: str) -> str:
    # Never cached: the model may turn a file into a link between two calls.
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return path


def spellings(path: str) -> tuple[str, ...]:
    """The path as written and, when different, with its links resolved."""
    resolved = _resolved(path)
    return (path,) if resolved == path else (path, resolved)


def hits(pattern: PathPattern, path: str) -> bool:
    """Deny/ask: either spelling of ``path`` matches."""
    return any(pattern.matches(p) for p in spellings(path))


def allows(pattern: PathPattern, path: str) -> bool:
    """Allow: the path with its links resolved matches (what is really touched)."""
    return pattern.matches(spellings(path)[-1])


def walk_reaches(pattern: PathPattern, root: str) -> bool:
    """Whether a recursive search from ``root`` may read what ``pattern`` names: the
    pattern's fixed folder lies inside ``root`` (patterns of any depth excepted: they
    would stop every search, see docs/permissions.md)."""
    if pattern.any_depth:
        return False
    for spelled in spellings(root):
        prefix = spelled.rstrip("/") + "/"
        if pattern.base.startswith(prefix) or pattern.base == spelled:
            return True
    return False


def inside(path: str | tuple[str, ...], folder: str) -> bool:
    """Whether ``path`` (or every one of its spellings) is ``folder`` or lies in it; the
    folder counts as written and with links resolved."""
    spelled = spellings(path) if isinstance(path, str) else path
    folder = folder.rstrip("/") or "/"
    resolved_folder = _resolved(folder)
    prefixes = {f if f == "/" else f + "/" for f in (folder, resolved_folder)}
    for one in spelled:
        if not (one in (folder, resolved_folder) or any(one.startswith(p) for p in prefixes)):
            return False
    return True
