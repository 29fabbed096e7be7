"""The Environment seam: where the built-in tools' reads, writes and commands land.

Every built-in tool takes one :class:`Environment` instead of touching the disk or spawning
processes itself, so an extension can point the tools at a sandbox or a remote machine by
wrapping or replacing a few methods (``dataclasses.replace``-style copies via
:meth:`Environment.derive`). :func:`create_host_environment` is the unconfined local one.

The dependency runs one way: this module builds on ``process.py`` (the low-level shell and
process-tree machinery, which knows nothing of environments) and re-exports its
:class:`ExecOptions` and :class:`ExecResult`, the types of :meth:`Environment.exec`.
"""

from __future__ import annotations

import copy
import os
import stat as stat_module

from ..base.daemon_threads import run_blocking
from ..base.records import record
from ..base.safe_files import read_capped, write_regular
from .exec_records import ExecOptions, ExecResult

# The most :meth:`Environment.read_file` reads of one file on this machine (tools check the
# size first and say what to do instead; this holds for files whose size lies, like /proc).
FILE_READ_LIMIT = 64 * 1024 * 1024

__all__ = [
    "DirEntry", "Environment", "ExecOptions", "ExecResult", "FileStat", "create_host_environment",
]


@record(slots=True)
class FileStat:
    size: int
    mtime: float
    is_file: bool
    is_dir: bool
    is_symlink: bool
    mode: int = 0


@record(slots=True)
class DirEntry:
    name: str
    is_file: bool
    is_dir: bool
    is_symlink: bool


@record
class Environment:
    """A run target. Override any member with :meth:`derive` to delegate it elsewhere."""

    id: str
    cwd: str
    shell_path: str | None = None

    # ------------------------------------------------------------------ paths

    def resolve_path(self, path: str) -> str:
        """Absolute path for a tool argument: strips a leading ``@``, expands ``~``."""
        path = path.strip()
        if path.startswith("@"):
            path = path[1:]
        if path == "~" or path.startswith("~/"):
            path = os.path.expanduser(path)
        return os.path.normpath(os.path.join(self.cwd, path))

    # ------------------------------------------------------------------ files

    # The host's file operations run in daemon threads (``run_blocking``): a call stuck in
    # the kernel is abandoned on abort instead of holding the process at exit. Reads and
    # writes take regular files only (a FIFO, /dev/zero or a tty is refused at the open).

    async def read_file(self, path: str) -> bytes:
        return await run_blocking(read_capped, path, FILE_READ_LIMIT)

    async def write_file(self, path: str, data: bytes | str) -> None:
        payload = data.encode("utf-8") if isinstance(data, str) else data
        await run_blocking(write_regular, path, payload)

    async def mkdir(self, path: str, parents: bool = True) -> None:
        if parents:
            await run_blocking(os.makedirs, path, exist_ok=True)
        else:
            await run_blocking(os.mkdir, path)

    async def access(self, path: str, mode: str = "r") -> bool:
        flags = {"r": os.R_OK, "w": os.W_OK, "x": os.X_OK}
        wanted = 0
        for char in mode:
            wanted |= flags.get(char, 0)
        return os.access(path, wanted or os.F_OK)

    async def exists(self, path: str) -> bool:
        return os.path.exists(path)

    async def stat(self, path: str) -> FileStat:
        st = os.stat(path)
        is_link = os.path.islink(path)
        return FileStat(
            size=st.st_size,
            mtime=st.st_mtime,
            is_file=stat_module.S_ISREG(st.st_mode),
            is_dir=stat_module.S_ISDIR(st.st_mode),
            is_symlink=is_link,
            mode=st.st_mode,
        )

    async def readdir(self, path: str) -> list[DirEntry]:
        def scan() -> list[DirEntry]:
            out = []
            with os.scandir(path) as it:
                for entry in it:
                    try:
                        out.append(
                            DirEntry(entry.name, entry.is_file(), entry.is_dir(), entry.is_symlink())
                        )
                    except OSError:
                        out.append(DirEntry(entry.name, False, False, False))
            return out

        return await run_blocking(scan)

    def detect_image_mime_type(self, data: bytes) -> str | None:
        """The image type from magic bytes (PNG, JPEG, GIF, WebP), else None."""
        from .images import image_mime_type

        return image_mime_type(data)

    # ------------------------------------------------------------------ processes

    async def exec(self, command: str, cwd: str | None = None, options: ExecOptions | None = None) -> ExecResult:
        """Run ``command`` through the shell in its own process group (see ``process.py``)."""
        from .process import run_shell_command  # the process machinery loads with the first command

        return await run_shell_command(command, cwd or self.cwd, options or ExecOptions(), self.shell_path)

    # ------------------------------------------------------------------ composition

    def derive(self, **overrides: object) -> Environment:
        """A copy with some members replaced, e.g. ``env.derive(exec=my_exec)``.

        Replacements are plain callables with the method's arguments (no ``self``); the
        members not named keep delegating to this environment.
        """
        clone = copy.copy(self)
        for name, value in overrides.items():
            if not hasattr(clone, name):
                raise AttributeError(f"Environment has no member {name!r}")
            setattr(clone, name, value)
        return clone


def create_host_environment(cwd: str, shell_path: str | None = None) -> Environment:
    return Environment(id="host", cwd=os.path.abspath(cwd), shell_path=shell_path)
